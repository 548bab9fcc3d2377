/* The recipe: load, defaults, errors, digests, the JSON form (recipe.c). */
#include "recipe_fixture.h"

START_TEST(minimal_defaults)
{
	struct recipe r;
	char *p = write_recipe(MINIMAL);

	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	ck_assert_str_eq(r.suite, "bookworm");
	ck_assert_int_eq(r.base, BASE_REQUIRED);
	ck_assert_int_eq(r.merged_usr, 1);
	ck_assert_uint_eq(r.n_sources, 1);
	ck_assert(r.sources[0].host);
	ck_assert_str_eq(r.image.format, "ext4");
	ck_assert_str_eq(r.image.label, "rootfs");
	ck_assert_uint_eq(strlen(r.digest), 64);
	recipe_release(&r);
	free(p);
}
END_TEST

START_TEST(errors_are_recipe_errors)
{
	static const char *const bad[] = {
		"name = \"t\"; architecture = \"armhf\"; suit = \"x\"; packages = { install = [\"a1\"]; };",
		"name = \"t\"; architecture = 5; packages = { install = [\"a1\"]; };",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1\"]; }; "
		"layers = { registry = \"ftp://h/x\"; };",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1\"]; }; "
		"layers = { registry = \"http://127.0.0.1\"; };",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1\"]; }; "
		"layers = { trusted_keys = [ \"missing.pub\" ]; };",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1\"]; }; "
		"layers = { sign_key = 5; };",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1\"]; }; "
		"layers = { trusted = [ ]; };",
		"name = \"t\"; architecture = \"armhff\"; packages = { install = [\"a1\"]; };",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1:armel\"]; };",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1\"]; };"
		" hooks = ( { script = \"missing.sh\"; } );",
		"name = \"t\"; architecture = ; packages = {};",
		"name = \"t\"; architecture = \"armhf\"; packages = { base = \"none\"; };",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1\"]; };"
		" sources = ( { uri = \"ftp://x\"; trusted = true; } );",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1\"]; };"
		" sources = ( { uri = \"http://127.0.0.1/\"; } );",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [\"a1\"]; };"
		" image = { devices = ( { path = \"/dev/x\"; type = \"char\"; mode = 600; } ); };",
		MINIMAL "overlays = ( { source = \"missing\"; destination = \"/\"; } );",
		MINIMAL "overlays = ( { source = \".\"; destination = \"/a/../b\"; } );",
		MINIMAL "overlays = ( { source = \".\"; destination = \"/\"; owner = \"0\"; } );",
		MINIMAL "hostname = \"a_b\";",
		MINIMAL "machine_id = \"fixed\";",
		MINIMAL "image = { format = \"tar\"; fstab = true; };",
		MINIMAL "image = { kernel = \"\"; };",
	};
	struct recipe r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char *p = write_recipe(bad[i]);

		ck_assert_msg(recipe_load(&r, p, &unit_checks) == -MKI_E_RECIPE, "accepted: %s", bad[i]);
		free(p);
	}
}
END_TEST

/* The appliance keys' defaults, and a recipe spelling them out keeps its digest. */
START_TEST(appliance_defaults)
{
	struct recipe a, b;
	char *p = write_recipe(MINIMAL);

	ck_assert_int_eq(recipe_load(&a, p, &unit_checks), 0);
	ck_assert_int_eq(a.image.fstab, 1);
	ck_assert_int_eq(a.image.export_boot, 0);
	ck_assert_int_eq(a.machine_id, MACHINE_ID_UNINITIALIZED);
	ck_assert_ptr_null(a.hostname);
	ck_assert_int_eq(a.n_overlays, 0);
	free(p);
	p = write_recipe(MINIMAL "machine_id = \"uninitialized\"; image = { fstab = true; };");
	ck_assert_int_eq(recipe_load(&b, p, &unit_checks), 0);
	ck_assert_str_eq(a.digest, b.digest);
	recipe_release(&b);
	free(p);
	p = write_recipe(MINIMAL "hostname = \"board\"; image = { format = \"tar\"; };");
	ck_assert_int_eq(recipe_load(&b, p, &unit_checks), 0);
	ck_assert_int_eq(b.image.fstab, 0);
	ck_assert_str_eq(b.hostname, "board");
	ck_assert_str_ne(a.digest, b.digest);
	recipe_release(&a);
	recipe_release(&b);
	free(p);
}
END_TEST

START_TEST(digest_ignores_location_not_content)
{
	struct recipe a, b;
	char *p = write_recipe(MINIMAL), *q;
	char digest[65];

	ck_assert_int_eq(recipe_load(&a, p, &unit_checks), 0);
	memcpy(digest, a.digest, sizeof(digest));
	recipe_release(&a);
	q = xasprintf("%s/sub", dir);
	ck_assert_int_eq(mkdir(q, 0755), 0);
	free(q);
	q = xasprintf("%s/sub/r.cfg", dir);
	ck_assert_int_eq(rename(p, q), 0);
	ck_assert_int_eq(recipe_load(&b, q, &unit_checks), 0);
	ck_assert_str_eq(b.digest, digest);
	recipe_release(&b);
	free(p);
	free(q);
}
END_TEST

