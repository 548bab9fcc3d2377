#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strv.h"
#include "lib/x.h"

START_TEST(push_contains_join)
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
	ck_assert_ptr_null(v.v);
}
END_TEST

/* push copies its argument, push_take takes it; the vector stays NULL-terminated as it grows. */
START_TEST(copy_take_and_growth)
{
	struct strv v = { 0 };
	char word[] = "word";
	char *own = xstrdup("taken");
	size_t i;

	strv_push(&v, word);
	word[0] = 'c';
	ck_assert_str_eq(v.v[0], "word");
	strv_push_take(&v, own);
	ck_assert_ptr_eq(v.v[1], own);
	for (i = 0; i < 100; i++) {
		strv_push(&v, "x");
		ck_assert_ptr_null(v.v[v.n]);
	}
	ck_assert_uint_eq(v.n, 102);
	strv_release(&v);
}
END_TEST

START_TEST(join_edges)
{
	struct strv v = { 0 };
	char *j;

	j = strv_join(&v, ",");
	ck_assert_str_eq(j, "");
	free(j);
	strv_push(&v, "only");
	j = strv_join(&v, ",");
	ck_assert_str_eq(j, "only");
	free(j);
	strv_push(&v, "");
	j = strv_join(&v, "::");
	ck_assert_str_eq(j, "only::");
	free(j);
	strv_release(&v);
	ck_assert(!strv_contains(&v, "only"));
}
END_TEST

Suite *strv_suite(void)
{
	Suite *s = suite_create("strv");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, push_contains_join);
	tcase_add_test(tc, copy_take_and_growth);
	tcase_add_test(tc, join_edges);
	suite_add_tcase(s, tc);
	return s;
}
