/* The OCI registry client (layer/registry.c): manifests, tags, credentials, URLs. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"
#include "layer/registry.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static void layer(struct registry_layer *l, int signed_)
{
	memset(l, 0, sizeof(*l));
	memcpy(l->digest, "sha256:" HEX, sizeof(l->digest));
	l->size = 53477376;
	l->key = xstrdup(KEY);
	if (signed_) {
		l->signature = xstrdup("c2ln");
		l->signer = xstrdup("f00d");
	}
}

START_TEST(manifest_round_trip)
{
	struct registry_layer in, out;
	struct buf b = { 0 };
	const char *why = NULL;

	layer(&in, _i);
	registry_manifest_build(&in, &b);
	ck_assert_msg(strstr(b.p, "\"artifactType\":\"" REGISTRY_ARTIFACT_TYPE "\""), "%s", b.p);
	ck_assert(strstr(b.p, "\"mediaType\":\"" REGISTRY_MANIFEST_TYPE "\""));
	ck_assert(strstr(b.p, "\"mediaType\":\"" REGISTRY_EMPTY_TYPE "\""));
	ck_assert_int_eq(registry_manifest_parse(b.p, b.len, &out, &why), 0);
	ck_assert_str_eq(out.digest, in.digest);
	ck_assert(out.size == in.size);
	ck_assert_str_eq(out.key, KEY);
	if (_i) {
		ck_assert_str_eq(out.signature, "c2ln");
		ck_assert_str_eq(out.signer, "f00d");
	} else {
		ck_assert_ptr_null(out.signature);
	}
	registry_layer_release(&in);
	registry_layer_release(&out);
	buf_release(&b);
}
END_TEST

/* The built manifest with one substring replaced: each must be refused, saying why. */
static const struct {
	const char *from, *to, *why;
} broken[] = {
	{ "\"schemaVersion\":2", "\"schemaVersion\":1", "no OCI image manifest" },
	{ REGISTRY_MANIFEST_TYPE, "application/vnd.docker.distribution.manifest.v2+json",
	  "no OCI image manifest" },
	{ "\"artifactType\":\"application/vnd.mkimage.layer.v1\"", "\"artifactType\":\"x\"",
	  "artifactType" },
	{ "\"mediaType\":\"application/vnd.mkimage.layer.v1\"",
	  "\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\"", "media type" },
	{ "sha256:" HEX, "sha512:" HEX, "no sha256 digest" },
	{ "sha256:" HEX, "sha256:" HEX "aa", "no sha256 digest" },
	{ "\"size\":53477376", "\"size\":-1", "no size" },
	{ "\"size\":53477376", "\"size\":\"1\"", "no size" },
	{ "\"layers\":[{", "\"layers\":[{\"mediaType\":\"x\",\"digest\":\"sha256:" HEX
	  "\",\"size\":1},{", "exactly one layer" },
	{ "org.mkimage.layer.key", "org.example.key", "no layer key" },
	{ "\"org.mkimage.layer.key\":\"" KEY, "\"org.mkimage.layer.key\":\"0123",
	  "no layer key" },
	{ "}}", "}", "not valid JSON" },
	{ "{\"schemaVersion\":2", "{\"schemaVersion\":2,\"schemaVersion\":2", "not valid JSON" },
};

START_TEST(manifest_refused)
{
	struct registry_layer in, out;
	struct buf b = { 0 }, m = { 0 };
	const char *why = NULL, *at;

	layer(&in, 1);
	registry_manifest_build(&in, &b);
	at = strstr(b.p, broken[_i].from);
	ck_assert_msg(at, "'%s' not in %s", broken[_i].from, b.p);
	buf_add(&m, b.p, (size_t)(at - b.p));
	buf_adds(&m, broken[_i].to);
	buf_adds(&m, at + strlen(broken[_i].from));
	ck_assert_int_eq(registry_manifest_parse(m.p, m.len, &out, &why), -EBADMSG);
	ck_assert_msg(why && strstr(why, broken[_i].why), "case %d: '%s'", _i, why);
	ck_assert_ptr_null(out.key);
	registry_layer_release(&in);
	buf_release(&b);
	buf_release(&m);
}
END_TEST

START_TEST(tag)
{
	char t[REGISTRY_TAG_LEN + 1];

	registry_tag(KEY, t);
	ck_assert_str_eq(t, "layer-" KEY);
	ck_assert_uint_le(strlen(t), 128);
}
END_TEST

START_TEST(auth_file)
{
	/* "farm:s3cret pass" and "other:x" in base64 */
	const char *json = "{\"auths\": {\"https://registry.example:5000/v1/\": {\"auth\": "
			   "\"b3RoZXI6eA==\"}, \"127.0.0.1:5000\": {\"auth\": "
			   "\"ZmFybTpzM2NyZXQgcGFzcw==\"}, \"nopass:1\": {\"auth\": \"Zm9v\"}}}";
	char *up = NULL;

	ck_assert_int_eq(registry_auth_lookup(json, strlen(json), "127.0.0.1:5000", &up), 0);
	ck_assert_str_eq(up, "farm:s3cret pass");
	free(up);
	up = NULL;
	ck_assert_int_eq(registry_auth_lookup(json, strlen(json), "registry.example:5000", &up), 0);
	ck_assert_str_eq(up, "other:x");
	free(up);
	ck_assert_int_eq(registry_auth_lookup(json, strlen(json), "127.0.0.1:500", &up), -ENOENT);
	ck_assert_int_eq(registry_auth_lookup(json, strlen(json), "registry.example", &up), -ENOENT);
	ck_assert_int_eq(registry_auth_lookup(json, strlen(json), "nopass:1", &up), -EBADMSG);
	ck_assert_int_eq(registry_auth_lookup("{\"auths\": []}", 13, "a", &up), -EBADMSG);
	ck_assert_int_eq(registry_auth_lookup("{}", 2, "a", &up), -ENOENT);
	ck_assert_int_eq(registry_auth_lookup("{", 1, "a", &up), -EBADMSG);
}
END_TEST

