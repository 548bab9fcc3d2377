#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "debian/deb.h"
#include "lib/err.h"
#include "tree/dpkgdb.h"

START_TEST(version_order)
{
	ck_assert_int_lt(deb_version_cmp("1.0", "1.0-1"), 0);
	ck_assert_int_gt(deb_version_cmp("1:0.9", "1.0"), 0);
	ck_assert_int_lt(deb_version_cmp("1.0~rc1", "1.0"), 0);
	ck_assert_int_gt(deb_version_cmp("2.36-9+deb12u14", "2.36-9+deb12u4"), 0);
	ck_assert_int_eq(deb_version_cmp("0:1.2-3", "1.2-3"), 0);
	ck_assert_int_lt(deb_version_cmp("1.2a", "1.2+"), 0);
	ck_assert_int_gt(deb_version_cmp("10", "9"), 0);
}
END_TEST

START_TEST(control_parse)
{
	struct deb_control c = { 0 };
	const char *why = NULL;

	ck_assert_int_eq(deb_control_parse(&c, "Package: hello\nversion:  2.10-3\n"
					      "Description: short\n long line\n .\n more\n"
					      "\nPackage: second\n", NULL, &why), 0);
	ck_assert_uint_eq(c.n, 3);
	ck_assert_str_eq(deb_control_get(&c, "Version"), "2.10-3");
	ck_assert_str_eq(deb_control_get(&c, "description"), "short\n long line\n .\n more");
	ck_assert_ptr_null(deb_control_get(&c, "Depends"));
	deb_control_release(&c);
	ck_assert_int_eq(deb_control_parse(&c, "Package: x\nno colon here\n", NULL, &why),
			 -MKI_E_PACKAGE);
	ck_assert_ptr_nonnull(why);
	deb_control_release(&c);
	ck_assert_int_eq(deb_control_parse(&c, " continuation first\n", NULL, &why),
			 -MKI_E_PACKAGE);
	ck_assert_str_eq(why, "continuation line before any field");
	deb_control_release(&c);
	ck_assert_int_eq(deb_control_parse(&c, "Package: x\nno colon here\n", NULL, &why),
			 -MKI_E_PACKAGE);
	ck_assert_str_eq(why, "line is neither 'Field: value' nor a continuation");
	deb_control_release(&c);
	ck_assert_int_eq(deb_control_parse(&c, "Package: x\npackage: y\n", NULL, &why),
			 -MKI_E_PACKAGE);
	ck_assert_str_eq(why, "control:2: duplicate field in one stanza");
	deb_control_release(&c);
}
END_TEST

/* The reader's limits hold for control files too, with a package's error code. */
START_TEST(control_limits)
{
	struct deb_control c = { 0 };
	struct limits l;
	const char *why = NULL;

	runlimits_init(&l);
	l.v[LIMIT_FIELDS] = 2;
	ck_assert_int_eq(deb_control_parse(&c, "A: 1\nB: 2\n", &l, &why), 0);
	deb_control_release(&c);
	ck_assert_int_eq(deb_control_parse(&c, "A: 1\nB: 2\nC: 3\n", &l, &why),
			 -MKI_E_LIMIT_PKG);
	ck_assert_ptr_nonnull(strstr(why, "more than 2 fields"));
	deb_control_release(&c);
}
END_TEST

START_TEST(status_stanza_order)
{
	struct deb_control c = { 0 };
	struct strv cf = { 0 }, md5 = { 0 };
	struct dpkgdb_pkg p = { .control = &c, .dpkg_name = "x", .conffiles = &cf,
				.conffile_md5s = &md5 };
	struct buf out = { 0 };
	const char *why;

	ck_assert_int_eq(deb_control_parse(&c, "Package: x\nVersion: 1\nArchitecture: armhf\n"
					      "Homepage: https://example.org\nEssential: yes\n"
					      "Description: d\n more\nDepends: y\n", NULL, &why), 0);
	strv_push(&cf, "/etc/x.conf");
	strv_push(&md5, "d41d8cd98f00b204e9800998ecf8427e");
	dpkgdb_status_stanza(&out, &p, "install ok unpacked");
	ck_assert_str_eq(out.p, "Package: x\nEssential: yes\nStatus: install ok unpacked\n"
				"Architecture: armhf\nVersion: 1\nDepends: y\nConffiles:\n"
				" /etc/x.conf d41d8cd98f00b204e9800998ecf8427e\n"
				"Description: d\n more\nHomepage: https://example.org\n\n");
	buf_release(&out);
	strv_release(&cf);
	strv_release(&md5);
	deb_control_release(&c);
}
END_TEST

START_TEST(triggers)
{
	struct strv file = { 0 }, expl = { 0 };
	const char *why = NULL;

	ck_assert_int_eq(dpkgdb_add_triggers(&file, &expl, "# c\ninterest /usr/lib/x\n"
					     "interest-noawait ldconfig\nactivate-noawait y\n",
					     "p:armhf", &why), 0);
	ck_assert_uint_eq(file.n, 1);
	ck_assert_str_eq(file.v[0], "/usr/lib/x p:armhf");
	ck_assert_uint_eq(expl.n, 1);
	ck_assert_str_eq(expl.v[0], "ldconfig p:armhf/noawait");
	ck_assert_int_eq(dpkgdb_add_triggers(&file, &expl, "interest ../etc\n", "p", &why),
			 -MKI_E_PACKAGE);
	ck_assert_int_eq(dpkgdb_add_triggers(&file, &expl, "interest\n", "p", &why),
			 -MKI_E_PACKAGE);
	strv_release(&file);
	strv_release(&expl);
}
END_TEST

Suite *deb_suite(void)
{
	Suite *s = suite_create("deb");
	TCase *tc = tcase_create("deb");

	tcase_add_test(tc, version_order);
	tcase_add_test(tc, control_parse);
	tcase_add_test(tc, control_limits);
	tcase_add_test(tc, status_stanza_order);
	tcase_add_test(tc, triggers);
	suite_add_tcase(s, tc);
	return s;
}
