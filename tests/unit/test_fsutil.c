#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/str.h"

static int exists(const char *p)
{
	struct stat sb;

	return lstat(p, &sb) == 0;
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/*
 * A work directory is a "top" directory on ext4 (the flag placing its children in fresh block
 * groups), and a directory made apart in it has its mode, never replaces a name and leaves no
 * temporary name behind.
 */
START_TEST(work_dir_places_trees_apart)
{
	char tmp[] = "/var/tmp/mkimage-fsutil-XXXXXX", *w, *root, *cmd;
	struct statfs fs;
	struct stat sb;
	int lock, fd, flags;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	ck_assert_int_eq(fsutil_workdir_create(tmp, &w, &lock), 0);
	ck_assert_int_eq(statfs(w, &fs), 0);
	fd = open(w, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	if (fs.f_type == EXT4_SUPER_MAGIC) {
		ck_assert_int_eq(ioctl(fd, FS_IOC_GETFLAGS, &flags), 0);
		ck_assert(flags & FS_TOPDIR_FL);
	}
	close(fd);
	root = xasprintf("%s/root", w);
	ck_assert_int_eq(fsutil_mkdir_apart(root, 0750), 0);
	ck_assert_int_eq(lstat(root, &sb), 0);
	ck_assert(S_ISDIR(sb.st_mode));
	ck_assert_uint_eq(sb.st_mode & 07777, 0750);
	ck_assert_int_eq(fsutil_mkdir_apart(root, 0755), -EEXIST);
	ck_assert_uint_eq(count_entries(w), 2); /* the lock file and root */
	close(lock);
	cmd = xasprintf("rm -rf %s", tmp);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(root);
	free(w);
}
END_TEST

/* A held directory survives a sweep; one whose holder is gone is removed; a kept one stays. */
START_TEST(sweep_removes_only_abandoned_work_dirs)
{
	char tmp[] = "/tmp/mkimage-fsutil-XXXXXX", *a, *b, *c, *junk;
	int fa, fb, fc;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	ck_assert_int_eq(fsutil_workdir_create(tmp, &a, &fa), 0);
	ck_assert_int_eq(fsutil_workdir_create(tmp, &b, &fb), 0);
	ck_assert_int_eq(fsutil_workdir_create(tmp, &c, &fc), 0);
	junk = xasprintf("%s/mkimage.olddir", tmp); /* no lock file: an older mkimage's, left alone */
	ck_assert_int_eq(mkdir(junk, 0755), 0);
	ck_assert_int_eq(fsutil_mkdirs(b), 0);
	{
		char *deep = xasprintf("%s/root/usr/bin", b);

		ck_assert_int_eq(fsutil_mkdirs(deep), 0);
		free(deep);
	}
	ck_assert_int_eq(fsutil_workdir_sweep(tmp, a), 0); /* all three still held */
	close(fb);                                   /* b's build "died" */
	fsutil_workdir_keep(c, fc);                         /* c was kept with --keep-staging */
	ck_assert_int_eq(fsutil_workdir_sweep(tmp, a), 1);
	ck_assert(exists(a));
	ck_assert(!exists(b));
	ck_assert(exists(c));
	ck_assert(exists(junk));
	close(fa);
	ck_assert_int_eq(fsutil_workdir_sweep(tmp, "/nowhere"), 1); /* a's lock is free now */
	ck_assert(!exists(a));
	fsutil_remove_tree(tmp);
	free(a);
	free(b);
	free(c);
	free(junk);
}
END_TEST

Suite *fsutil_suite(void)
{
	Suite *s = suite_create("fsutil");
	TCase *tc = tcase_create("fsutil");

	tcase_add_test(tc, sweep_removes_only_abandoned_work_dirs);
	tcase_add_test(tc, work_dir_places_trees_apart);
	suite_add_tcase(s, tc);
	return s;
}
