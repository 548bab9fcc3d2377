#include <check.h>
#include <stdlib.h>

#include "fetch.h"

START_TEST(url_join_encodes_like_apt)
{
	char *u = fetch_url_join("http://127.0.0.1/debian/", "pool/main/b/busybox/busybox_1:1.35.0-4+b1_armhf.deb");

	ck_assert_str_eq(u, "http://127.0.0.1/debian/pool/main/b/busybox/busybox_1%3A1.35.0-4%2Bb1_armhf.deb");
	free(u);
	u = fetch_url_join("file:///srv/m", "pool/a b~c%.deb");
	ck_assert_str_eq(u, "file:///srv/m/pool/a%20b~c%25.deb");
	free(u);
}
END_TEST

Suite *fetch_suite(void)
{
	Suite *s = suite_create("fetch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, url_join_encodes_like_apt);
	suite_add_tcase(s, tc);
	return s;
}
