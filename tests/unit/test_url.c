#include <check.h>
#include <stdlib.h>

#include "lib/url.h"

START_TEST(url_join_encodes_like_apt)
{
	char *u = url_join("http://127.0.0.1/debian/",
			   "pool/main/b/busybox/busybox_1:1.35.0-4+b1_armhf.deb");

	ck_assert_str_eq(u, "http://127.0.0.1/debian/pool/main/b/busybox/"
			    "busybox_1%3A1.35.0-4%2Bb1_armhf.deb");
	free(u);
	u = url_join("file:///srv/m", "pool/a b~c%.deb");
	ck_assert_str_eq(u, "file:///srv/m/pool/a%20b~c%25.deb");
	free(u);
}
END_TEST

/* However many slashes end the base, exactly one separates it from the path. */
START_TEST(url_join_one_slash)
{
	char *u = url_join("http://h/d///", "dists/x/InRelease");

	ck_assert_str_eq(u, "http://h/d/dists/x/InRelease");
	free(u);
	u = url_join("", "a");
	ck_assert_str_eq(u, "/a");
	free(u);
}
END_TEST

/* Bytes outside ASCII and control bytes are escaped, each as two upper-case hex digits. */
START_TEST(url_join_escapes_every_other_byte)
{
	char *u = url_join("http://h", "p/\xc3\xa9\t?#&=");

	ck_assert_str_eq(u, "http://h/p/%C3%A9%09%3F%23%26%3D");
	free(u);
}
END_TEST

Suite *url_suite(void)
{
	Suite *s = suite_create("url");
	TCase *tc = tcase_create("url");

	tcase_add_test(tc, url_join_encodes_like_apt);
	tcase_add_test(tc, url_join_one_slash);
	tcase_add_test(tc, url_join_escapes_every_other_byte);
	suite_add_tcase(s, tc);
	return s;
}
