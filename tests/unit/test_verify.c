/* Two builds compared: their images byte for byte, then their trees for the first difference. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/readfile.h"
#include "lib/str.h"
#include "emit/verify.h"

struct fixture {
	char dir[64];
	struct staging a, b;
	char *img_a, *img_b;
};

static void put(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* Both trees hold etc/a ("same"), a link bin -> usr/bin; stderr goes to DIR/log. */
static void build(struct fixture *f, struct staging *s, const char *name)
{
	struct manifest_entry *e;
	char *p;

	s->root = xasprintf("%s/%s", f->dir, name);
	ck_assert_int_eq(mkdir(s->root, 0755), 0);
	p = xasprintf("%s/etc", s->root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	free(p);
	p = xasprintf("%s/etc/a", s->root);
	put(p, "same", 4);
	free(p);
	manifest_init(&s->manifest);
	e = manifest_add(&s->manifest, "");
	e->type = MF_DIR;
	e->mode = 0755;
	e = manifest_add(&s->manifest, "bin");
	e->type = MF_SYMLINK;
	e->target = xstrdup("usr/bin");
	e = manifest_add(&s->manifest, "etc");
	e->type = MF_DIR;
	e->mode = 0755;
	e = manifest_add(&s->manifest, "etc/a");
	e->type = MF_REG;
	e->mode = 0644;
	e->size = 4;
	e->mtime = 1700000000;
	manifest_set_xattr(e, "user.x", "1", 1);
}

static void setup(struct fixture *f)
{
	char *log;
	int fd;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-verify.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	log = xasprintf("%s/log", f->dir);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	close(fd);
	free(log);
	build(f, &f->a, "a");
	build(f, &f->b, "b");
	f->img_a = xasprintf("%s/a.img", f->dir);
	f->img_b = xasprintf("%s/b.img", f->dir);
}

static void teardown(struct fixture *f)
{
	char *cmd = xasprintf("rm -rf %s", f->dir);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(f->img_a);
	free(f->img_b);
	staging_release(&f->a);
	staging_release(&f->b);
}

static char *logged(const struct fixture *f)
{
	char *p = xasprintf("%s/log", f->dir);
	struct buf b = { 0 };

	ck_assert_int_eq(readfile_read(p, 1 << 20, &b, NULL), 0);
	free(p);
	return buf_detach(&b);
}

/* Images of `n` bytes, the second one's byte `at` changed (at < 0: identical). */
static void images(struct fixture *f, size_t n, long at)
{
	char *data = xcalloc(n, 1);

	put(f->img_a, data, n);
	if (at >= 0)
		data[at] = 1;
	put(f->img_b, data, n);
	free(data);
}

START_TEST(identical_images)
{
	struct fixture f;

	setup(&f);
	images(&f, 200000, -1);
	manifest_get(&f.b.manifest, "etc/a")->mode = 0600; /* the trees are not even looked at */
	ck_assert_int_eq(verify_builds(&f.a, f.img_a, &f.b, f.img_b), 0);
	teardown(&f);
}
END_TEST

/* The trees agree: the image writer is named, with the first differing byte and its block. */
START_TEST(image_writer_at_fault)
{
	struct fixture f;
	char *log;

	setup(&f);
	images(&f, 200000, 70000);
	ck_assert_int_eq(verify_builds(&f.a, f.img_a, &f.b, f.img_b), -MKI_E_IMAGE);
	log = logged(&f);
	ck_assert_ptr_nonnull(strstr(log, "not reproducible: the trees agree but the images differ "
					  "from byte 70000 (block 17 of 4 KiB): the image writer "
					  "is at fault"));
	free(log);
	teardown(&f);

	setup(&f);
	images(&f, 5000, -1);
	put(f.img_b, "", 0); /* one image shorter: it differs where it ends */
	ck_assert_int_eq(verify_builds(&f.a, f.img_a, &f.b, f.img_b), -MKI_E_IMAGE);
	log = logged(&f);
	ck_assert_ptr_nonnull(strstr(log, "differ from byte 0 (block 0 of 4 KiB)"));
	free(log);
	teardown(&f);
}
END_TEST

/* The first difference between the trees, field by field. */
static const struct {
	int change;
	const char *message;
} diffs[] = {
	{ 0, "not reproducible: '/etc/a' differs in its mode" },
	{ 1, "not reproducible: '/etc/a' differs in its owner" },
	{ 2, "not reproducible: '/etc/a' differs in its mtime" },
	{ 3, "not reproducible: '/etc/a' differs in its contents" },
	{ 4, "not reproducible: '/etc/a' differs in its xattrs" },
	{ 5, "not reproducible: '/bin' differs in its link target" },
	{ 6, "not reproducible: '/etc/b' exists only in the second build" },
	{ 7, "not reproducible: '/etc' differs in its type" },
};

START_TEST(tree_difference_named)
{
	struct fixture f;
	struct manifest_entry *e;
	char *log, *p;

	setup(&f);
	images(&f, 4096, 1);
	e = manifest_get(&f.b.manifest, "etc/a");
	switch (diffs[_i].change) {
	case 0: e->mode = 0600; break;
	case 1: e->gid = 4; break;
	case 2: e->mtime++; break;
	case 3:
		p = xasprintf("%s/etc/a", f.b.root);
		put(p, "diff", 4);
		free(p);
		break;
	case 4: e->xattrs[0].value[0] = '2'; break;
	case 5:
		e = manifest_get(&f.b.manifest, "bin");
		free(e->target);
		e->target = xstrdup("usr/sbin");
		break;
	case 6: manifest_add(&f.b.manifest, "etc/b")->type = MF_REG; break;
	case 7: manifest_get(&f.b.manifest, "etc")->type = MF_SYMLINK; break;
	}
	ck_assert_int_eq(verify_builds(&f.a, f.img_a, &f.b, f.img_b), -MKI_E_IMAGE);
	log = logged(&f);
	ck_assert_msg(strstr(log, diffs[_i].message), "log: %s", log);
	ck_assert_ptr_null(strstr(log, "image writer"));
	free(log);
	teardown(&f);
}
END_TEST

Suite *verify_suite(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, identical_images);
	tcase_add_test(tc, image_writer_at_fault);
	tcase_add_loop_test(tc, tree_difference_named, 0, sizeof(diffs) / sizeof(diffs[0]));
	suite_add_tcase(s, tc);
	return s;
}
