#include <check.h>
#include <string.h>

#include "debian/overwrite.h"

/* The packages of the cases below. */
static const struct overwrite_pkg
	base = { "base-files", "armhf", "12.4", NULL, 0 },
	newbase = { "newbase", "armhf", "1.0", "base-files (<< 13)", 0 },
	toonew = { "toonew", "armhf", "1.0", "base-files (<< 12.4)", 0 },
	anyarch = { "anyarch", "armhf", "1.0", "base-files:any", 0 },
	armel_only = { "armel-only", "armhf", "1.0", "base-files:armel", 0 },
	alts = { "alts", "armhf", "1.0", "nothing | base-files", 0 },
	broken = { "broken", "armhf", "1.0", "base-files (>= ), base-files", 0 },
	late = { "late", "armhf", "1.0", "x, base-files (>= 12) [armhf] <!nocheck>", 0 },
	keeper = { "keeper", "armhf", "2.0", "newcomer", 0 },
	newcomer = { "newcomer", "armhf", "1.0", NULL, 0 },
	libc_hf = { "libc6", "armhf", "2.36-9", NULL, 1 },
	libc_el = { "libc6", "armel", "2.36-9", NULL, 1 },
	libc_el_no_ma = { "libc6", "armel", "2.36-9", NULL, 0 },
	other_same = { "libz", "armel", "1", NULL, 1 };

/* Replaces: k's field against q. */
START_TEST(replaces_table)
{
	static const struct {
		const struct overwrite_pkg *k, *q;
		int want;
	} t[] = {
		{ &newbase, &base, 1 },     /* << 13 holds for 12.4 */
		{ &toonew, &base, 0 },      /* << 12.4 does not */
		{ &anyarch, &base, 1 },     /* :any names every architecture */
		{ &armel_only, &base, 0 },  /* base-files is armhf */
		{ &alts, &base, 1 },        /* any relation of the field */
		{ &broken, &base, 0 },      /* malformed: nothing from the bad relation on */
		{ &late, &base, 1 },        /* restrictions skipped */
		{ &base, &newbase, 0 },     /* no Replaces */
		{ &newbase, &toonew, 0 },   /* another name */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(overwrite_replaces(t[i].k, t[i].q) == t[i].want, "%s replaces %s: %d",
			      t[i].k->name, t[i].q->name, !t[i].want);
}
END_TEST

/* A version constraint needs a version to hold for. */
START_TEST(no_version_no_match)
{
	struct overwrite_pkg q = base;

	q.version = NULL;
	ck_assert_int_eq(overwrite_replaces(&newbase, &q), 0);
	ck_assert_int_eq(overwrite_replaces(&anyarch, &q), 1);
	q.arch = NULL;
	ck_assert_int_eq(overwrite_replaces(&anyarch, &q), 1);
	ck_assert_int_eq(overwrite_replaces(&armel_only, &q), 0);
}
END_TEST

START_TEST(decide_table)
{
	static const struct {
		const struct overwrite_pkg *k;
		const struct overwrite_pkg *owners[3];
		size_t n;
		enum overwrite_verdict want;
		size_t culprit;
	} t[] = {
		{ &newbase, { &base }, 1, OVERWRITE_TAKE, 0 },
		{ &toonew, { &base }, 1, OVERWRITE_CONFLICT, 0 },
		{ &newbase, { &base, &newcomer }, 2, OVERWRITE_CONFLICT, 1 },
		{ &newbase, { NULL }, 1, OVERWRITE_CONFLICT, 0 }, /* an owner outside the plan */
		{ &newcomer, { &keeper }, 1, OVERWRITE_KEEP, 0 },  /* the owner replaces newcomer */
		{ &newcomer, { &keeper, &base }, 2, OVERWRITE_CONFLICT, 0 },
		{ &libc_el, { &libc_hf }, 1, OVERWRITE_SHARED, 0 },
		{ &libc_el_no_ma, { &libc_hf }, 1, OVERWRITE_CONFLICT, 0 },
		{ &libc_el, { &libc_hf, &other_same }, 2, OVERWRITE_CONFLICT, 0 },
		{ &libc_el, { &libc_hf, NULL }, 2, OVERWRITE_CONFLICT, 0 },
	};
	size_t i, culprit;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		culprit = 99;
		ck_assert_msg(overwrite_decide(t[i].k, t[i].owners, t[i].n, &culprit) == t[i].want,
			      "case %zu", i);
		if (t[i].want == OVERWRITE_CONFLICT)
			ck_assert_uint_eq(culprit, t[i].culprit);
	}
}
END_TEST

/* Directories, symlinks and other objects: every pair of what is there and what is shipped. */
START_TEST(shape_table)
{
#define N OVERWRITE_NONE
#define D OVERWRITE_DIR
#define L OVERWRITE_LINK
#define O OVERWRITE_OTHER
	static const struct {
		enum overwrite_kind have, ships;
		enum overwrite_shape want;
	} t[] = {
		{ N, D, OVERWRITE_WRITE },    { N, L, OVERWRITE_WRITE },  { N, O, OVERWRITE_WRITE },
		{ D, D, OVERWRITE_WRITE },    { D, L, OVERWRITE_KEEP_DIR },
		{ D, O, OVERWRITE_MISMATCH }, { L, D, OVERWRITE_FOLLOW }, { L, L, OVERWRITE_WRITE },
		{ L, O, OVERWRITE_WRITE },    { O, D, OVERWRITE_MISMATCH },
		{ O, L, OVERWRITE_WRITE },    { O, O, OVERWRITE_WRITE },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(overwrite_shape(t[i].have, t[i].ships) == t[i].want, "case %zu", i);
#undef N
#undef D
#undef L
#undef O
}
END_TEST

Suite *overwrite_suite(void)
{
	Suite *s = suite_create("overwrite");
	TCase *tc = tcase_create("overwrite");

	tcase_add_test(tc, replaces_table);
	tcase_add_test(tc, no_version_no_match);
	tcase_add_test(tc, decide_table);
	tcase_add_test(tc, shape_table);
	suite_add_tcase(s, tc);
	return s;
}
