#include <check.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/err.h"

/* Each code's exit status, as mkimage(1) documents it. */
static const struct {
	int err, exit;
} exits[] = {
	{ 0, 0 },
	{ -MKI_E_USAGE, 2 },     { -MKI_E_RECIPE, 2 },
	{ -MKI_E_SOURCE, 3 },    { -MKI_E_SIGNATURE, 3 },  { -MKI_E_EXPIRED, 3 },
	{ -MKI_E_PARSE, 3 },     { -MKI_E_LIMIT_REPO, 3 },
	{ -MKI_E_RESOLVE, 4 },   { -MKI_E_LOCK, 4 },
	{ -MKI_E_NETWORK, 5 },   { -MKI_E_NOTFOUND, 5 },   { -MKI_E_INTEGRITY, 5 },
	{ -MKI_E_OFFLINE, 5 },
	{ -MKI_E_PACKAGE, 6 },   { -MKI_E_CONFLICT, 6 },   { -MKI_E_LIMIT_PKG, 6 },
	{ -MKI_E_SANDBOX, 7 },   { -MKI_E_HOOK, 7 },
	{ -MKI_E_IMAGE, 8 },     { -MKI_E_NOSPACE, 8 },
	{ -MKI_E_INTERRUPTED, 130 },
	{ -MKI_E_NOTYET, 1 },    { -MKI_E_LIMIT, 1 },      { -ENOENT, 1 },  { -ENOMEM, 1 },
	{ MKI_E_RESOLVE, 4 }, /* the sign does not matter */
};

START_TEST(exit_codes)
{
	ck_assert_int_eq(err_exit_code(exits[_i].err), exits[_i].exit);
}
END_TEST

/* Every code has its own text, never NULL; errno values read as strerror(); others as unknown. */
START_TEST(texts)
{
	int e, f;

	for (e = MKI_E_BASE + 1; e < MKI_E_MAX; e++) {
		ck_assert_ptr_nonnull(err_text(-e));
		ck_assert_str_ne(err_text(-e), "unknown error");
		for (f = MKI_E_BASE + 1; f < e; f++)
			ck_assert_str_ne(err_text(-e), err_text(-f));
	}
	ck_assert_str_eq(err_text(-MKI_E_RESOLVE), "unresolvable package set");
	ck_assert_str_eq(err_text(MKI_E_RESOLVE), "unresolvable package set");
	ck_assert_str_eq(err_text(-ENOENT), strerror(ENOENT));
	ck_assert_str_eq(err_text(0), "unknown error");
	ck_assert_str_eq(err_text(-MKI_E_BASE), "unknown error");
	ck_assert_str_eq(err_text(-MKI_E_MAX), "unknown error");
	ck_assert_str_eq(err_text(-5000), "unknown error");
}
END_TEST

START_TEST(interrupted)
{
	ck_assert_int_eq(err_interrupted(), 0);
	err_set_interrupted(SIGTERM);
	ck_assert_int_eq(err_interrupted(), SIGTERM);
	err_set_interrupted(0);
	ck_assert_int_eq(err_interrupted(), 0);
}
END_TEST

/* --help's table: every status once, in order, each with its meaning. */
START_TEST(err_exit_help_lists_every_status)
{
	struct buf b = { 0 };

	err_exit_help(&b);
	ck_assert_str_eq(b.p, "  0    ok\n"
			      "  1    build failed (other)\n"
			      "  2    usage or recipe error\n"
			      "  3    repository or signature error\n"
			      "  4    resolver or lock error\n"
			      "  5    download or checksum error\n"
			      "  6    bad package or file conflict\n"
			      "  7    sandbox, maintainer script or hook failure\n"
			      "  8    image error\n"
			      "  130  interrupted\n");
	buf_release(&b);
}
END_TEST

Suite *err_suite(void)
{
	Suite *s = suite_create("err");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, exit_codes, 0, sizeof(exits) / sizeof(exits[0]));
	tcase_add_test(tc, texts);
	tcase_add_test(tc, interrupted);
	tcase_add_test(tc, err_exit_help_lists_every_status);
	suite_add_tcase(s, tc);
	return s;
}
