/*
 * One entry applied (unpack_entry.c), through unpack_plan on real .debs: replaced under Replaces,
 * kept when the owner replaces the newcomer, shared by M-A same instances, conflicts refused,
 * member names that climb out refused.
 */
#include "unpack_fixture.h"

START_TEST(overwrite_without_replaces_refused)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "usr/bin/x=A");
	deb(&f, "b", "armhf", "1", "", "usr/bin/x=B");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);
}
END_TEST

START_TEST(replaces_takes_over)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1.0", "", "usr/bin/x=A;usr/bin/y=Y");
	deb(&f, "b", "armhf", "1", "Replaces: a (<< 2)\n", "usr/bin/x=B");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "usr/bin/x", "B");
	ASSERT_OWNERS(&f, "usr/bin/x", "b");
	ck_assert(!listed(&f, "a", "/usr/bin/x"));
	ck_assert(listed(&f, "a", "/usr/bin/y"));
	ck_assert(listed(&f, "b", "/usr/bin/x"));
	fx_release(&f);
}
END_TEST

START_TEST(replaces_version_not_satisfied)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "2.0", "", "usr/bin/x=A");
	deb(&f, "b", "armhf", "1", "Replaces: a (<< 2)\n", "usr/bin/x=B");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);
}
END_TEST

START_TEST(owner_replacing_newcomer_keeps_its_file)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "Replaces: b\n", "usr/bin/x=A");
	deb(&f, "b", "armhf", "1", "", "usr/bin/x=B;usr/bin/z=Z");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "usr/bin/x", "A");
	ASSERT_OWNERS(&f, "usr/bin/x", "a");
	ASSERT_TREE(&f, "usr/bin/z", "Z");
	fx_release(&f);
}
END_TEST

START_TEST(ma_same_shares_identical_files)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "libx", "armhf", "1", "Multi-Arch: same\n",
	    "usr/lib/arm-linux-gnueabihf/libx.so=HF;usr/share/doc/libx/c=C");
	deb(&f, "libx", "armel", "1", "Multi-Arch: same\n",
	    "usr/lib/arm-linux-gnueabi/libx.so=EL;usr/share/doc/libx/c=C");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_OWNERS(&f, "usr/share/doc/libx/c", "libx:armhf,libx:armel");
	ASSERT_OWNERS(&f, "usr/lib/arm-linux-gnueabi/libx.so", "libx:armel");
	fx_release(&f);

	fx_init(&f);
	deb(&f, "libx", "armhf", "1", "Multi-Arch: same\n", "usr/share/doc/libx/c=C1");
	deb(&f, "libx", "armel", "1", "Multi-Arch: same\n", "usr/share/doc/libx/c=C2");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);
}
END_TEST

START_TEST(dotdot_member_refused)
{
	struct fx f;
	struct plan_entry *e;
	char *out;

	fx_init(&f);
	out = xasprintf("%s/evil.deb", f.dir);
	sh("printf '%%s' '{\"out\": \"%s\", \"control\": \"Package: evil\\nVersion: 1\\n"
	   "Architecture: armhf\\n\", \"members\": [{\"name\": \"./usr/\", \"type\": \"dir\"}, "
	   "{\"name\": \"./usr/../../escape\", \"data\": \"x\"}]}' | "
	   "python3 tests/integration/unpack_mkdeb.py", out);
	f.plan.v = xcalloc(1, sizeof(*f.plan.v));
	f.plan.n = 1;
	e = &f.plan.v[0];
	e->name = xstrdup("evil");
	e->arch = xstrdup("armhf");
	e->version = xstrdup("1");
	e->multi_arch = xstrdup("no");
	e->path = out;
	ck_assert_int_eq(run(&f), -MKI_E_PACKAGE);
	fx_release(&f);
}
END_TEST

Suite *unpack_entry_suite(void)
{
	Suite *s = suite_create("unpack_entry");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, overwrite_without_replaces_refused);
	tcase_add_test(tc, replaces_takes_over);
	tcase_add_test(tc, replaces_version_not_satisfied);
	tcase_add_test(tc, owner_replacing_newcomer_keeps_its_file);
	tcase_add_test(tc, ma_same_shares_identical_files);
	tcase_add_test(tc, dotdot_member_refused);
	suite_add_tcase(s, tc);
	return s;
}
