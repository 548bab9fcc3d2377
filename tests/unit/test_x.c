#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/x.h"

START_TEST(strings)
{
	char *p;

	p = xstrdup("bookworm");
	ck_assert_str_eq(p, "bookworm");
	free(p);
	p = xstrndup("bookworm-updates", 8);
	ck_assert_str_eq(p, "bookworm");
	free(p);
	p = xstrndup("a\0b", 3); /* a length, not a C string: bytes past a NUL are copied */
	ck_assert_mem_eq(p, "a\0b", 4);
	free(p);
	p = xasprintf("%s_%s_%s.deb", "hello", "2.10-3", "armhf");
	ck_assert_str_eq(p, "hello_2.10-3_armhf.deb");
	free(p);
}
END_TEST

/* Zero sizes still give a pointer that can be freed or grown. */
START_TEST(zero_sizes)
{
	char *p = xmalloc(0), *q = xcalloc(0, 0);
	int *a = NULL;
	size_t alloc = 0, i;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(q);
	p = xrealloc(p, 0);
	ck_assert_ptr_nonnull(p);
	free(p);
	free(q);
	for (i = 0; i < 1000; i++) {
		ALLOC_GROW(a, i + 1, alloc);
		ck_assert_uint_ge(alloc, i + 1);
		a[i] = (int)i;
	}
	ck_assert_int_eq(a[999], 999);
	free(a);
}
END_TEST

START_TEST(calloc_zeroes)
{
	unsigned char *p = xcalloc(64, 4);
	size_t i;

	for (i = 0; i < 256; i++)
		ck_assert_uint_eq(p[i], 0);
	free(p);
}
END_TEST

#ifndef __SANITIZE_ADDRESS__ /* ASan reports the size itself and exits instead */
/* Exhausted memory is a message and abort(), never a NULL the caller would have to check. */
START_TEST(exhausted_aborts)
{
	void *p;

	ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
	p = xmalloc(SIZE_MAX / 2);
	free(p);
}
END_TEST
#endif

Suite *x_suite(void)
{
	Suite *s = suite_create("x");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, strings);
	tcase_add_test(tc, zero_sizes);
	tcase_add_test(tc, calloc_zeroes);
#ifndef __SANITIZE_ADDRESS__
	tcase_add_test_raise_signal(tc, exhausted_aborts, SIGABRT);
#endif
	suite_add_tcase(s, tc);
	return s;
}