static const struct {
	const char *url;
	int ok;
} urls[] = {
	{ "http://127.0.0.1:5000/mkimage/layers", 1 },
	{ "https://registry.example/farm/a-b_c.d/layers/", 1 },
	{ "ftp://127.0.0.1/x", 0 },
	{ "http://127.0.0.1:5000", 0 },
	{ "http://127.0.0.1:5000/", 0 },
	{ "http:///x", 0 },
	{ "http://127.0.0.1/Upper", 0 },
	{ "http://127.0.0.1/a//b", 0 },
	{ "http://127.0.0.1/a?b", 0 },
	{ "http://user:pw@h/a", 0 },
	{ "http://127.0.0.1/-a", 0 },
};

START_TEST(open_url)
{
	struct registry *g = NULL;
	struct buf why = { 0 };
	int ret = registry_open(&g, urls[_i].url, &(struct registry_access){ 0 }, &why);

	ck_assert_msg(urls[_i].ok ? !ret : ret == -EINVAL, "'%s': %d", urls[_i].url, ret);
	if (ret)
		ck_assert(strstr(why.p, "no registry repository"));
	else
		ck_assert_str_eq(registry_url(g), urls[_i].url);
	registry_free(g);
	buf_release(&why);
}
END_TEST

/* Nothing listens there: a refused connection is a reason, never a hang or a crash. */
START_TEST(registry_down)
{
	struct registry *g = NULL;
	struct registry_layer l;
	struct registry_access a = { .auth = "u:p", .stall = 2 };
	struct buf why = { 0 };

	log_set_level(LOG_ERROR);
	ck_assert_int_eq(registry_open(&g, "http://127.0.0.1:1/mkimage/layers", &a, &why), 0);
	ck_assert_int_eq(registry_get_manifest(g, "layer-" KEY, &l, &why), -MKI_E_NETWORK);
	ck_assert_msg(strstr(why.p, "127.0.0.1:1"), "%s", why.p);
	ck_assert_msg(!strstr(why.p, "u:p"), "a credential in '%s'", why.p);
	registry_free(g);
	buf_release(&why);
}
END_TEST

/* A registry that takes connections and never answers: its URL; the socket in *fd. */
static char *silent_registry(int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t n = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(*fd, 0);
	ck_assert_int_eq(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(*fd, 8), 0);
	ck_assert_int_eq(getsockname(*fd, (struct sockaddr *)&a, &n), 0);
	return xasprintf("http://127.0.0.1:%d/mkimage/layers", ntohs(a.sin_port));
}

/*
 * Every request ends by the deadline, whatever the stall rule would allow: a manifest, a blob
 * (saying how far it got), and one asked for after the deadline is not sent at all.
 */
START_TEST(deadline)
{
	struct registry *g = NULL;
	struct registry_layer l;
	struct buf why = { 0 };
	int fd, out = fileno(tmpfile());
	char *url = silent_registry(&fd);
	double t0 = log_now(), took;

	ck_assert_int_eq(registry_open(&g, url, &(struct registry_access){ .stall = 60 }, &why), 0);
	registry_set_deadline(g, t0 + 1);
	ck_assert_int_eq(registry_get_manifest(g, "layer-" KEY, &l, &why), -ETIMEDOUT);
	took = log_now() - t0;
	ck_assert_msg(took > 0.9 && took < 2.5, "cut after %.2f s, not at the 1 s deadline", took);
	ck_assert_msg(strstr(why.p, "/manifests/layer-" KEY "' was not over in time"), "%s", why.p);
	buf_release(&why);

	layer(&l, 1);
	t0 = log_now();
	registry_set_deadline(g, t0 + 0.5);
	ck_assert_int_eq(registry_get_blob(g, &l, out, &why), -ETIMEDOUT);
	ck_assert_msg(strstr(why.p, "/blobs/sha256:" HEX "' was not over in time (0 of 53477376 "
				    "bytes in)"), "%s", why.p);
	buf_release(&why);

	t0 = log_now();
	ck_assert_int_eq(registry_has_manifest(g, "layer-" KEY, &why), -ETIMEDOUT);
	ck_assert_msg(log_now() - t0 < 0.1, "a request past the deadline was tried");
	ck_assert_msg(strstr(why.p, "was not sent: the time for it was over"), "%s", why.p);
	buf_release(&why);

	registry_layer_release(&l);
	registry_free(g);
	close(fd);
	close(out);
	free(url);
}
END_TEST

Suite *registry_suite(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, manifest_round_trip, 0, 2);
	tcase_add_loop_test(tc, manifest_refused, 0, sizeof(broken) / sizeof(broken[0]));
	tcase_add_test(tc, tag);
	tcase_add_test(tc, auth_file);
	tcase_add_loop_test(tc, open_url, 0, sizeof(urls) / sizeof(urls[0]));
	tcase_add_test(tc, registry_down);
	tcase_add_test(tc, deadline);
	suite_add_tcase(s, tc);
	return s;
}
