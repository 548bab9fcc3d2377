/* The recipe's request as solver jobs, on real libsolv pools; every refusal in the user's words. */
#include "resolve_fixture.h"

#define ARCHIVE                                                                           \
	PKG("base-files", "12", "armhf", "Essential: yes\nPriority: required\n")          \
	PKG("bash", "5.2", "armhf", "Priority: required\n")                               \
	PKG("less", "590", "armhf", "Priority: important\n")                              \
	PKG("app", "1.0", "armhf", "") PKG("gawk", "5.2", "armhf", "Provides: awk\n")     \
	PKG("mawk", "1.3", "armhf", "Provides: awk\n")                                    \
	PKG("mta", "1", "armhf", "Provides: mail-transport-agent\n")                      \
	PKG("libc6", "2.36", "armhf", "Multi-Arch: same\n")
#define ARCHIVE_EL                                                                        \
	PKG("libc6", "2.36", "armel", "Multi-Arch: same\n")                               \
	PKG("tool", "1.0", "armel", "") PKG("base-files", "12", "armel", "Essential: yes\n")

/* Candidates chosen and whatprovides made, as resolve_plan() does before the request. */
static void prepare(struct rfix *f)
{
	rfix_load(f);
	ck_assert_int_eq(resolve_choose_candidates(&f->c), 0);
	pool_createwhatprovides(f->c.pool);
}

/* The jobs' descriptions, joined with "|". */
static char *whats(const struct rfix *f)
{
	ck_assert_int_eq(f->c.jobs.count, 2 * (int)f->c.job_what.n);
	return strv_join(&f->c.job_what, "|");
}

/* Requests as written; a virtual name with one provider; M-A same copies may coexist. */
START_TEST(requests_as_written)
{
	struct rfix f;
	char *w;

	rfix_setup(&f, ARCHIVE, ARCHIVE_EL);
	rfix_request(&f, "app");
	rfix_request(&f, "libc6:armel");
	rfix_request(&f, "mail-transport-agent");
	prepare(&f);
	ck_assert_int_eq(resolve_build_jobs(&f.c), 0);
	w = whats(&f);
	ck_assert_str_eq(w, "app|libc6:armel|mail-transport-agent|Multi-Arch: same");
	ck_assert_int_eq(f.c.jobs.elements[0], SOLVER_INSTALL | SOLVER_SOLVABLE_ONE_OF);
	ck_assert_int_eq(f.c.jobs.elements[4], SOLVER_INSTALL | SOLVER_SOLVABLE_PROVIDES);
	ck_assert_int_eq(f.c.jobs.elements[6], SOLVER_MULTIVERSION | SOLVER_SOLVABLE_ONE_OF);
	free(w);
	rfix_teardown(&f);
}
END_TEST

/* The base set grows with its level; only the primary architecture's (and "all") packages. */
static const struct {
	enum base_set base;
	const char *want;
} bases[] = {
	{ BASE_NONE, "Multi-Arch: same" },
	{ BASE_ESSENTIAL, "base-files (base set 'essential')|Multi-Arch: same" },
	{ BASE_REQUIRED, "base-files (base set 'required')|bash (base set 'required')|"
			 "Multi-Arch: same" },
	{ BASE_IMPORTANT, "base-files (base set 'important')|bash (base set 'important')|"
			  "less (base set 'important')|Multi-Arch: same" },
};

START_TEST(base_set)
{
	struct rfix f;
	char *w;

	rfix_setup(&f, ARCHIVE, ARCHIVE_EL);
	f.r.base = bases[_i].base;
	prepare(&f);
	ck_assert_int_eq(resolve_build_jobs(&f.c), 0);
	w = whats(&f);
	ck_assert_str_eq(w, bases[_i].want);
	free(w);
	rfix_teardown(&f);
}
END_TEST

/* Excludes: kept out of the base set and locked out; one no index lists is a warning. */
START_TEST(excludes)
{
	struct rfix f;
	char *w, *log;

	rfix_setup(&f, ARCHIVE, NULL);
	f.r.base = BASE_REQUIRED;
	strv_push(&f.r.excludes, "bash");
	strv_push(&f.r.excludes, "nosuch");
	prepare(&f);
	ck_assert_int_eq(resolve_build_jobs(&f.c), 0);
	w = whats(&f);
	ck_assert_str_eq(w, "base-files (base set 'required')|bash|Multi-Arch: same");
	ck_assert_int_eq(f.c.jobs.elements[2], SOLVER_LOCK | SOLVER_SOLVABLE_NAME);
	log = rfix_log(&f);
	ck_assert_ptr_nonnull(strstr(log, "excluded package 'nosuch' is not in any index"));
	free(log);
	free(w);
	rfix_teardown(&f);
}
END_TEST