/* Path filters reach the struct and the digest; a recipe without them keeps its old digest. */
START_TEST(path_filters_in_digest)
{
	static const char *const with[] = {
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [ \"hello\" ]; "
		"path_exclude = [ \"/usr/share/doc/*\" ]; };\n",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [ \"hello\" ]; "
		"path_exclude = [ \"/usr/share/doc/*\" ]; path_include = \"/usr/share/doc/*/c\"; };\n",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [ \"hello\" ]; "
		"minimize = true; };\n",
		"name = \"t\"; architecture = \"armhf\"; packages = { install = [ \"hello\" ]; "
		"minimize = true; locales = [ \"en\" ]; };\n",
	};
	char digests[5][65];
	struct recipe r;
	struct buf b = { 0 };
	char *p = write_recipe(MINIMAL);
	size_t i, j;

	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	free(p);
	ck_assert_int_eq(r.minimize, 0);
	recipe_format(&r, &b);
	ck_assert_ptr_null(strstr(b.p, "path_"));
	ck_assert_ptr_null(strstr(b.p, "minimize"));
	memcpy(digests[0], r.digest, 65);
	recipe_release(&r);
	buf_release(&b);
	for (i = 0; i < 4; i++) {
		p = write_recipe(with[i]);
		ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
		free(p);
		memcpy(digests[i + 1], r.digest, 65);
		if (i == 1) {
			ck_assert_uint_eq(r.path_include.n, 1);
			ck_assert_str_eq(r.path_include.v[0], "/usr/share/doc/*/c");
		}
		if (i == 3)
			ck_assert_str_eq(r.locales.v[0], "en");
		recipe_release(&r);
	}
	for (i = 0; i < 5; i++)
		for (j = i + 1; j < 5; j++)
			ck_assert_str_ne(digests[i], digests[j]);
}
END_TEST

/* One digest per key, a group's keys one by one; only the edited key's changes. */
START_TEST(field_digests)
{
	struct strv a = { 0 }, b = { 0 };
	struct recipe r;
	char *p = write_recipe(MINIMAL);
	size_t i, differ = 0;

	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	free(p);
	recipe_field_digests(&r, &a);
	recipe_release(&r);
	p = write_recipe("name = \"t\"; architecture = \"armhf\"; "
			 "packages = { install = [ \"hello\", \"sed\" ]; };\n");
	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	free(p);
	recipe_field_digests(&r, &b);
	recipe_release(&r);
	ck_assert_uint_eq(a.n, b.n);
	ck_assert_str_eq(a.v[0], "name 84b757ae0c8acb9e83c2cae616572d3a9c6beab320f10bd0372047565496f56f");
	for (i = 0; i < a.n; i++) {
		ck_assert_uint_eq(strlen(a.v[i]) - strcspn(a.v[i], " "), 65);
		if (strcmp(a.v[i], b.v[i])) {
			ck_assert(!strncmp(a.v[i], "packages.install ", 17));
			differ++;
		}
	}
	ck_assert_uint_eq(differ, 1);
	for (i = 0; i < a.n && strncmp(a.v[i], "image.size ", 11); i++)
		;
	ck_assert_uint_lt(i, a.n);
	strv_release(&a);
	strv_release(&b);
}
END_TEST

/* --check --json: the normalized form as JSON, strings escaped, booleans and integers bare. */
START_TEST(format_json)
{
	struct recipe r;
	struct buf b = { 0 };
	char *p = write_recipe("name = \"t\"; architecture = \"armhf\"; suite = \"a\\\"b\"; "
			       "packages = { install = [ \"hello\" ]; };\n");

	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	free(p);
	ck_assert_int_eq(recipe_format_json(&r, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "{\n  \"name\": \"t\",\n  \"architecture\": \"armhf\",\n"
				  "  \"auxiliary_architectures\": [],\n"));
	ck_assert_ptr_nonnull(strstr(b.p, "\"merged_usr\": true,"));
	ck_assert_ptr_nonnull(strstr(b.p, "\"suite\": \"a\\\"b\","));
	ck_assert_ptr_nonnull(strstr(b.p, "\"install\": [\n      \"hello\"\n    ],"));
	ck_assert_ptr_nonnull(strstr(b.p, "\"hook_timeout\": 600,"));
	ck_assert_str_eq(b.p + b.len - 4, "  }\n}\n" + 2);
	recipe_release(&r);
	buf_release(&b);
}
END_TEST

Suite *recipe_suite(void)
{
	Suite *s = suite_create("recipe");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, minimal_defaults);
	tcase_add_test(tc, errors_are_recipe_errors);
	tcase_add_test(tc, digest_ignores_location_not_content);
	tcase_add_test(tc, path_filters_in_digest);
	tcase_add_test(tc, appliance_defaults);
	tcase_add_test(tc, field_digests);
	tcase_add_test(tc, format_json);
	suite_add_tcase(s, tc);
	return s;
}
