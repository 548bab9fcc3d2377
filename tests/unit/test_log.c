#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"

/*
 * Callers log and then return -errno. With stderr on a file (not a terminal) isatty() sets errno
 * to ENOTTY; the logger must hand the caller's errno back unchanged, at every level.
 */
START_TEST(log_preserves_errno)
{
	int fd = open("/dev/null", O_WRONLY), saved = dup(2);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	errno = EACCES;
	log_error("error with %s", "context");
	ck_assert_int_eq(errno, EACCES);
	errno = ENOSPC;
	log_warn("warning");
	ck_assert_int_eq(errno, ENOSPC);
	errno = EROFS;
	log_debug("below the threshold");
	ck_assert_int_eq(errno, EROFS);
	dup2(saved, 2);
	close(fd);
	close(saved);
}
END_TEST

Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_test(tc, log_preserves_errno);
	suite_add_tcase(s, tc);
	return s;
}
