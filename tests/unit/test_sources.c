#include <check.h>
#include <string.h>

#include "err.h"
#include "sources.h"
#include "sources_internal.h"
#include "str.h"

START_TEST(dearmor_decodes)
{
	/* "hello world!" in base64, with armor headers and a checksum line. */
	const char *text = "junk\n-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: x\n\n"
			   "aGVsbG8g\nd29ybGQh\n=abcd\n-----END PGP PUBLIC KEY BLOCK-----\n";
	struct buf b = { 0 };

	ck_assert_int_eq(sources_dearmor(text, &b), 0);
	ck_assert_uint_eq(b.len, 12);
	ck_assert(!memcmp(b.p, "hello world!", 12));
	buf_release(&b);
}
END_TEST

START_TEST(dearmor_refuses_garbage)
{
	struct buf b = { 0 };

	ck_assert_int_eq(sources_dearmor("not a key", &b), -MKI_E_PARSE);
	ck_assert_int_eq(sources_dearmor("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\naGk=\n", &b),
			 -MKI_E_PARSE);
	buf_release(&b);
}
END_TEST

Suite *sources_suite(void)
{
	Suite *s = suite_create("sources");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, dearmor_decodes);
	tcase_add_test(tc, dearmor_refuses_garbage);
	suite_add_tcase(s, tc);
	return s;
}
