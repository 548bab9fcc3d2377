#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

static const struct {
	const char *in, *out;
} strs[] = {
	{ "hello", "\"hello\"" },
	{ "", "\"\"" },
	{ "say \"hi\"\\", "\"say \\\"hi\\\"\\\\\"" },
	{ "a\nb\tc\r\x01\x1f", "\"a\\nb\\tc\\u000d\\u0001\\u001f\"" },
	{ "/usr/bin\x7f", "\"/usr/bin\x7f\"" },                      /* DEL is legal JSON */
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	  "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
	{ "caf\xe9", "\"caf\\ufffd\"" },                              /* Latin-1 */
	{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },                         /* overlong '/' */
	{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },              /* a surrogate */
	{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },   /* past U+10FFFF */
	{ "\xe2\x82", "\"\\ufffd\\ufffd\"" },                         /* cut short at the end */
	{ "\xe2(x", "\"\\ufffd(x\"" },                                /* cut short mid-string */
};

START_TEST(strings)
{
	struct buf b = { 0 };

	json_str(&b, strs[_i].in);
	ck_assert_str_eq(b.p, strs[_i].out);
	buf_release(&b);
}
END_TEST

START_TEST(key_and_null)
{
	struct buf b = { 0 };

	buf_adds(&b, "{");
	json_key(&b, "na\"me");
	json_str(&b, NULL);
	buf_adds(&b, "}");
	ck_assert_str_eq(b.p, "{\"na\\\"me\": \"\"}");
	buf_release(&b);
}
END_TEST

Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, strings, 0, sizeof(strs) / sizeof(strs[0]));
	tcase_add_test(tc, key_and_null);
	suite_add_tcase(s, tc);
	return s;
}
