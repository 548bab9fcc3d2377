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
	/* an equivs-style stand-in: the old name met, the old ABI's binary run with the new one */
	PKG("libzed1t64", "1.1", "armhf", "Breaks: libzed1 (<< 1.1)\n")
	PKG("libzed1-shim", "1", "armhf", "Provides: libzed1 (= 9.0)\n")
	PKG("shimmed", "1.0", "armhf", "Pre-Depends: libzed1 (>= 1.0)\n")
	PKG("zednew", "1.0", "armhf", "Depends: libzed1t64\n")
	/* a Replaces-only rename (82 of trixie armhf's, e.g. libcoin80v5 -> libcoin80t64) */
	PKG("libqux5t64", "5.1", "armhf", "Replaces: libqux5v5\n")
	PKG("quxapp", "1.0", "armhf", "Depends: libqux5v5 (>= 5)\n")
	/* named like a rename and breaking the name, but providing it: no ABI change */
	PKG("libbar2t64", "2.0", "armhf", "Breaks: libbar2 (<< 2.0)\nProvides: libbar2 (= 2.0)\n")
	/* a t64 name that does not break the old one is not its successor */
	PKG("libbaz1t64", "1.0", "armhf", "")
	PKG("bazapp", "1.0", "armhf", "Depends: libbaz1\n")
	/* libc6 and the new name are met: only the two renamed libraries are named */
	PKG("vendor", "1.0", "armhf", "Depends: libc6, libfoo3, libfoo3t64 | libbaz1, libqux5v5\n");
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

/* Requests that resolve: the plan's size, the renames it records, those of `old` and users. */
static const struct {
	const char *request[2];
	size_t n, renames;
	const char *old, *new_name, *users;
} resolved[] = {
	/* armel's new name provides the old one: no change */
	{ { "app:armel" }, 2, 0, "libfoo3", NULL, NULL },
	/* through the alternative naming the new name too: a rebuilt library's shlibs */
	{ { "either" }, 2, 1, "libfoo3", "libfoo3t64", "" },
	{ { "newapp" }, 2, 1, "libfoo3", "libfoo3t64", "" },
	/* providing the old name: no ABI change */
	{ { "libbar2t64" }, 1, 0, "libbar2", NULL, NULL },
	{ { "shimmed", "zednew" }, 4, 1, "libzed1", "libzed1t64", "shimmed:armhf" },
	/* no new library in the plan: nothing to run against */
	{ { "shimmed" }, 2, 0, "libzed1", NULL, NULL },
};

static void users(const struct plan_abi_rename *a, struct buf *b)
{
	for (size_t i = 0; a && i < a->users.n; i++)
		buf_addf(b, "%s%s", i ? " " : "", a->users.v[i]);
}

START_TEST(plan_records_renames)
{
	struct rfix f;
	const struct plan_abi_rename *a;
	struct buf b = { 0 };
	char *log;

	rfix_setup(&f, hf_idx, el_idx);
	for (int i = 0; i < 2 && resolved[_i].request[i]; i++)
		rfix_request(&f, resolved[_i].request[i]);
	ck_assert_int_eq(resolve_plan(&f.plan, &f.r, &f.ix, NULL), 0);
	log = rfix_log(&f);
	ck_assert_uint_eq(f.plan.n, resolved[_i].n);
	ck_assert_uint_eq(f.plan.n_abi_renames, resolved[_i].renames);
	a = plan_abi_rename_find(&f.plan, "armhf", resolved[_i].old);
	ck_assert(!a == !resolved[_i].new_name);
	ck_assert(!a || !strcmp(a->new_name, resolved[_i].new_name));
	buf_adds(&b, "");
	users(a, &b);
	ck_assert_str_eq(b.p, resolved[_i].users ? resolved[_i].users : "");
	ck_assert_ptr_null(plan_abi_rename_find(&f.plan, "armel", resolved[_i].old));
	ck_assert_msg(!strstr(log, "time_t"), "%s", log);
	buf_release(&b);
	free(log);
	rfix_teardown(&f);
}
END_TEST

/* A package that Replaces the old name without breaking it is its successor too. */
START_TEST(replaces_only)
{
	struct rfix f;
	char *log = run(&f, "quxapp", -MKI_E_RESOLVE);

	ck_assert_msg(strstr(log, "'libqux5v5' is 'libqux5t64' since Debian's 64-bit time_t "
				  "transition, and on armhf 'libqux5t64' does not provide "
				  "'libqux5v5'"),
		      "%s", log);
	free(log);
	rfix_teardown(&f);
}
END_TEST

/* Every renamed library the package names at once, and the new names to rebuild against. */
START_TEST(all_renamed_named)
{
	struct rfix f;
	char *log = run(&f, "vendor", -MKI_E_RESOLVE);

	/* which of the two libsolv reports first is its choice; the other follows */
	ck_assert_msg(strstr(log, "problem 1: 'vendor' also depends on 'libqux5v5' (now "
				  "'libqux5t64'), renamed alike") ||
			      strstr(log, "problem 1: 'vendor' also depends on 'libfoo3' (now "
					  "'libfoo3t64'), renamed alike"),
		      "%s", log);
	ck_assert_msg(strstr(log, "ways out: rebuild 'vendor' for this release against "
				  "'libfoo3t64' and 'libqux5t64', or build") ||
			      strstr(log, "ways out: rebuild 'vendor' for this release against "
					  "'libqux5t64' and 'libfoo3t64', or build"),
		      "%s", log);
	ck_assert_msg(!strstr(log, "libbaz1") && !strstr(log, "'libc6'"), "%s", log);
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
	tcase_add_test(tc, replaces_only);
	tcase_add_test(tc, all_renamed_named);
	suite_add_tcase(s, tc);
	return s;
}
