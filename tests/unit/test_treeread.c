/* A tree's sorted listings, walk and xattrs, on a real temp directory. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/str.h"
#include "tree/treeread.h"

struct fixture {
	char dir[64];
	int fd;
};

/* etc/{b,B,a}, usr/bin/sh, a link "lib" to usr (never followed), "z" a file. */
static void setup(struct fixture *f)
{
	char *cmd;

	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-treeread.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	cmd = xasprintf("set -e; cd %s; mkdir -p etc usr/bin; touch etc/b etc/B etc/a usr/bin/sh z;"
			"ln -s usr lib", f->dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	f->fd = open(f->dir, O_PATH | O_DIRECTORY);
	ck_assert_int_ge(f->fd, 0);
}

static void teardown(struct fixture *f)
{
	char *cmd = xasprintf("rm -rf %s", f->dir);

	close(f->fd);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

START_TEST(names_sorted_bytewise)
{
	struct fixture f;
	struct strv names = { 0 };
	char *j;
	int etc;

	setup(&f);
	strv_push(&names, "kept");
	ck_assert_int_eq(treeread_names(f.fd, &names), 0);
	j = strv_join(&names, " ");
	ck_assert_str_eq(j, "kept etc lib usr z");
	free(j);
	strv_release(&names);
	etc = openat(f.fd, "etc", O_PATH | O_DIRECTORY);
	ck_assert_int_eq(treeread_names(etc, &names), 0);
	j = strv_join(&names, " ");
	ck_assert_str_eq(j, "B a b");
	free(j);
	strv_release(&names);
	close(etc);
	teardown(&f);
}
END_TEST

struct visits {
	struct buf seen;
	const char *stop_at; /* tree path where visit returns -EXDEV */
};

static int visit(void *arg, int dirfd, const char *name, const char *rel, const struct stat *sb)
{
	struct visits *v = arg;
	struct stat again;

	/* The entry is reachable as `name` in `dirfd`, and `sb` is its lstat. */
	ck_assert_int_eq(fstatat(dirfd, name, &again, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_uint_eq(again.st_ino, sb->st_ino);
	buf_addf(&v->seen, "%s%s%s", v->seen.len ? " " : "", rel,
		 S_ISLNK(sb->st_mode) ? "@" : S_ISDIR(sb->st_mode) ? "/" : "");
	return v->stop_at && !strcmp(rel, v->stop_at) ? -EXDEV : 0;
}

/* Parents before children, siblings in bytewise order, links listed but not followed. */
START_TEST(walk_order)
{
	struct fixture f;
	struct visits v = { { 0 }, NULL };
	char *failed = NULL;

	setup(&f);
	ck_assert_int_eq(treeread_walk(f.fd, "", visit, &v, &failed), 0);
	ck_assert_str_eq(v.seen.p, "etc/ etc/B etc/a etc/b lib@ usr/ usr/bin/ usr/bin/sh z");
	ck_assert_ptr_null(failed);
	buf_release(&v.seen);
	teardown(&f);
}
END_TEST

/* A visit's non-zero return stops the walk there and is returned, with the path it stopped at. */
START_TEST(walk_stops)
{
	struct fixture f;
	struct visits v = { { 0 }, "usr/bin" };
	char *failed = NULL;
	int file;

	setup(&f);
	ck_assert_int_eq(treeread_walk(f.fd, "", visit, &v, &failed), -EXDEV);
	ck_assert_str_eq(v.seen.p, "etc/ etc/B etc/a etc/b lib@ usr/ usr/bin/");
	ck_assert_str_eq(failed, "usr/bin");
	free(failed);
	failed = NULL;
	buf_release(&v.seen);
	/* Not a directory: its own errno, at the path given. */
	file = openat(f.fd, "z", O_RDONLY);
	ck_assert_int_eq(treeread_walk(file, "z", visit, &v, &failed), -ENOTDIR);
	ck_assert_str_eq(failed, "z");
	ck_assert_uint_eq(v.seen.len, 0);
	close(file);
	free(failed);
	teardown(&f);
}
END_TEST

/* Extended attributes, sorted by name, of the entry itself; a missing entry is its errno. */
START_TEST(xattrs_read)
{
	struct fixture f;
	struct manifest m;
	struct manifest_entry *e;
	char *p;
	int etc;

	setup(&f);
	manifest_init(&m);
	p = xasprintf("%s/etc/a", f.dir);
	ck_assert_int_eq(setxattr(p, "user.zz", "2", 1, 0), 0);
	ck_assert_int_eq(setxattr(p, "user.aa", "one\0", 4, 0), 0);
	etc = openat(f.fd, "etc", O_PATH | O_DIRECTORY);
	e = manifest_add(&m, "etc/a");
	ck_assert_int_eq(treeread_xattrs(etc, "a", e), 0);
	ck_assert_uint_eq(e->n_xattrs, 2);
	ck_assert_str_eq(e->xattrs[0].name, "user.aa");
	ck_assert_uint_eq(e->xattrs[0].len, 4);
	ck_assert_mem_eq(e->xattrs[0].value, "one\0", 4);
	ck_assert_str_eq(e->xattrs[1].name, "user.zz");
	e = manifest_add(&m, "etc/b");
	ck_assert_int_eq(treeread_xattrs(etc, "b", e), 0);
	ck_assert_uint_eq(e->n_xattrs, 0);
	e = manifest_add(&m, "lib");
	ck_assert_int_eq(treeread_xattrs(f.fd, "lib", e), 0); /* the link's own: none */
	ck_assert_uint_eq(e->n_xattrs, 0);
	e = manifest_add(&m, "etc/gone");
	ck_assert_int_eq(treeread_xattrs(etc, "gone", e), -ENOENT);
	close(etc);
	free(p);
	manifest_release(&m);
	teardown(&f);
}
END_TEST

Suite *treeread_suite(void)
{
	Suite *s = suite_create("treeread");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, names_sorted_bytewise);
	tcase_add_test(tc, walk_order);
	tcase_add_test(tc, walk_stops);
	tcase_add_test(tc, xattrs_read);
	suite_add_tcase(s, tc);
	return s;
}
