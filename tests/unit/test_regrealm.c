/* Where a registry's credentials may go (layer/regrealm.c): the token realm's place and scheme. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "lib/str.h"
#include "layer/regrealm.h"

static const struct {
	const char *registry, *realm, *allowed;
	int ret;
	const char *why; /* in the reason; for a refusal, the entry that would allow it */
} cases[] = {
	/* The registry's own place: its scheme or https. */
	{ "http://127.0.0.1:5000/mkimage/layers", "http://127.0.0.1:5000/token", NULL, 0, NULL },
	{ "https://example.com/a", "https://example.com/service/token?x=1", NULL, 0, NULL },
	{ "https://example.com/a", "https://example.com:443/token", NULL, 0, NULL },
	{ "https://example.com:443/a", "https://example.com/token", NULL, 0, NULL },
	{ "http://example.com/a", "http://example.com:80/token", NULL, 0, NULL },
	{ "http://[::1]:5000/a", "http://[::1]:5000/token", NULL, 0, NULL },
	{ "http://[fe80::a]:5000/a", "http://[FE80::A]:5000/token", NULL, 0, NULL },
	/* Another port is another server; another host, another scheme's default port. */
	{ "http://127.0.0.1:5000/a", "http://127.0.0.1:5001/token", NULL, -EACCES,
	  "not to its own host '127.0.0.1:5000'" },
	{ "http://127.0.0.1:5000/a", "http://127.0.0.1:5001/token", NULL, -EACCES,
	  "MKIMAGE_REGISTRY_TOKEN_HOSTS=127.0.0.1:5001 sends them" },
	{ "https://example.com/a", "https://example.org/token", NULL, -EACCES,
	  "MKIMAGE_REGISTRY_TOKEN_HOSTS=example.org sends them" },
	{ "http://example.com/a", "https://example.com/token", NULL, -EACCES,
	  "not to its own host 'example.com:80'" },
	{ "http://[::1]:5000/a", "http://[::1]:5001/t", NULL, -EACCES, "=[::1]:5001 sends" },
	/* http under https: refused on the registry's own host too. */
	{ "https://example.com/a", "http://example.com/token", NULL, -EACCES,
	  "in the clear to 'http://example.com/token', not to its own host "
	  "'example.com:443': its credentials are not sent there" },
	{ "https://example.com/a", "http://example.com/token", NULL, -EACCES,
	  "MKIMAGE_REGISTRY_TOKEN_HOSTS=http://example.com sends them" },
	{ "https://example.com:5000/a", "http://example.com:5000/token", NULL, -EACCES,
	  "=http://example.com:5000 " },
	/* Allowed by the farm: HOST[:PORT] for https (or http under http), http:// for clear. */
	{ "http://127.0.0.1:5000/a", "http://127.0.0.1:5001/token", "127.0.0.1:5001", 0, NULL },
	{ "http://127.0.0.1:5000/a", "http://127.0.0.1:5001/token", "x, 127.0.0.1:5001 ,y", 0,
	  NULL },
	{ "http://127.0.0.1:5000/a", "http://127.0.0.1:5001/token", "a.example 127.0.0.1:5001", 0,
	  NULL },
	{ "https://example.com/a", "https://example.org/token", "EXAMPLE.org", 0, NULL },
	{ "https://example.com/a", "https://example.org/token", "https://example.org:443", 0,
	  NULL },
	{ "https://example.com/a", "https://example.org:8443/t", "example.org:8443", 0, NULL },
	{ "https://example.com/a", "http://example.org/token", "http://example.org", 0, NULL },
	{ "https://example.com/a", "http://example.com/token", "http://example.com",
	  0, NULL },
	/* ... and nothing more: not another port, not the clear without http://, no prefix. */
	{ "http://127.0.0.1:5000/a", "http://127.0.0.1:5001/token", "127.0.0.1", -EACCES, NULL },
	{ "http://127.0.0.1:5000/a", "http://127.0.0.1:5001/token", "127.0.0.1:50011", -EACCES,
	  NULL },
	{ "http://127.0.0.1:5000/a", "http://127.0.0.1:5001/token", "127.0.0.1:5001x", -EACCES,
	  NULL },
	{ "https://example.com/a", "https://example.org:8443/t", "example.org", -EACCES,
	  NULL },
	{ "https://example.com/a", "https://example.org/t", "org", -EACCES, NULL },
	{ "https://example.com/a", "https://example.org/t", "evil.example.org", -EACCES,
	  NULL },
	{ "https://example.com/a", "http://example.org/token", "example.org", -EACCES,
	  "requests in the clear to" },
	{ "https://example.com/a", "http://example.org/token", "https://example.org",
	  -EACCES, NULL },
	{ "https://example.com/a", "https://example.org/t", "", -EACCES, NULL },
	{ "https://example.com/a", "https://example.org/t", ",,  ,", -EACCES, NULL },
	/* Realms that name no host plainly. */
	{ "https://example.com/a", "https://example.com:pw@example.com/t", NULL, -EINVAL,
	  "is no http(s) URL of a host" },
	{ "https://example.com/a", "https://example.com@example.net/t", NULL, -EINVAL,
	  NULL },
	{ "https://example.com/a", "https://example.com:0/t", NULL, -EINVAL, NULL },
	{ "https://example.com/a", "https://example.com:65536/t", NULL, -EINVAL, NULL },
	{ "https://example.com/a", "https://example.com:/t", NULL, -EINVAL, NULL },
	{ "https://example.com/a", "https://example.com:+443/t", NULL, -EINVAL, NULL },
	{ "https://example.com/a", "https:///t", NULL, -EINVAL, NULL },
	{ "https://example.com/a", "ftp://example.com/t", NULL, -EINVAL, NULL },
	{ "https://example.com/a", "https://[::1/t", NULL, -EINVAL, NULL },
	{ "https://example.com/a", "https://[::1]x/t", NULL, -EINVAL, NULL },
	{ "https://example.com/a", "https://example.com x/t", NULL, -EINVAL, NULL },
	{ "https://example.com/a", "https://example.com\r\n/t", NULL, -EINVAL, NULL },
	/* A registry URL with a host this parser does not take: nothing is sent anywhere. */
	{ "http://example.com%41/a", "http://example.com%41/t", "example.com%41", -EINVAL,
	  "names no host" },
};

START_TEST(realm)
{
	struct buf why = { 0 };
	int ret = regrealm_check(cases[_i].registry, cases[_i].realm, cases[_i].allowed, &why);

	ck_assert_msg(ret == cases[_i].ret, "'%s' under '%s' (allowed '%s'): %d, expected %d (%s)",
		      cases[_i].realm, cases[_i].registry, cases[_i].allowed, ret, cases[_i].ret,
		      why.p ? why.p : "");
	if (!ret)
		ck_assert_uint_eq(why.len, 0);
	else
		ck_assert_msg(why.len && (!cases[_i].why || strstr(why.p, cases[_i].why)),
			      "'%s' lacks '%s'", why.p, cases[_i].why);
	buf_release(&why);
}
END_TEST

Suite *regrealm_suite(void)
{
	Suite *s = suite_create("regrealm");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, realm, 0, sizeof(cases) / sizeof(cases[0]));
	suite_add_tcase(s, tc);
	return s;
}
