/*
 * The 64-bit time_t transition read from the indexes: a dependency on a library's old name that
 * nothing provides is explained where its new name lacks the old one, and the plan records the
 * renames it holds. armhf's libfoo3t64 does not provide libfoo3; armel's does (as amd64's do in
 * Debian), so armel is never named.
 */
#include "resolve_fixture.h"

#define T64(arch, extra) \
	PKG("libfoo3t64", "3.1-1", arch, "Multi-Arch: same\nBreaks: libfoo3 (<< 3.1-1)\n" \
	    "Replaces: libfoo3\n" extra)

static const char *const hf_idx =
	T64("armhf", "")
	PKG("app", "1.0", "armhf", "Depends: libc6, libfoo3 (>= 3.0)\n")
	PKG("libc6", "2.40", "armhf", "Multi-Arch: same\n")
	PKG("either", "1.0", "armhf", "Depends: libfoo3 | libfoo3t64\n")
	PKG("newapp", "1.0", "armhf", "Depends: libfoo3t64\n")
	/* named like a rename and breaking the name, but providing it: no ABI change */
	PKG("libbar2t64", "2.0", "armhf", "Breaks: libbar2 (<< 2.0)\nProvides: libbar2 (= 2.0)\n")
	/* a t64 name that does not break the old one is not its successor */
	PKG("libbaz1t64", "1.0", "armhf", "")
	PKG("bazapp", "1.0", "armhf", "Depends: libbaz1\n");
static const char *const el_idx =
	T64("armel", "Provides: libfoo3 (= 3.1-1)\n")
	PKG("app", "1.0", "armel", "Depends: libfoo3 (>= 3.0)\n");

static char *run(struct rfix *f, const char *request, int want)
{
	rfix_setup(f, hf_idx, el_idx);
	rfix_request(f, request);
	ck_assert_int_eq(resolve_plan(&f->plan, &f->r, &f->ix, NULL), want);
	return rfix_log(f);
}

START_TEST(old_name_explained)
{
	struct rfix f;
	char *log = run(&f, "app", -MKI_E_RESOLVE);

	ck_assert_msg(strstr(log, "problem 1: 'libfoo3' is 'libfoo3t64' since Debian's 64-bit "
				  "time_t transition, and on armhf 'libfoo3t64' does not provide "
				  "'libfoo3': time_t and off_t related structures changed size"),
		      "%s", log);
	ck_assert_msg(strstr(log, "problem 1: ways out: rebuild 'app' for this release against "
				  "'libfoo3t64', or build the image on the release 'app' was made "
				  "for (e.g. suite = \"bookworm\")"),
		      "%s", log);
	ck_assert_msg(!strstr(log, "armhf, armel") && !strstr(log, "on armel"), "%s", log);
	free(log);
	rfix_teardown(&f);
}
END_TEST

/* Requests that resolve: the plan's size and the renames it records; nothing explained. */
static const struct {
	const char *request;
	size_t n, renames;
} resolved[] = {
	{ "app:armel", 2, 0 },  /* armel's new name provides the old one: no ABI change */
	{ "either", 2, 1 },     /* through the alternative: libfoo3 is libfoo3t64 on armhf */
	{ "newapp", 2, 1 },
	{ "libbar2t64", 1, 0 }, /* a rename that provides the old name changed no ABI */
};

START_TEST(plan_records_renames)
{
	struct rfix f;
	const struct plan_abi_rename *a;
	char *log = run(&f, resolved[_i].request, 0);

	ck_assert_uint_eq(f.plan.n, resolved[_i].n);
	ck_assert_uint_eq(f.plan.n_abi_renames, resolved[_i].renames);
	a = plan_abi_rename_find(&f.plan, "armhf", "libfoo3");
	ck_assert(!a == !resolved[_i].renames);
	ck_assert(!a || !strcmp(a->new_name, "libfoo3t64"));
	ck_assert_ptr_null(plan_abi_rename_find(&f.plan, "armel", "libfoo3"));
	ck_assert_msg(!strstr(log, "time_t"), "%s", log);
	free(log);
	rfix_teardown(&f);
}
END_TEST

/* A t64-looking name that does not break the old one: the plain error, no explanation. */
START_TEST(not_a_successor)
{
	struct rfix f;
	char *log = run(&f, "bazapp", -MKI_E_RESOLVE);

	ck_assert_msg(strstr(log, "depends on 'libbaz1', which no candidate package provides"),
		      "%s", log);
	ck_assert_msg(!strstr(log, "time_t"), "%s", log);
	free(log);
	rfix_teardown(&f);
}
END_TEST

Suite *resolve_t64_suite(void)
{
	Suite *s = suite_create("resolve_t64");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, old_name_explained);
	tcase_add_test(tc, not_a_successor);
	tcase_add_loop_test(tc, plan_records_renames, 0, sizeof(resolved) / sizeof(resolved[0]));
	suite_add_tcase(s, tc);
	return s;
}
