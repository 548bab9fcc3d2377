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

START_TEST(url_host_drops_userinfo_and_path)
{
	char h[64];

	ck_assert_int_eq(url_host("http://127.0.0.1:8080/debian/dists", h, sizeof(h)), 0);
	ck_assert_str_eq(h, "127.0.0.1:8080");
	ck_assert_int_eq(url_host("https://user:s3cret@mirror.example:443/x?token=1", h, sizeof(h)),
			 0);
	ck_assert_str_eq(h, "mirror.example:443");
	ck_assert_int_eq(url_host("https://a@b@[::1]:81", h, sizeof(h)), 0);
	ck_assert_str_eq(h, "[::1]:81");
	ck_assert_int_eq(url_host("http://127.0.0.1:8080?q=a@b", h, sizeof(h)), 0);
	ck_assert_str_eq(h, "127.0.0.1:8080");
	ck_assert_int_eq(url_host("file:///srv/repo", h, sizeof(h)), -1);
	ck_assert_int_eq(url_host("no scheme", h, sizeof(h)), -1);
	ck_assert_int_eq(url_host("http://127.000.000.001/", h, 8), -1);
}
END_TEST

START_TEST(url_redact_hides_userinfo)
{
	char *s = url_redact("https://user:s3cret@mirror.example:8443/debian");

	ck_assert_str_eq(s, "https://***@mirror.example:8443/debian");
	free(s);
	s = url_redact("http://127.0.0.1:8080/a@b");
	ck_assert_str_eq(s, "http://127.0.0.1:8080/a@b");
	free(s);
	s = url_redact("file:///srv/repo");
	ck_assert_str_eq(s, "file:///srv/repo");
	free(s);
}
END_TEST

Suite *url_suite(void)
{
	Suite *s = suite_create("url");
	TCase *tc = tcase_create("url");

	tcase_add_test(tc, url_join_encodes_like_apt);
	tcase_add_test(tc, url_join_one_slash);
	tcase_add_test(tc, url_join_escapes_every_other_byte);
	tcase_add_test(tc, url_host_drops_userinfo_and_path);
	tcase_add_test(tc, url_redact_hides_userinfo);
	suite_add_tcase(s, tc);
	return s;
}
