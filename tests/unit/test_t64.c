#include <check.h>
#include <stddef.h>

#include "debian/t64.h"

/* The transition's real renames, and names that only look like one. */
static const struct {
	const char *old, *new_name;
	int want;
} cases[] = {
	{ "libssl3", "libssl3t64", 1 },
	{ "libcurl4", "libcurl4t64", 1 },
	{ "libglib2.0-0", "libglib2.0-0t64", 1 },
	{ "libdb5.3", "libdb5.3t64", 1 },
	{ "libgnutls30", "libgnutls30t64", 1 },
	{ "libapt-pkg6.0", "libapt-pkg6.0t64", 1 },
	{ "libcurl3-gnutls", "libcurl3t64-gnutls", 1 }, /* before the flavour */
	{ "libqt5core5a", "libqt5core5t64", 1 },         /* in place of the ABI suffix */
	{ "libfoo3", "libfoo3t64", 1 },
	{ "libssl3", "libssl3", 0 },
	{ "libssl3", "libssl3t64-dev", 0 },       /* another package of the source */
	{ "libssl3t64", "libssl3t64", 0 },
	{ "libcurl4", "libcurl3t64-gnutls", 0 },
	{ "libfoo", "libfoo3t64", 0 },            /* the old name is shorter than the head */
	{ "libfoo3abc", "libfoo3t64", 0 },        /* a suffix longer than two */
	{ "libfoo3-X", "libfoo3t64", 0 },         /* not lower-case letters and digits */
	{ "foo", "t64foo", 0 },                   /* "t64" must come after something */
	{ "", "t64", 0 },
	{ NULL, "libfoo3t64", 0 },
	{ "libfoo3", NULL, 0 },
	{ "libfoo3", "libfoo3T64", 0 },
	{ "libt64a", "libt64at64", 1 },           /* the second "t64" is the rename */
};

START_TEST(renamed)
{
	ck_assert_msg(t64_renamed(cases[_i].old, cases[_i].new_name) == cases[_i].want,
		      "'%s' -> '%s': want %d", cases[_i].old, cases[_i].new_name, cases[_i].want);
}
END_TEST

Suite *t64_suite(void)
{
	Suite *s = suite_create("t64");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, renamed, 0, sizeof(cases) / sizeof(cases[0]));
	suite_add_tcase(s, tc);
	return s;
}
