/* The registry's bounded JSON reader (layer/regjson.c). */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "lib/str.h"
#include "layer/regjson.h"

static int parse(const char *text, struct regjson *j)
{
	return regjson_parse(text, strlen(text), j);
}

START_TEST(values)
{
	struct regjson j;
	uint64_t n = 0;

	ck_assert_int_eq(parse(" {\"a\": [1, true, null, \"x\\u00e9\\ud83d\\ude00\\n\"], "
			       "\"n\": 18446744073709551615, \"o\": {}} ", &j), 0);
	ck_assert_int_eq(j.type, REGJSON_OBJ);
	ck_assert_uint_eq(j.n, 3);
	ck_assert_int_eq(regjson_get(&j, "a")->type, REGJSON_ARR);
	ck_assert_uint_eq(regjson_get(&j, "a")->n, 4);
	ck_assert_str_eq(regjson_get(&j, "a")->v[3].s, "x\xc3\xa9\xf0\x9f\x98\x80\n");
	ck_assert_int_eq(regjson_get(&j, "a")->v[1].b, 1);
	ck_assert_int_eq(regjson_u64(&j, "n", &n), 0);
	ck_assert(n == UINT64_MAX);
	ck_assert_int_eq(regjson_u64(&j, "o", &n), -EBADMSG);
	ck_assert_ptr_null(regjson_str(&j, "a"));
	ck_assert_ptr_null(regjson_get(&j, "missing"));
	regjson_release(&j);
}
END_TEST

static const char *const bad[] = {
	"", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":1}x", "\"\\u0000\"", "\"\\ud800\"",
	"\"\\udc00\"", "\"a\nb\"", "\"\\q\"", "{\"a\":1,\"a\":2}", "[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]",
	"tru", "{1:2}", "\"abc",
};

START_TEST(refused)
{
	struct regjson j;

	ck_assert_msg(parse(bad[_i], &j) == -EBADMSG, "accepted: %s", bad[_i]);
}
END_TEST

START_TEST(negative_number)
{
	struct regjson j;
	uint64_t n;

	ck_assert_int_eq(parse("{\"size\": -1}", &j), 0);
	ck_assert_int_eq(regjson_u64(&j, "size", &n), -EBADMSG);
	regjson_release(&j);
	ck_assert_int_eq(parse("{\"size\": 99999999999999999999}", &j), 0);
	ck_assert_int_eq(regjson_u64(&j, "size", &n), -EBADMSG);
	regjson_release(&j);
}
END_TEST

Suite *regjson_suite(void)
{
	Suite *s = suite_create("regjson");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, values);
	tcase_add_loop_test(tc, refused, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, negative_number);
	suite_add_tcase(s, tc);
	return s;
}
