/* Which versions of each (name, arch) the solver may choose, on real libsolv pools. */
#include "resolve_fixture.h"

#define LIBFOO                                                                            \
	PKG("libfoo", "1.0", "armhf", "") PKG("libfoo", "2.0", "armhf", "")               \
	PKG("libfoo", "1.5", "armhf", "") PKG("data", "1", "all", "") PKG("data", "2", "all", "")
#define LIBFOO_EL PKG("libfoo", "1.0", "armel", "") PKG("libfoo", "2.0", "armel", "")

/* apt's candidate: the newest of each (name, arch), also marked as the best. */
START_TEST(newest_by_default)
{
	struct rfix f;

	rfix_setup(&f, LIBFOO, LIBFOO_EL);
	rfix_load(&f);
	ck_assert_int_eq(resolve_choose_candidates(&f.c), 0);
	ck_assert(rfix_considered(&f, "libfoo", "armhf", "2.0"));
	ck_assert(!rfix_considered(&f, "libfoo", "armhf", "1.5"));
	ck_assert(!rfix_considered(&f, "libfoo", "armhf", "1.0"));
	ck_assert(rfix_considered(&f, "libfoo", "armel", "2.0"));
	ck_assert(!rfix_considered(&f, "libfoo", "armel", "1.0"));
	ck_assert(rfix_considered(&f, "data", "all", "2"));
	ck_assert(!rfix_considered(&f, "data", "all", "1"));
	ck_assert_int_eq(f.c.best[rfix_find(&f, "libfoo", "armhf", "2.0")], 1);
	ck_assert_int_eq(f.c.best[rfix_find(&f, "libfoo", "armhf", "1.5")], 0);
	ck_assert_ptr_eq(f.c.pool->considered, &f.c.considered);
	rfix_teardown(&f);
}
END_TEST

/* A pin selects its version for its architecture only (the primary when none is written). */
START_TEST(pin_selects_version)
{
	struct rfix f;

	rfix_setup(&f, LIBFOO, LIBFOO_EL);
	rfix_request(&f, "libfoo=1.5");
	rfix_request(&f, "data=1");
	rfix_load(&f);
	ck_assert_int_eq(resolve_choose_candidates(&f.c), 0);
	ck_assert(rfix_considered(&f, "libfoo", "armhf", "1.5"));
	ck_assert(!rfix_considered(&f, "libfoo", "armhf", "2.0"));
	ck_assert(rfix_considered(&f, "libfoo", "armel", "2.0"));
	ck_assert(rfix_considered(&f, "data", "all", "1"));
	ck_assert(!rfix_considered(&f, "data", "all", "2"));
	ck_assert_int_eq(f.c.best[rfix_find(&f, "libfoo", "armhf", "2.0")], 1);
	rfix_teardown(&f);

	rfix_setup(&f, LIBFOO, LIBFOO_EL);
	rfix_request(&f, "libfoo:armel=1.0");
	rfix_load(&f);
	ck_assert_int_eq(resolve_choose_candidates(&f.c), 0);
	ck_assert(rfix_considered(&f, "libfoo", "armel", "1.0"));
	ck_assert(!rfix_considered(&f, "libfoo", "armel", "2.0"));
	ck_assert(rfix_considered(&f, "libfoo", "armhf", "2.0"));
	rfix_teardown(&f);
}
END_TEST

/* allow_older opens every version. */
START_TEST(allow_older_opens_all)
{
	struct rfix f;

	rfix_setup(&f, LIBFOO, NULL);
	f.r.allow_older = 1;
	rfix_load(&f);
	ck_assert_int_eq(resolve_choose_candidates(&f.c), 0);
	ck_assert(rfix_considered(&f, "libfoo", "armhf", "1.0"));
	ck_assert(rfix_considered(&f, "libfoo", "armhf", "1.5"));
	ck_assert(rfix_considered(&f, "libfoo", "armhf", "2.0"));
	ck_assert_int_eq(f.c.best[rfix_find(&f, "libfoo", "armhf", "1.0")], 0);
	rfix_teardown(&f);
}
END_TEST

/* A missing pinned version names the ones there are; two pins on one package conflict. */
static const struct {
	const char *pins[2], *message;
} bad_pins[] = {
	{ { "libfoo=3.0", NULL },
	  "version '3.0' of 'libfoo' is not available for armhf (available: 1.0, 2.0, 1.5)" },
	{ { "libfoo:armel=1.5", NULL },
	  "version '1.5' of 'libfoo' is not available for armel (available: 1.0, 2.0)" },
	{ { "libfoo=1.0", "libfoo=2.0" },
	  "conflicting pins: 'libfoo=1.0' (line 1) and 'libfoo=2.0' (line 2)" },
};

START_TEST(bad_pin_refused)
{
	struct rfix f;
	char *log;

	rfix_setup(&f, LIBFOO, LIBFOO_EL);
	for (int i = 0; i < 2 && bad_pins[_i].pins[i]; i++)
		rfix_request(&f, bad_pins[_i].pins[i]);
	rfix_load(&f);
	ck_assert_int_eq(resolve_choose_candidates(&f.c), -MKI_E_RESOLVE);
	log = rfix_log(&f);
	ck_assert_msg(strstr(log, bad_pins[_i].message), "log: %s", log);
	free(log);
	rfix_teardown(&f);
}
END_TEST

/* Unknown names are not this step's to report: the request names them. */
START_TEST(unknown_pin_left_to_request)
{
	struct rfix f;

	rfix_setup(&f, LIBFOO, NULL);
	rfix_request(&f, "libfoq=1.0");
	rfix_load(&f);
	ck_assert_int_eq(resolve_choose_candidates(&f.c), 0);
	rfix_teardown(&f);
}
END_TEST

/* --locked: exactly the lock's versions; what the lock does not name is not considered. */
START_TEST(locked_versions)
{
	struct rfix f;
	char *lock;
	FILE *out;

	rfix_setup(&f, LIBFOO, LIBFOO_EL);
	lock = xasprintf("%s/lock", f.dir);
	out = fopen(lock, "w");
	ck_assert_ptr_nonnull(out);
	fputs("format: 1\nrecipe: " RFIX_SHA "\narchitectures: armhf armel\n"
	      "package: libfoo:armhf=1.0 sha256=" RFIX_SHA " size=1\n", out);
	fclose(out);
	ck_assert_int_eq(lockfile_read(&f.c.lock, lock), 0);
	f.c.locked = 1;
	rfix_request(&f, "libfoo=1.5"); /* pins give way to the lock */
	rfix_load(&f);
	ck_assert_int_eq(resolve_choose_candidates(&f.c), 0);
	ck_assert(rfix_considered(&f, "libfoo", "armhf", "1.0"));
	ck_assert(!rfix_considered(&f, "libfoo", "armhf", "1.5"));
	ck_assert(!rfix_considered(&f, "libfoo", "armhf", "2.0"));
	ck_assert(!rfix_considered(&f, "libfoo", "armel", "2.0"));
	ck_assert(!rfix_considered(&f, "data", "all", "2"));
	free(lock);
	rfix_teardown(&f);
}
END_TEST

Suite *resolve_candidates_suite(void)
{
	Suite *s = suite_create("resolve_candidates");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, newest_by_default);
	tcase_add_test(tc, pin_selects_version);
	tcase_add_test(tc, allow_older_opens_all);
	tcase_add_loop_test(tc, bad_pin_refused, 0, sizeof(bad_pins) / sizeof(bad_pins[0]));
	tcase_add_test(tc, unknown_pin_left_to_request);
	tcase_add_test(tc, locked_versions);
	suite_add_tcase(s, tc);
	return s;
}
