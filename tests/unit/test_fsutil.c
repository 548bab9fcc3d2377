#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "str.h"

static int exists(const char *p)
{
	struct stat sb;

	return lstat(p, &sb) == 0;
}

/* A held directory survives a sweep; one whose holder is gone is removed; a kept one stays. */
START_TEST(sweep_removes_only_abandoned_work_dirs)
{
	char tmp[] = "/tmp/mkimage-fsutil-XXXXXX", *a, *b, *c, *junk;
	int fa, fb, fc;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	ck_assert_int_eq(workdir_create(tmp, &a, &fa), 0);
	ck_assert_int_eq(workdir_create(tmp, &b, &fb), 0);
	ck_assert_int_eq(workdir_create(tmp, &c, &fc), 0);
	junk = xasprintf("%s/mkimage.olddir", tmp); /* no lock file: an older mkimage's, left alone */
	ck_assert_int_eq(mkdir(junk, 0755), 0);
	ck_assert_int_eq(make_dirs(b), 0);
	{
		char *deep = xasprintf("%s/root/usr/bin", b);

		ck_assert_int_eq(make_dirs(deep), 0);
		free(deep);
	}
	ck_assert_int_eq(workdir_sweep(tmp, a), 0); /* all three still held */
	close(fb);                                   /* b's build "died" */
	workdir_keep(c, fc);                         /* c was kept with --keep-staging */
	ck_assert_int_eq(workdir_sweep(tmp, a), 1);
	ck_assert(exists(a));
	ck_assert(!exists(b));
	ck_assert(exists(c));
	ck_assert(exists(junk));
	close(fa);
	ck_assert_int_eq(workdir_sweep(tmp, "/nowhere"), 1); /* a's lock is free now */
	ck_assert(!exists(a));
	remove_tree(tmp);
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
	suite_add_tcase(s, tc);
	return s;
}
