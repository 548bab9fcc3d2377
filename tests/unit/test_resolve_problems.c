/*
 * Why a request cannot be met, told in the user's names: the resolver runs end to end
 * (resolve_plan) on real libsolv pools and the logged explanation is checked line by line.
 */
#include "resolve_fixture.h"

static const struct {
	const char *armhf, *armel;
	const char *requests[2], *exclude;
	const char *lines[3]; /* each must appear in the log */
} cases[] = {
	/* a versioned dependency nothing meets: the versions there are */
	{ PKG("app", "1.0", "armhf", "Depends: libfoo (>= 3)\n") PKG("libfoo", "2.0", "armhf", ""),
	  NULL, { "app" }, NULL,
	  { "no installable package set satisfies the recipe (1 problem):",
	    "problem 1: 'app:armhf=1.0' depends on 'libfoo (>= 3)', which no candidate package "
	    "provides (there is only 'libfoo:armhf=2.0')",
	    "problem 1: the recipe asks for 'app'" } },
	/* our multiarch rewrite of an armel package's dependency is not shown */
	{ "", PKG("tool", "1.0", "armel", "Depends: libx | liby\n"), { "tool:armel" }, NULL,
	  { "problem 1: 'tool:armel=1.0' depends on 'libx | liby', which no candidate package "
	    "provides",
	    "problem 1: the recipe asks for 'tool:armel'" } },
	{ PKG("aa", "1", "armhf", "Conflicts: bb\n") PKG("bb", "1", "armhf", ""), NULL,
	  { "aa", "bb" }, NULL, { "'aa:armhf=1' conflicts with or breaks 'bb:armhf=1' ('bb')" } },
	{ PKG("libc6", "2.37", "armhf", "Multi-Arch: same\n"),
	  PKG("libc6", "2.36", "armel", "Multi-Arch: same\n"), { "libc6", "libc6:armel" }, NULL,
	  { "'libc6:armel=2.36' and 'libc6:armhf=2.37' are Multi-Arch: same and must have the same "
	    "version on every architecture (version skew)" } },
	{ PKG("tool", "1.0", "armhf", ""), PKG("tool", "1.0", "armel", ""),
	  { "tool", "tool:armel" }, NULL,
	  { "cannot both be installed: only Multi-Arch: same packages can be installed for "
	    "several architectures" } },
	/* every provider of a virtual package failing alike: one line */
	{ PKG("app", "1.0", "armhf", "Depends: awk\n")
	      PKG("gawk", "5.2", "armhf", "Provides: awk\nDepends: libx\n")
	      PKG("mawk", "1.3", "armhf", "Provides: awk\nDepends: libx\n"),
	  NULL, { "app" }, NULL,
	  { "problem 1: each of 'gawk:armhf=5.2', 'mawk:armhf=1.3' depends on 'libx', which no "
	    "candidate package provides" } },
	{ PKG("app", "1.0", "armhf", "Depends: libfoo\n") PKG("libfoo", "2.0", "armhf", ""), NULL,
	  { "app" }, "libfoo",
	  { "problem 1: 'app:armhf=1.0' depends on 'libfoo'",
	    "problem 1: the recipe excludes 'libfoo'" } },
};

START_TEST(explained)
{
	struct rfix f;
	char *log;

	rfix_setup(&f, cases[_i].armhf, cases[_i].armel);
	for (int i = 0; i < 2 && cases[_i].requests[i]; i++)
		rfix_request(&f, cases[_i].requests[i]);
	if (cases[_i].exclude)
		strv_push(&f.r.excludes, cases[_i].exclude);
	ck_assert_int_eq(resolve_plan(&f.plan, &f.r, &f.ix, NULL), -MKI_E_RESOLVE);
	ck_assert_uint_eq(f.plan.n, 0);
	log = rfix_log(&f);
	for (int i = 0; i < 3 && cases[_i].lines[i]; i++)
		ck_assert_msg(strstr(log, cases[_i].lines[i]), "'%s' not in the log:\n%s",
			      cases[_i].lines[i], log);
	free(log);
	rfix_teardown(&f);
}
END_TEST

/* Each grouped line names at most eight packages, then how many more. */
START_TEST(long_group_shortened)
{
	struct rfix f;
	struct buf idx = { 0 };
	char *log;
	int i;

	buf_adds(&idx, PKG("app", "1.0", "armhf", "Depends: awk\n"));
	for (i = 0; i < 11; i++)
		buf_addf(&idx, "Package: awk%02d\nVersion: 1\nArchitecture: armhf\nProvides: awk\n"
			       "Depends: libx\nFilename: pool/awk%02d.deb\nSize: 1\nSHA256: "
			       RFIX_SHA "\n\n", i, i);
	rfix_setup(&f, idx.p, NULL);
	rfix_request(&f, "app");
	ck_assert_int_eq(resolve_plan(&f.plan, &f.r, &f.ix, NULL), -MKI_E_RESOLVE);
	log = rfix_log(&f);
	ck_assert_msg(strstr(log, "'awk07:armhf=1' and 3 more depends on 'libx'"), "log:\n%s",
		      log);
	ck_assert_ptr_null(strstr(log, "'awk08:armhf=1'"));
	free(log);
	buf_release(&idx);
	rfix_teardown(&f);
}
END_TEST

Suite *resolve_problems_suite(void)
{
	Suite *s = suite_create("resolve_problems");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, explained, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, long_group_shortened);
	suite_add_tcase(s, tc);
	return s;
}
