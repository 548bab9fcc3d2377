#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/format.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "recipe/recipe.h"
#include "recipe/recipe_internal.h"

/* Overlays are not read here; formats are the image family's. */
static const struct recipe_checks unit_checks = { NULL, format_recipe_check };

static char dir[] = "/tmp/mkimage-recipe-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	log_set_level(LOG_QUIET);
}

static char *write_recipe(const char *text)
{
	char *path = xasprintf("%s/r.cfg", dir);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

#define MINIMAL "name = \"t\"; architecture = \"armhf\"; packages = { install = [ \"hello\" ]; };\n"

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

START_TEST(hostnames)
{
	ck_assert_int_eq(recipe_valid_hostname("arm-board"), 1);
	ck_assert_int_eq(recipe_valid_hostname("board1.example.org"), 1);
	ck_assert_int_eq(recipe_valid_hostname("B0ARD"), 1);
	ck_assert_int_eq(recipe_valid_hostname(""), 0);
	ck_assert_int_eq(recipe_valid_hostname("-board"), 0);
	ck_assert_int_eq(recipe_valid_hostname("board-"), 0);
	ck_assert_int_eq(recipe_valid_hostname("bo_ard"), 0);
	ck_assert_int_eq(recipe_valid_hostname("a..b"), 0);
	ck_assert_int_eq(recipe_valid_hostname("a.-b"), 0);
	ck_assert_int_eq(recipe_valid_hostname("a-.b"), 0);
	ck_assert_int_eq(recipe_valid_hostname("board."), 0);
	ck_assert_int_eq(recipe_valid_hostname("with space"), 0);
	ck_assert_int_eq(recipe_valid_hostname("0123456789012345678901234567890123456789"
					       "012345678901234567890123"), 0); /* 64, one label */
	ck_assert_int_eq(recipe_valid_hostname("0123456789012345678901234567890123456789"
					       "0123456789.1234567890123"), 1); /* 64 */
	ck_assert_int_eq(recipe_valid_hostname("0123456789012345678901234567890123456789"
					       "0123456789.12345678901234"), 0); /* 65 */
}
END_TEST

START_TEST(package_specs)
{
	struct recipe_package p;
	const char *why;

	ck_assert_int_eq(recipe_parse_package("libc6:armel=2.36-9", &p, &why), 0);
	ck_assert_str_eq(p.name, "libc6");
	ck_assert_str_eq(p.arch, "armel");
	ck_assert_str_eq(p.version, "2.36-9");
	free(p.name);
	free(p.arch);
	free(p.version);
	ck_assert_int_eq(recipe_parse_package("zlib1g=1:1.2.13.dfsg-1", &p, &why), 0);
	ck_assert_ptr_null(p.arch);
	ck_assert_str_eq(p.version, "1:1.2.13.dfsg-1");
	free(p.name);
	free(p.version);
	ck_assert_int_eq(recipe_parse_package("Hello", &p, &why), -MKI_E_RECIPE);
	ck_assert_int_eq(recipe_parse_package("hello=", &p, &why), -MKI_E_RECIPE);
	ck_assert_int_eq(recipe_parse_package("x", &p, &why), -MKI_E_RECIPE);
}
END_TEST

START_TEST(sizes)
{
	uint64_t v;

	ck_assert_int_eq(recipe_parse_size("512M", &v), 0);
	ck_assert_uint_eq(v, 512ull << 20);
	ck_assert_int_eq(recipe_parse_size("2GiB", &v), 0);
	ck_assert_uint_eq(v, 2ull << 30);
	ck_assert_int_eq(recipe_parse_size("4096", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_ne(recipe_parse_size("12Q", &v), 0);
	ck_assert_int_ne(recipe_parse_size("-1", &v), 0);
	ck_assert_int_ne(recipe_parse_size("99999999999T", &v), 0);
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

/*
 * The key table is the reference: every key has a doc and a name unique in its section, and a
 * default it states is what the parser gives a recipe that leaves the key out.
 */
START_TEST(table_defaults_are_the_parsers)
{
	const struct recipe_key *k, *o;
	struct recipe r;
	char *p, *cmd;

	cmd = xasprintf("cd %s && echo k >k.gpg && echo s >h.sh && mkdir -p ov", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	p = write_recipe(MINIMAL "sources = ( { uri = \"http://127.0.0.1/d\"; keyring = \"k.gpg\"; } );"
			 "hooks = ( { script = \"h.sh\"; } );"
			 "overlays = ( { source = \"ov\"; destination = \"/\"; } );"
			 "image = { devices = ( { path = \"/dev/null\"; type = \"char\"; } ); };"
			 "disk = { partitions = ( { name = \"r\"; type = \"root\"; contents = \"root\"; } ); };");
	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	for (k = recipe_keys; k->name; k++) {
		struct buf b = { 0 };
		void *base = recipe_section_base(&r, k->section);

		ck_assert_msg(k->doc && k->doc[0], "'%s' has no doc", k->name);
		for (o = recipe_keys; o < k; o++)
			ck_assert_msg(o->section != k->section || strcmp(o->name, k->name),
				      "'%s' twice", k->name);
		if (!k->def)
			continue;
		ck_assert_ptr_nonnull(base);
		recipe_format_value(k, base, &b);
		/* Strings are shown quoted, the default as a recipe would hold it. */
		if (b.p[0] == '"') {
			ck_assert_uint_eq(b.p[b.len - 1], '"');
			b.p[--b.len] = 0;
		}
		ck_assert_msg(!strcmp(b.p + (b.p[0] == '"'), k->def), "'%s' defaults to %s, not %s",
			      k->name, b.p + (b.p[0] == '"'), k->def);
		buf_release(&b);
	}
	recipe_release(&r);
	free(p);
}
END_TEST

/* host_twins: true by default and then not shown, so older recipes keep their digest. */
START_TEST(host_twins_key)
{
	struct recipe r;
	struct buf b = { 0 };
	char digest[65], *p = write_recipe(MINIMAL);

	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	free(p);
	ck_assert_int_eq(r.host_twins, 1);
	recipe_format(&r, &b);
	ck_assert_ptr_null(strstr(b.p, "host_twins"));
	memcpy(digest, r.digest, 65);
	recipe_release(&r);
	buf_release(&b);
	p = write_recipe(MINIMAL "host_twins = false;\n");
	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	free(p);
	ck_assert_int_eq(r.host_twins, 0);
	recipe_format(&r, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "\nhost_twins = false;\n"));
	ck_assert_str_ne(r.digest, digest);
	recipe_release(&r);
	buf_release(&b);
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
	tcase_add_test(tc, hostnames);
	tcase_add_test(tc, table_defaults_are_the_parsers);
	tcase_add_test(tc, package_specs);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, errors_are_recipe_errors);
	tcase_add_test(tc, digest_ignores_location_not_content);
	tcase_add_test(tc, layers_not_in_digest);
	tcase_add_test(tc, path_filters_in_digest);
	tcase_add_test(tc, appliance_defaults);
	tcase_add_test(tc, host_twins_key);
	tcase_add_test(tc, field_digests);
	tcase_add_test(tc, format_json);
	suite_add_tcase(s, tc);
	return s;
}
