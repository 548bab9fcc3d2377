#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "sandbox/workroot.h"

/* tmpfs numbers its directory entries from 2 up: always narrow. */
START_TEST(tmpfs_is_narrow)
{
	if (access("/dev/shm", W_OK))
		return;
	ck_assert_int_eq(workroot_wide_offsets("/dev/shm"), 0);
}
END_TEST

/* The probe leaves nothing behind, and a place it cannot write is an error, not an answer. */
START_TEST(probe_cleans_up_and_reports_errors)
{
	char dir[] = "/dev/shm/mki-workroot-XXXXXX";

	if (!mkdtemp(dir))
		return;
	ck_assert_int_ge(workroot_wide_offsets(dir), 0);
	ck_assert_int_eq(rmdir(dir), 0); /* empty again */
	ck_assert_int_lt(workroot_wide_offsets("/nonexistent/mkimage"), 0);
}
END_TEST

/* No 32-bit guest emulated (amd64, i386 on amd64, or none at all): TMPDIR as it is, unprobed. */
START_TEST(native_or_64bit_keep_tmpdir)
{
	const char *archs[] = { "amd64", "arm64", "riscv64" };
	char *out = NULL;

	ck_assert_int_eq(workroot_choose("/nonexistent/tmp", 1, archs, 3, NULL, &out), 0);
	ck_assert_str_eq(out, "/nonexistent/tmp");
	free(out);
}
END_TEST

/* An armhf guest where TMPDIR cannot be probed: kept (creating the work directory says why). */
START_TEST(unprobeable_tmpdir_is_kept)
{
	const char *archs[] = { "armhf" };
	char *out = NULL;

	ck_assert_int_eq(workroot_choose("/nonexistent/tmp", 0, archs, 1, NULL, &out), 0);
	ck_assert_str_eq(out, "/nonexistent/tmp");
	free(out);
}
END_TEST

/* On this host's own /var/tmp: narrow offsets keep it; wide ones move to a narrow fallback, or fail. */
START_TEST(wide_tmpdir_moves_or_fails)
{
	const char *archs[] = { "armel" }, *fallbacks[] = { "/nonexistent/shm", "/dev/shm", NULL };
	const char *none[] = { "/nonexistent/shm", NULL };
	char *out = NULL;
	int wide = workroot_wide_offsets("/var/tmp");

	if (wide < 0 || access("/dev/shm", W_OK))
		return;
	ck_assert_int_eq(workroot_choose("/var/tmp", 1, archs, 1, fallbacks, &out), 0);
	ck_assert_str_eq(out, wide ? "/dev/shm" : "/var/tmp");
	free(out);
	out = NULL;
	ck_assert_int_eq(workroot_choose("/var/tmp", 0, archs, 1, none, &out),
			 wide ? -MKI_E_USAGE : 0);
	free(out);
}
END_TEST

Suite *workroot_suite(void)
{
	Suite *s = suite_create("workroot");
	TCase *tc = tcase_create("workroot");

	tcase_add_test(tc, tmpfs_is_narrow);
	tcase_add_test(tc, probe_cleans_up_and_reports_errors);
	tcase_add_test(tc, native_or_64bit_keep_tmpdir);
	tcase_add_test(tc, unprobeable_tmpdir_is_kept);
	tcase_add_test(tc, wide_tmpdir_moves_or_fails);
	suite_add_tcase(s, tc);
	return s;
}
