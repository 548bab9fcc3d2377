/* The layer cache's remote side (layer/layerreg.c): when it contacts nobody, and a registry down. */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "layersign_fixture.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "layer/layerreg.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char dir[] = "/tmp/mki-layerreg.XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	layersign_fixture_key(dir, "farm");
	log_set_level(LOG_ERROR);
}

static void teardown(void)
{
	fsutil_remove_tree(dir);
}

START_TEST(nothing_named_or_offline)
{
	struct recipe r = { 0 };
	struct settings st = { 0 };

	ck_assert_ptr_null(layerreg_open(&r, &st));
	st.layer_registry = xstrdup("http://127.0.0.1:1/a");
	st.offline = 1;
	ck_assert_ptr_null(layerreg_open(&r, &st));
	free(st.layer_registry);
	layerreg_push(NULL, KEY, "/nonexistent", 0);
	ck_assert_int_eq(layerreg_pull(NULL, dir, KEY, "/nonexistent", 1), 0);
}
END_TEST

/* A registry that is down: no layer, nothing left in the cache, not an error. */
START_TEST(registry_down)
{
	struct recipe r = { 0 };
	static char url[] = "http://127.0.0.1:1/mkimage/layers";
	struct settings st = { .layer_registry = url, .stall_timeout = 2 };
	struct layerreg *lr;
	char *layer = xasprintf("%s/layers/" KEY, dir), *pub = xasprintf("%s/farm.pub", dir);

	strv_push(&r.layers.trusted_keys, pub);
	lr = layerreg_open(&r, &st);
	ck_assert_ptr_nonnull(lr);
	ck_assert_int_eq(layerreg_pull(lr, dir, KEY, layer, 1 << 20), 0);
	ck_assert_int_ne(access(layer, F_OK), 0);
	layerreg_free(lr);
	strv_release(&r.layers.trusted_keys);
	free(layer);
	free(pub);
}
END_TEST

/* Files in dir/layers: none may be left by a pull that failed. */
static int n_layer_files(void)
{
	char *path = xasprintf("%s/layers", dir);
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	free(path);
	return n;
}

/*
 * A registry that takes the connection and never answers, slower than any stall rule: the pull
 * ends at its bound (MKIMAGE_REGISTRY_GRACE, here 1 s) with one warning saying so and nothing in
 * the cache; the push of the layer the build then stores is not tried (said at info level).
 */
START_TEST(registry_silent)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t n = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct recipe r = { 0 };
	struct settings st = { .stall_timeout = 60, .registry_grace = 1,
			       .registry_min_rate = 1 << 20 };
	char *layer = xasprintf("%s/layers/" KEY, dir), *pub = xasprintf("%s/farm.pub", dir);
	char *key = xasprintf("%s/farm.key", dir);
	struct layerreg *lr;
	unsigned warnings = log_warning_count();
	double t0;

	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &n), 0);
	st.layer_registry = xasprintf("http://127.0.0.1:%d/mkimage/layers", ntohs(a.sin_port));
	st.layer_sign_key = key;
	strv_push(&r.layers.trusted_keys, pub);
	lr = layerreg_open(&r, &st);
	ck_assert_ptr_nonnull(lr);
	t0 = log_now();
	ck_assert_int_eq(layerreg_pull(lr, dir, KEY, layer, 1 << 20), 0);
	ck_assert_msg(log_now() - t0 < 2.5, "the pull took %.1f s, its bound is 1 s",
		      log_now() - t0);
	ck_assert_uint_eq(log_warning_count(), warnings + 1);
	ck_assert_int_eq(n_layer_files(), 0);
	t0 = log_now();
	layerreg_push(lr, KEY, "/nonexistent", 0);
	ck_assert_msg(log_now() - t0 < 0.5, "a push to a registry that failed its pull was tried");
	ck_assert_uint_eq(log_warning_count(), warnings + 1);
	layerreg_free(lr);
	strv_release(&r.layers.trusted_keys);
	free(st.layer_registry);
	free(layer);
	free(pub);
	free(key);
	close(fd);
}
END_TEST

/* A trusted key that cannot be read: the registry is not used at all. */
START_TEST(bad_trusted_key)
{
	struct recipe r = { 0 };
	static char url[] = "http://127.0.0.1:1/mkimage/layers";
	struct settings st = { .layer_registry = url };

	strv_push(&r.layers.trusted_keys, "/nonexistent.pub");
	ck_assert_ptr_null(layerreg_open(&r, &st));
	strv_release(&r.layers.trusted_keys);
}
END_TEST

Suite *layerreg_suite(void)
{
	Suite *s = suite_create("layerreg");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, nothing_named_or_offline);
	tcase_add_test(tc, registry_down);
	tcase_add_test(tc, registry_silent);
	tcase_add_test(tc, bad_trusted_key);
	suite_add_tcase(s, tc);
	return s;
}
