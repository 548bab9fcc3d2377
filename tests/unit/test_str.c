#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/str.h"

START_TEST(prefix_and_suffix)
{
	ck_assert(str_starts_with("bookworm-updates", "bookworm"));
	ck_assert(str_starts_with("abc", ""));
	ck_assert(!str_starts_with("book", "bookworm"));
	ck_assert(str_ends_with("Packages.xz", ".xz"));
	ck_assert(str_ends_with("xz", ""));
	ck_assert(!str_ends_with("xz", ".xz"));
	ck_assert(!str_ends_with("Packages.gz", ".xz"));
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

Suite *str_suite(void)
{
	Suite *s = suite_create("str");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, prefix_and_suffix);
	tcase_add_test(tc, distance);
	suite_add_tcase(s, tc);
	return s;
}
