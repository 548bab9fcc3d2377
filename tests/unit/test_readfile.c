#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/readfile.h"

START_TEST(only_regular_files_within_the_bound)
{
	char dir[] = "/tmp/mki-readfile-XXXXXX", path[128];
	const char *kind = NULL;
	struct buf b = { 0 };
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	/* would block forever in open() or read() without the checks */
	ck_assert_int_eq(readfile_read(path, 100, &b, &kind), -EINVAL);
	ck_assert_str_eq(kind, "a FIFO");
	ck_assert_int_eq(readfile_read("/dev/zero", 100, &b, &kind), -EINVAL);
	ck_assert_str_eq(kind, "a character device");
	ck_assert_int_eq(readfile_read(dir, 100, &b, &kind), -EINVAL);
	ck_assert_str_eq(kind, "a directory");
	ck_assert_ptr_nonnull(strstr(readfile_why(-EINVAL, kind), "a directory, not a regular"));
	snprintf(path, sizeof(path), "%s/f", dir);
	f = fopen(path, "w");
	fputs("0123456789", f);
	fclose(f);
	ck_assert_int_eq(readfile_read(path, 10, &b, &kind), 0);
	ck_assert_str_eq(b.p, "0123456789");
	ck_assert_int_eq(readfile_read(path, 9, &b, &kind), -EFBIG);
	ck_assert_int_eq(readfile_read("/nonexistent/x", 9, &b, &kind), -ENOENT);
	buf_release(&b);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

Suite *readfile_suite(void)
{
	Suite *s = suite_create("readfile");
	TCase *tc = tcase_create("readfile");

	tcase_add_test(tc, only_regular_files_within_the_bound);
	suite_add_tcase(s, tc);
	return s;
}
