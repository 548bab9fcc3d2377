/* The staging tree's start and what mkimage writes into it, in real temp directories. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/readfile.h"
#include "lib/str.h"
#include "tree/staging.h"

struct fixture {
	char dir[64];
	struct staging s;
	struct staging_writer w;
};

static void setup(struct fixture *f)
{
	int fd = open("/dev/null", O_WRONLY);

	memset(f, 0, sizeof(*f));
	dup2(fd, 2);
	close(fd);
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-stage.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	manifest_init(&f->s.manifest);
	f->w.rootfd = staging_init(&f->s, f->dir);
	ck_assert_int_ge(f->w.rootfd, 0);
	f->w.m = &f->s.manifest;
	f->w.mtime = 1700000000;
}

static void teardown(struct fixture *f)
{
	char *cmd = xasprintf("rm -rf %s", f->dir);

	close(f->w.rootfd);
	staging_release(&f->s);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

static char *tree_path(const struct fixture *f, const char *rel)
{
	return xasprintf("%s/%s", f->s.root, rel);
}

/* The tree is WORK/root, new and empty; the stage's files are named beside it. */
START_TEST(init_names_and_creates)
{
	struct fixture f;
	struct stat st;
	char *want;

	setup(&f);
	want = xasprintf("%s/root", f.dir);
	ck_assert_str_eq(f.s.root, want);
	free(want);
	want = xasprintf("%s/manifest", f.dir);
	ck_assert_str_eq(f.s.manifest_file, want);
	free(want);
	want = xasprintf("%s/multiarch-lint", f.dir);
	ck_assert_str_eq(f.s.lint_file, want);
	free(want);
	ck_assert_int_eq(stat(f.s.root, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(fstat(f.w.rootfd, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	teardown(&f);
}
END_TEST

START_TEST(init_fails_without_work_dir)
{
	struct staging s = { 0 };
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	close(fd);
	ck_assert_int_eq(staging_init(&s, "/nonexistent-mki/work"), -ENOENT);
	staging_release(&s);
	ck_assert_ptr_null(s.root);
	ck_assert_ptr_null(s.manifest_file);
}
END_TEST

/* mkdir -p records each new directory as 0:0 0755 at the writer's mtime, not those there. */
START_TEST(mkdirs_records_new_dirs)
{
	struct fixture f;
	struct manifest_entry *e;
	struct stat st;
	char *p;

	setup(&f);
	ck_assert_int_eq(mkdirat(f.w.rootfd, "var", 0700), 0);
	ck_assert_int_eq(staging_mkdirs(&f.w, "var/lib/dpkg"), 0);
	ck_assert_ptr_null(manifest_get(&f.s.manifest, "var"));
	e = manifest_get(&f.s.manifest, "var/lib/dpkg");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->type, MF_DIR);
	ck_assert_uint_eq(e->mode, 0755);
	ck_assert_uint_eq(e->uid, 0);
	ck_assert_int_eq(e->mtime, 1700000000);
	ck_assert_ptr_nonnull(manifest_get(&f.s.manifest, "var/lib"));
	ck_assert_uint_eq(f.s.manifest.n, 2);
	p = tree_path(&f, "var/lib/dpkg");
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	free(p);
	ck_assert_int_eq(staging_mkdirs(&f.w, "var/lib/dpkg"), 0); /* again: nothing new */
	ck_assert_uint_eq(f.s.manifest.n, 2);
	teardown(&f);
}
END_TEST

/* A non-directory on the way, even a link to a directory outside, is never followed. */
START_TEST(mkdirs_refuses_non_directory)
{
	struct fixture f;
	char *outside, *p;
	int fd;

	setup(&f);
	outside = xasprintf("%s/outside", f.dir);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	ck_assert_int_eq(symlinkat(outside, f.w.rootfd, "usr"), 0);
	fd = openat(f.w.rootfd, "etc", O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(staging_mkdirs(&f.w, "usr/lib/x"), -MKI_E_PACKAGE);
	ck_assert_int_eq(staging_mkdirs(&f.w, "etc/default"), -MKI_E_PACKAGE);
	p = xasprintf("%s/lib", outside);
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_uint_eq(f.s.manifest.n, 0);
	free(p);
	free(outside);
	teardown(&f);
}
END_TEST

/* The file lands whole with its mode and mtime, replaces what was there, and is recorded. */
START_TEST(write_file)
{
	struct fixture f;
	struct manifest_entry *e;
	struct buf b = { 0 };
	struct stat st;
	char *p;

	setup(&f);
	ck_assert_int_eq(staging_mkdirs(&f.w, "etc"), 0);
	ck_assert_int_eq(staging_write_file(&f.w, "etc/hostname", "old\n", 4, 0600), 0);
	ck_assert_int_eq(staging_write_file(&f.w, "etc/hostname", "board\n", 6, 0644), 0);
	p = tree_path(&f, "etc/hostname");
	ck_assert_int_eq(readfile_read(p, 100, &b, NULL), 0);
	ck_assert_str_eq(b.p, "board\n");
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(st.st_mtime, 1700000000);
	e = manifest_get(&f.s.manifest, "etc/hostname");
	ck_assert_int_eq(e->type, MF_REG);
	ck_assert_uint_eq(e->size, 6);
	ck_assert_uint_eq(e->mode, 0644);
	ck_assert_int_eq(e->mtime, 1700000000);
	free(p);
	p = tree_path(&f, "etc/hostname.mki-tmp");
	ck_assert_int_eq(access(p, F_OK), -1);
	free(p);
	buf_release(&b);
	teardown(&f);
}
END_TEST

/* A missing parent, or a parent reached through a link: refused, nothing written anywhere. */
START_TEST(write_file_refused)
{
	struct fixture f;
	char *outside, *p;

	setup(&f);
	outside = xasprintf("%s/outside", f.dir);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	ck_assert_int_eq(symlinkat(outside, f.w.rootfd, "etc"), 0);
	ck_assert_int_lt(staging_write_file(&f.w, "etc/passwd", "x", 1, 0644), 0);
	ck_assert_int_eq(staging_write_file(&f.w, "var/lib/x", "x", 1, 0644), -ENOENT);
	p = xasprintf("%s/passwd", outside);
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_uint_eq(f.s.manifest.n, 0);
	free(p);
	free(outside);
	teardown(&f);
}
END_TEST

/* Owners are set while the system allows; the first refusal stops further tries. */
START_TEST(chown_while_allowed)
{
	struct fixture f;
	struct manifest_entry *e;
	struct stat st;
	char *p;

	setup(&f);
	f.w.can_chown = 1;
	ck_assert_int_eq(staging_write_file(&f.w, "file", "x", 1, 0644), 0);
	staging_chown(&f.w, f.w.rootfd, "file", 7, 8);
	p = tree_path(&f, "file");
	ck_assert_int_eq(stat(p, &st), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(f.w.can_chown, 1);
		ck_assert_uint_eq(st.st_uid, 7);
		ck_assert_uint_eq(st.st_gid, 8);
	} else {
		ck_assert_int_eq(f.w.can_chown, 0);
		ck_assert_uint_eq(st.st_uid, geteuid());
	}
	f.w.can_chown = 0;
	staging_chown(&f.w, f.w.rootfd, "file", 9, 9); /* not tried */
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_ne(st.st_uid, 9);
	e = staging_own_entry(&f.w, "dev", MF_DIR, 0755);
	ck_assert_str_eq(e->path, "dev");
	ck_assert_uint_eq(e->gid, 0);
	ck_assert_ptr_eq(manifest_get(&f.s.manifest, "dev"), e);
	free(p);
	teardown(&f);
}
END_TEST

Suite *staging_suite(void)
{
	Suite *s = suite_create("staging");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, init_names_and_creates);
	tcase_add_test(tc, init_fails_without_work_dir);
	tcase_add_test(tc, mkdirs_records_new_dirs);
	tcase_add_test(tc, mkdirs_refuses_non_directory);
	tcase_add_test(tc, write_file);
	tcase_add_test(tc, write_file_refused);
	tcase_add_test(tc, chown_while_allowed);
	suite_add_tcase(s, tc);
	return s;
}
