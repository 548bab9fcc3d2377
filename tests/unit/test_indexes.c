#include <check.h>
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "indexes.h"
#include "str.h"

static const char signed_msg[] = "-----BEGIN PGP SIGNED MESSAGE-----\n"
				 "Hash: SHA256\n"
				 "\n"
				 "Origin: Debian\n"
				 "- -----dash escaped\n"
				 "Suite: bookworm\n"
				 "-----BEGIN PGP SIGNATURE-----\n"
				 "\n"
				 "iQ==\n"
				 "-----END PGP SIGNATURE-----\n";

START_TEST(signed_text_extracted)
{
	struct buf b = { 0 };

	ck_assert_int_eq(indexes_signed_text(signed_msg, strlen(signed_msg), &b), 0);
	ck_assert_str_eq(b.p, "Origin: Debian\n-----dash escaped\nSuite: bookworm\n");
	buf_release(&b);
}
END_TEST

START_TEST(signed_text_refuses_outside_data)
{
	struct buf b = { 0 }, msg = { 0 };

	buf_adds(&msg, "Suite: evil\n");
	buf_adds(&msg, signed_msg);
	ck_assert_int_eq(indexes_signed_text(msg.p, msg.len, &b), -MKI_E_PARSE);
	msg.len = 0;
	buf_adds(&msg, signed_msg);
	buf_adds(&msg, "Suite: evil\n");
	ck_assert_int_eq(indexes_signed_text(msg.p, msg.len, &b), -MKI_E_PARSE);
	/* A bare dash line inside the signed part is not valid dash-escaping. */
	msg.len = 0;
	buf_adds(&msg, "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n-x\n"
		       "-----BEGIN PGP SIGNATURE-----\n-----END PGP SIGNATURE-----\n");
	ck_assert_int_eq(indexes_signed_text(msg.p, msg.len, &b), -MKI_E_PARSE);
	/* Unterminated signature. */
	ck_assert_int_eq(indexes_signed_text(signed_msg, strlen(signed_msg) - 28, &b), -MKI_E_PARSE);
	buf_release(&b);
	buf_release(&msg);
}
END_TEST

START_TEST(dates)
{
	int64_t t;

	ck_assert_int_eq(indexes_parse_date("Sat, 10 Jun 2023 08:46:48 UTC", &t), 0);
	ck_assert_int_eq(t, 1686386808);
	ck_assert_int_eq(indexes_parse_date("Sat, 10 Jun 2023 10:46:48 +0200", &t), 0);
	ck_assert_int_eq(t, 1686386808);
	ck_assert_int_eq(indexes_parse_date("Sat, 10 Jun 2023 08:46:48", &t), 0);
	ck_assert_int_eq(t, 1686386808);
	ck_assert_int_eq(indexes_parse_date("yesterday", &t), -MKI_E_PARSE);
	ck_assert_int_eq(indexes_parse_date("Sat, 10 Jun 2023 08:46:48 CEST", &t), -MKI_E_PARSE);
}
END_TEST

Suite *indexes_suite(void)
{
	Suite *s = suite_create("indexes");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, signed_text_extracted);
	tcase_add_test(tc, signed_text_refuses_outside_data);
	tcase_add_test(tc, dates);
	suite_add_tcase(s, tc);
	return s;
}