/* Each refused request: -MKI_E_RESOLVE and a message saying what to write instead. */
static const struct {
	const char *spec, *exclude, *message;
} refusals[] = {
	{ "apq", NULL, "unknown package 'apq' (recipe line 1): no index lists it (did you mean "
		       "'app'?)" },
	{ "zzzzzzzz", NULL, "unknown package 'zzzzzzzz' (recipe line 1): no index lists it; "
			    "check the name" },
	{ "app:arm64", NULL, "unknown architecture 'arm64' in 'app:arm64' (recipe line 1): the "
			     "recipe's architectures are armhf, armel" },
	{ "tool", NULL, "'tool' is not available for armhf (recipe line 1), only for other "
			"architectures such as armel: write 'tool:armel'" },
	{ "app", "app", "'app' is both requested (recipe line 1) and excluded" },
	{ "awk", NULL, "'awk' (recipe line 1) is a virtual package provided by 2 packages: write "
		       "one of: gawk, mawk" },
	{ "app=0.9", NULL, "unknown package 'app' (recipe line 1)" },
};

START_TEST(refused)
{
	struct rfix f;
	char *log;

	rfix_setup(&f, ARCHIVE, ARCHIVE_EL);
	rfix_request(&f, refusals[_i].spec);
	if (refusals[_i].exclude)
		strv_push(&f.r.excludes, refusals[_i].exclude);
	rfix_load(&f);
	resolve_choose_candidates(&f.c); /* a missing pin is reported here too; not this test's */
	pool_createwhatprovides(f.c.pool);
	ck_assert_int_eq(resolve_build_jobs(&f.c), -MKI_E_RESOLVE);
	log = rfix_log(&f);
	ck_assert_msg(strstr(log, refusals[_i].message), "log: %s", log);
	free(log);
	rfix_teardown(&f);
}
END_TEST

/* Excluding all but one provider makes a virtual request that provider. */
START_TEST(virtual_narrowed_by_exclude)
{
	struct rfix f;

	rfix_setup(&f, ARCHIVE, NULL);
	rfix_request(&f, "awk");
	strv_push(&f.r.excludes, "mawk");
	prepare(&f);
	ck_assert_int_eq(resolve_build_jobs(&f.c), 0);
	ck_assert_str_eq(f.c.job_what.v[0], "awk");
	rfix_teardown(&f);
}
END_TEST

static void lock_of(struct rfix *f, const char *packages)
{
	char *lock = xasprintf("%s/lock", f->dir);
	FILE *out = fopen(lock, "w");

	ck_assert_ptr_nonnull(out);
	fprintf(out, "format: 1\nrecipe: " RFIX_SHA "\narchitectures: armhf armel\n%s", packages);
	fclose(out);
	ck_assert_int_eq(lockfile_read(&f->c.lock, lock), 0);
	f->c.locked = 1;
	free(lock);
}

/* --locked: one job per locked package (M-A same ones may coexist); a vanished one refused. */
START_TEST(locked_jobs)
{
	struct rfix f;
	char *w, *log;

	rfix_setup(&f, ARCHIVE, ARCHIVE_EL);
	lock_of(&f, "package: app:armhf=1.0 sha256=" RFIX_SHA " size=1\n"
		    "package: libc6:armel=2.36 sha256=" RFIX_SHA " size=1\n");
	prepare(&f);
	ck_assert_int_eq(resolve_build_locked_jobs(&f.c), 0);
	w = whats(&f);
	ck_assert_str_eq(w, "the lock file|the lock file|Multi-Arch: same");
	free(w);
	rfix_teardown(&f);

	rfix_setup(&f, ARCHIVE, ARCHIVE_EL);
	lock_of(&f, "package: app:armhf=1.0 sha256=" RFIX_SHA " size=1\n"
		    "package: gone:armhf=2 sha256=" RFIX_SHA " size=1\n");
	prepare(&f);
	ck_assert_int_eq(resolve_build_locked_jobs(&f.c), -MKI_E_LOCK);
	log = rfix_log(&f);
	ck_assert_ptr_nonnull(strstr(log, "the lock names 'gone:armhf=2', which no index lists "
					  "any more"));
	free(log);
	rfix_teardown(&f);
}
END_TEST

Suite *resolve_jobs_suite(void)
{
	Suite *s = suite_create("resolve_jobs");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, requests_as_written);
	tcase_add_loop_test(tc, base_set, 0, sizeof(bases) / sizeof(bases[0]));
	tcase_add_test(tc, excludes);
	tcase_add_loop_test(tc, refused, 0, sizeof(refusals) / sizeof(refusals[0]));
	tcase_add_test(tc, virtual_narrowed_by_exclude);
	tcase_add_test(tc, locked_jobs);
	suite_add_tcase(s, tc);
	return s;
}
