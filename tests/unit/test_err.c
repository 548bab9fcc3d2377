#include <check.h>
#include <errno.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/err.h"

/* Each of our codes ends the process with the status mkimage(1) documents for its kind. */
START_TEST(err_exit_code_by_kind)
{
	static const struct {
		int err, status;
	} cases[] = {
		{ 0, 0 },
		{ -MKI_E_USAGE, 2 },       { -MKI_E_RECIPE, 2 },     { -MKI_E_SOURCE, 3 },
		{ -MKI_E_SIGNATURE, 3 },   { -MKI_E_EXPIRED, 3 },    { -MKI_E_PARSE, 3 },
		{ -MKI_E_LIMIT_REPO, 3 },  { -MKI_E_RESOLVE, 4 },    { -MKI_E_LOCK, 4 },
		{ -MKI_E_NETWORK, 5 },     { -MKI_E_NOTFOUND, 5 },   { -MKI_E_INTEGRITY, 5 },
		{ -MKI_E_OFFLINE, 5 },     { -MKI_E_PACKAGE, 6 },    { -MKI_E_CONFLICT, 6 },
		{ -MKI_E_LIMIT_PKG, 6 },   { -MKI_E_SANDBOX, 7 },    { -MKI_E_HOOK, 7 },
		{ -MKI_E_IMAGE, 8 },       { -MKI_E_NOSPACE, 8 },    { -MKI_E_INTERRUPTED, 130 },
		{ -MKI_E_NOTYET, 1 },      { -MKI_E_LIMIT, 1 },      { -ENOENT, 1 },
		{ -MKI_E_BASE, 1 },        { -MKI_E_MAX, 1 },        { MKI_E_HOOK, 7 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(err_exit_code(cases[i].err) == cases[i].status, "code %d: %d, not %d",
			      cases[i].err, err_exit_code(cases[i].err), cases[i].status);
}
END_TEST

START_TEST(err_text_ours_and_errno)
{
	ck_assert_str_eq(err_text(-MKI_E_CONFLICT), "file conflict between packages");
	ck_assert_str_eq(err_text(-ENOENT), strerror(ENOENT));
	ck_assert_str_eq(err_text(-MKI_E_MAX), "unknown error");
	ck_assert_str_eq(err_text(0), "unknown error");
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
	TCase *tc = tcase_create("err");

	tcase_add_test(tc, err_exit_code_by_kind);
	tcase_add_test(tc, err_text_ours_and_errno);
	tcase_add_test(tc, err_exit_help_lists_every_status);
	suite_add_tcase(s, tc);
	return s;
}
