/* The layer cache's remote side (layer/layerreg.c): when it contacts nobody, and a registry down. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
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
	tcase_add_test(tc, bad_trusted_key);
	suite_add_tcase(s, tc);
	return s;
}
