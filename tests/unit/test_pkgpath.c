#include <check.h>
#include <errno.h>
#include <string.h>

#include "debian/pkgpath.h"
#include "lib/manifest.h"
#include "lib/str.h"

START_TEST(names_dpkg_refuses)
{
	const char *why = NULL;

	ck_assert_int_eq(pkgpath_check_name("./usr/bin/x", &why), 0);
	ck_assert_int_eq(pkgpath_check_name("./usr/b\netc/shadow", &why), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "newline"));
	ck_assert_int_eq(pkgpath_check_name("./usr/b\n", &why), -EINVAL);
	ck_assert_int_eq(pkgpath_check_name("./usr/tab\tand space ok", &why), 0);
}
END_TEST

START_TEST(admin_directory)
{
	const char *why = NULL;

	ck_assert_int_eq(pkgpath_check_admin("var/lib/dpkg", MF_DIR, &why), 0);
	ck_assert_int_eq(pkgpath_check_admin("var/lib/dpkg/info", MF_DIR, &why), 0);
	ck_assert_int_eq(pkgpath_check_admin("var/lib/dpkg/alternatives", MF_DIR, &why), 0);
	ck_assert_int_eq(pkgpath_check_admin("var/lib/dpkg", MF_SYMLINK, &why), -EPERM);
	ck_assert_int_eq(pkgpath_check_admin("var/lib/dpkg/status", MF_REG, &why), -EPERM);
	ck_assert_int_eq(pkgpath_check_admin("var/lib/dpkg/info/x.postinst", MF_REG, &why), -EPERM);
	ck_assert_int_eq(pkgpath_check_admin("var/lib/dpkg/info/sub", MF_DIR, &why), -EPERM);
	ck_assert_int_eq(pkgpath_check_admin("var/lib/dpkgx/status", MF_REG, &why), 0);
	ck_assert_int_eq(pkgpath_check_admin("var/lib/apt/lists", MF_DIR, &why), 0);
	ck_assert_int_eq(pkgpath_check_admin("usr/var/lib/dpkg/status", MF_REG, &why), 0);
}
END_TEST

START_TEST(escaped_names)
{
	struct buf b = { 0 };

	buf_add_escaped(&b, "a\nb\t\"c\\\x01\x7f");
	ck_assert_str_eq(b.p, "a\\nb\\t\\\"c\\\\\\x01\\x7f");
	buf_release(&b);
	buf_add_escaped(&b, "");
	ck_assert_str_eq(b.p, "");
	buf_release(&b);
}
END_TEST

Suite *pkgpath_suite(void)
{
	Suite *s = suite_create("pkgpath");
	TCase *tc = tcase_create("pkgpath");

	tcase_add_test(tc, names_dpkg_refuses);
	tcase_add_test(tc, admin_directory);
	tcase_add_test(tc, escaped_names);
	suite_add_tcase(s, tc);
	return s;
}
