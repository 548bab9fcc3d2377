/*
 * unpack_plan on real .debs: files created and owned, directories and their metadata, the
 * manifest and the packages' lists.
 */
#include "unpack_fixture.h"

START_TEST(creates_and_owns)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "usr/bin/a=A;etc/a/;usr/bin/la->a");
	deb(&f, "b", "all", "1", "", "usr/share/b=B;usr/bin/b=bb");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "usr/bin/a", "A");
	ASSERT_TREE(&f, "usr/bin/b", "bb");
	ASSERT_OWNERS(&f, "usr/bin/a", "a");
	ASSERT_OWNERS(&f, "usr/bin", "a,b"); /* a directory is owned by everyone who ships it */
	ASSERT_OWNERS(&f, "usr/bin/la", "a");
	ck_assert_str_eq(manifest_get(&f.stage.manifest, "usr/bin/la")->target, "a");
	ck_assert(listed(&f, "a", "/usr/bin/a"));
	ck_assert(listed(&f, "b", "/usr/share/b"));
	fx_release(&f);
}
END_TEST

START_TEST(directories_and_files)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "opt/d/f=F");
	deb(&f, "b", "armhf", "1", "", "opt/d->elsewhere");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "opt/d/f", "F");
	ASSERT_OWNERS(&f, "opt/d", "a,b");
	fx_release(&f);

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "opt/d/f=F");
	deb(&f, "b", "armhf", "1", "", "opt/d=file");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "opt/d=file");
	deb(&f, "b", "armhf", "1", "", "opt/d/f=F");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);
}
END_TEST

Suite *unpack_suite(void)
{
	Suite *s = suite_create("unpack");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, creates_and_owns);
	tcase_add_test(tc, directories_and_files);
	suite_add_tcase(s, tc);
	return s;
}
