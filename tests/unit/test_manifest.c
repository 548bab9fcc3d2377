#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/manifest.h"
#include "lib/manifest_internal.h"

START_TEST(add_get_remove)
{
	struct manifest m;
	char path[32];
	int i;

	manifest_init(&m);
	for (i = 0; i < 5000; i++) {
		snprintf(path, sizeof(path), "usr/share/f%d", i);
		manifest_add(&m, path)->size = (uint64_t)i;
	}
	ck_assert_uint_eq(m.n, 5000);
	ck_assert_uint_eq(manifest_get(&m, "usr/share/f4242")->size, 4242);
	ck_assert_ptr_eq(manifest_add(&m, "usr/share/f7"), manifest_get(&m, "usr/share/f7"));
	manifest_remove(&m, "usr/share/f7");
	ck_assert_ptr_null(manifest_get(&m, "usr/share/f7"));
	ck_assert_uint_eq(manifest_get(&m, "usr/share/f8")->size, 8);
	manifest_sort(&m);
	ck_assert_str_eq(m.v[0]->path, "usr/share/f0");
	ck_assert_uint_eq(manifest_get(&m, "usr/share/f4999")->size, 4999);
	manifest_release(&m);
}
END_TEST

/* A copy keeps what describes the file and leaves the target and package owners to its caller. */
START_TEST(add_copy)
{
	struct manifest m;
	struct manifest_entry *e, *c;

	manifest_init(&m);
	e = manifest_add(&m, "usr/bin/x");
	e->type = MF_REG;
	e->mode = 04755;
	e->uid = 7;
	e->gid = 8;
	e->mtime = 1700000000;
	e->size = 42;
	e->target = strdup("elsewhere");
	strv_push(&e->owners, "pkg");
	manifest_set_xattr(e, "security.capability", "\x01\x02", 2);
	c = manifest_add_copy(&m, "boot/x", e);
	e = manifest_get(&m, "usr/bin/x"); /* adding may move entries */
	ck_assert_str_eq(c->path, "boot/x");
	ck_assert_int_eq(c->type, MF_REG);
	ck_assert_uint_eq(c->mode, 04755);
	ck_assert_uint_eq(c->uid, 7);
	ck_assert_uint_eq(c->gid, 8);
	ck_assert_int_eq(c->mtime, 1700000000);
	ck_assert_uint_eq(c->size, 42);
	ck_assert_uint_eq(c->n_xattrs, 1);
	ck_assert_mem_eq(c->xattrs[0].value, "\x01\x02", 2);
	ck_assert_ptr_ne(c->xattrs[0].value, e->xattrs[0].value);
	ck_assert_ptr_null(c->target);
	ck_assert_uint_eq(c->owners.n, 0);
	manifest_release(&m);
}
END_TEST

START_TEST(normalize)
{
	char *p;

	p = manifest_normalize("./usr//lib/");
	ck_assert_str_eq(p, "usr/lib");
	free(p);
	p = manifest_normalize("/");
	ck_assert_str_eq(p, "");
	free(p);
	ck_assert_ptr_null(manifest_normalize("usr/../../etc"));
	ck_assert_ptr_null(manifest_normalize(".."));
	p = manifest_normalize("a/..b/c.");
	ck_assert_str_eq(p, "a/..b/c.");
	free(p);
}
END_TEST

START_TEST(save_load_roundtrip)
{
	struct manifest m, back;
	struct manifest_entry *e, *f;
	char file[] = "/tmp/mkimage-manifest-XXXXXX";
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	close(fd);
	manifest_init(&m);
	manifest_init(&back);
	e = manifest_add(&m, "");
	e->type = MF_DIR;
	e->mode = 0755;
	e = manifest_add(&m, "usr/bin/with space\tand%\xc3\xa9");
	e->type = MF_REG;
	e->mode = 04755;
	e->uid = 0;
	e->gid = 42;
	e->mtime = 1700000000;
	e->size = 12;
	strv_push(&e->owners, "libc6:armhf");
	strv_push(&e->owners, "libc6:armel");
	manifest_set_xattr(e, "security.capability", "\x01\x00\x00\x02", 4);
	e = manifest_add(&m, "dev/console");
	e->type = MF_CHR;
	e->major = 5;
	e->minor = 1;
	e = manifest_add(&m, "bin");
	e->type = MF_SYMLINK;
	e->target = strdup("usr/bin");
	ck_assert_int_eq(manifest_save(&m, file), 0);
	ck_assert_int_eq(manifest_load(&back, file), 0);
	ck_assert_uint_eq(back.n, 4);
	f = manifest_get(&back, "usr/bin/with space\tand%\xc3\xa9");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->mode, 04755);
	ck_assert_int_eq(f->gid, 42);
	ck_assert_int_eq(f->mtime, 1700000000);
	ck_assert_uint_eq(f->owners.n, 2);
	ck_assert_str_eq(f->owners.v[1], "libc6:armel");
	ck_assert_uint_eq(f->n_xattrs, 1);
	ck_assert_mem_eq(f->xattrs[0].value, "\x01\x00\x00\x02", 4);
	ck_assert_int_eq(manifest_get(&back, "dev/console")->minor, 1);
	ck_assert_str_eq(manifest_get(&back, "bin")->target, "usr/bin");
	ck_assert_int_eq(manifest_get(&back, "")->type, MF_DIR);
	manifest_release(&m);
	manifest_release(&back);
	unlink(file);
}
END_TEST

Suite *manifest_suite(void)
{
	Suite *s = suite_create("manifest");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, add_get_remove);
	tcase_add_test(tc, add_copy);
	tcase_add_test(tc, normalize);
	tcase_add_test(tc, save_load_roundtrip);
	suite_add_tcase(s, tc);
	return s;
}
