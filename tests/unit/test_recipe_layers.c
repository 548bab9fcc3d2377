/* The layers group (recipe_layers.c): its rows' checks, and none of it in the digest. */
#include "recipe_fixture.h"

/* Where layers are shared is not what the image is: the layers group keeps the digest. */
START_TEST(layers_not_in_digest)
{
	struct recipe a, b;
	struct buf f = { 0 };
	char *p = write_recipe(MINIMAL), *key = xasprintf("%s/farm.pub", dir);

	ck_assert_int_eq(recipe_load(&a, p, &unit_checks), 0);
	free(p);
	recipe_format(&a, &f);
	ck_assert_ptr_null(strstr(f.p, "layers"));
	buf_release(&f);
	ck_assert_int_eq(fsutil_write_atomic(key, "x", 1), 0);
	p = write_recipe(MINIMAL "layers = { registry = \"http://127.0.0.1:5000/mkimage/layers\"; "
			 "trusted_keys = [ \"farm.pub\" ]; };");
	ck_assert_int_eq(recipe_load(&b, p, &unit_checks), 0);
	ck_assert_str_eq(b.layers.registry, "http://127.0.0.1:5000/mkimage/layers");
	ck_assert_uint_eq(b.layers.trusted_keys.n, 1);
	ck_assert_str_eq(a.digest, b.digest);
	recipe_format(&b, &f);
	ck_assert_ptr_nonnull(strstr(f.p, "registry = \"http://127.0.0.1:5000/mkimage/layers\""));
	buf_release(&f);
	recipe_release(&a);
	recipe_release(&b);
	free(p);
	free(key);
}
END_TEST

/* A registry is http(s)://HOST[:PORT]/REPO; keys are strings naming files. */
START_TEST(layers_refused)
{
	static const char *const bad[] = {
		"layers = { registry = \"ftp://127.0.0.1/x\"; };",
		"layers = { registry = \"http://127.0.0.1\"; };",
		"layers = { registry = \"http://127.0.0.1/r?x\"; };",
		"layers = { sign_key = 5; };",
		"layers = { sign_key = \"missing.key\"; };",
		"layers = { trusted_keys = 5; };",
		"layers = { trusted_keys = [ 5 ]; };",
		"layers = { trusted_keys = [ \"missing.pub\" ]; };",
	};
	struct recipe r;
	char *text, *p;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		text = xasprintf(MINIMAL "%s", bad[i]);
		p = write_recipe(text);
		ck_assert_msg(recipe_load(&r, p, &unit_checks) == -MKI_E_RECIPE, "accepted: %s",
			      bad[i]);
		free(text);
		free(p);
	}
}
END_TEST

Suite *recipe_layers_suite(void)
{
	Suite *s = suite_create("recipe_layers");
	TCase *tc = tcase_create("recipe_layers");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, layers_not_in_digest);
	tcase_add_test(tc, layers_refused);
	suite_add_tcase(s, tc);
	return s;
}
