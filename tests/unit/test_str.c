#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/str.h"

START_TEST(strv_and_join)
{
	struct strv v = { 0 };
	char *j;

	strv_push(&v, "a");
	strv_push(&v, "bc");
	ck_assert(strv_contains(&v, "bc"));
	ck_assert(!strv_contains(&v, "b"));
	ck_assert_ptr_null(v.v[2]);
	j = strv_join(&v, ", ");
	ck_assert_str_eq(j, "a, bc");
	free(j);
	strv_release(&v);
	ck_assert_uint_eq(v.n, 0);
}
END_TEST

START_TEST(buf_grows)
{
	struct buf b = { 0 };
	int i;

	for (i = 0; i < 1000; i++)
		buf_addf(&b, "%d,", i);
	ck_assert(str_starts_with(b.p, "0,1,2,"));
	ck_assert(str_ends_with(b.p, "998,999,"));
	ck_assert_uint_eq(strlen(b.p), b.len);
	buf_release(&b);
}
END_TEST

START_TEST(distance)
{
	ck_assert_uint_eq(str_distance("suite", "suite"), 0);
	ck_assert_uint_eq(str_distance("suit", "suite"), 1);
	ck_assert_uint_eq(str_distance("sutie", "suite"), 2);
	ck_assert_uint_eq(str_distance("", "abc"), 3);
}
END_TEST

START_TEST(sha256_known)
{
	char hex[65];

	hash_sha256_hex("abc", 3, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	ck_assert(hash_sha256_hex_valid(hex));
	hex[3] = 'G';
	ck_assert(!hash_sha256_hex_valid(hex));
}
END_TEST

Suite *str_suite(void)
{
	Suite *s = suite_create("str");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, strv_and_join);
	tcase_add_test(tc, buf_grows);
	tcase_add_test(tc, distance);
	tcase_add_test(tc, sha256_known);
	suite_add_tcase(s, tc);
	return s;
}
