/*
 * The sdk group (recipe_sdk.c): -dev packages by name or name:arch of the recipe's
 * architectures, never a version; shown only when set, and never part of the digest, so that
 * adding it keeps the image's lock valid.
 */
#include "recipe_fixture.h"

#define ARMS "name = \"t\"; architecture = \"armhf\"; auxiliary_architectures = [ \"armel\" ];" \
	" packages = { install = [ \"hello\" ]; };\n"

static void teardown(void)
{
	fsutil_remove_tree(dir);
}

static int parse(struct recipe *r, const char *text)
{
	return recipe_parse_text(r, text, "r.cfg", dir, &unit_checks);
}

START_TEST(packages_kept_digest_unchanged)
{
	struct recipe a, b;
	struct buf out = { 0 };

	ck_assert_int_eq(parse(&a, ARMS), 0);
	ck_assert_int_eq(a.sdk.image_libraries, 1);
	ck_assert_uint_eq(a.sdk.packages.n, 0);
	ck_assert_int_eq(parse(&b, ARMS "sdk = { packages = [ \"zlib1g-dev\", \"libssl-dev:armel\" ];"
			       " image_libraries = false; };"), 0);
	ck_assert_uint_eq(b.sdk.packages.n, 2);
	ck_assert_str_eq(b.sdk.packages.v[1], "libssl-dev:armel");
	ck_assert_int_eq(b.sdk.image_libraries, 0);
	ck_assert_str_eq(a.digest, b.digest);
	recipe_format(&a, &out);
	ck_assert_ptr_null(strstr(out.p, "sdk ="));
	buf_release(&out);
	recipe_format(&b, &out);
	ck_assert_ptr_nonnull(strstr(out.p, "sdk = {"));
	ck_assert_ptr_nonnull(strstr(out.p, "\"libssl-dev:armel\""));
	buf_release(&out);
	recipe_release(&a);
	recipe_release(&b);
}
END_TEST

START_TEST(bad_packages_refused)
{
	struct recipe r;

	ck_assert_int_eq(parse(&r, ARMS "sdk = { packages = [ \"zlib1g-dev=1.2\" ]; };"),
			 -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, ARMS "sdk = { packages = [ \"zlib1g-dev:arm64\" ]; };"),
			 -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, ARMS "sdk = { packages = [ \"Bad Name\" ]; };"), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, ARMS "sdk = { packages = [ 1 ]; };"), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, ARMS "sdk = { architecture = \"x86_64\"; };"), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, ARMS "sdk = { architecture = \"arm64\"; };"), 0);
	ck_assert_str_eq(r.sdk.arch, "arm64");
	recipe_release(&r);
}
END_TEST

/* recipe_add_package: the request grows and the digest follows it. */
START_TEST(add_package_changes_digest)
{
	struct recipe r;
	char before[65];

	ck_assert_int_eq(parse(&r, ARMS), 0);
	memcpy(before, r.digest, sizeof(before));
	recipe_add_package(&r, "zlib1g-dev", "armel", "1:1.2.13.dfsg-1");
	ck_assert_uint_eq(r.n_packages, 2);
	ck_assert_str_eq(r.packages[1].name, "zlib1g-dev");
	ck_assert_str_eq(r.packages[1].arch, "armel");
	ck_assert_str_eq(r.packages[1].version, "1:1.2.13.dfsg-1");
	ck_assert_str_ne(r.digest, before);
	recipe_release(&r);
}
END_TEST

Suite *recipe_sdk_suite(void)
{
	Suite *s = suite_create("recipe_sdk");
	TCase *tc = tcase_create("recipe_sdk");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, packages_kept_digest_unchanged);
	tcase_add_test(tc, bad_packages_refused);
	tcase_add_test(tc, add_package_changes_digest);
	suite_add_tcase(s, tc);
	return s;
}
