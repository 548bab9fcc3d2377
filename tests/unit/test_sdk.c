/*
 * The SDK's recipe and request (pipeline/sdk.c): derived from the image's recipe for the build
 * host; the -dev packages of the image's libraries at the image's versions, pinned with them;
 * a cross toolchain missing, a -dev of another version or missing for one architecture, a lock
 * the indexes do not hold: each refused with what to do.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debian/arch.h"
#include "image/format.h"
#include "lib/err.h"
#include "lib/x.h"
#include "pipeline/sdk.h"
#include "pipeline_fixture.h"

static const struct recipe_checks checks = { NULL, format_recipe_check };

#define IMAGE "name = \"board\"; architecture = \"armhf\"; auxiliary_architectures = " \
	"[ \"armel\" ]; suite = \"bookworm\"; sources = ( { uri = \"http://127.0.0.1/d\"; " \
	"trusted = true; } ); packages = { install = [ \"hello\" ]; };\n"

START_TEST(recipe_text_for_the_host)
{
	struct recipe img, sdk;
	struct buf text = { 0 };
	char *expect;

	ck_assert_int_eq(recipe_parse_text(&img, IMAGE, "r.cfg", dir, &checks), 0);
	sdk_recipe_text(&img, "amd64", "/out/board-sdk.tar", &text);
	ck_assert_ptr_nonnull(strstr(text.p, "architecture = \"amd64\";"));
	ck_assert_ptr_nonnull(strstr(text.p, "auxiliary_architectures = [ \"armhf\", \"armel\" ];"));
	ck_assert_ptr_nonnull(strstr(text.p, "\"crossbuild-essential-armhf\", "
					     "\"crossbuild-essential-armel\""));
	ck_assert_ptr_nonnull(strstr(text.p, "base = \"essential\";"));
	ck_assert_ptr_nonnull(strstr(text.p, "allow_older = true;"));
	ck_assert_ptr_nonnull(strstr(text.p, "uri = \"http://127.0.0.1/d\"; suite = \"bookworm\";"));
	ck_assert_int_eq(recipe_parse_text(&sdk, text.p, "sdk", dir, &checks), 0);
	ck_assert_str_eq(sdk.name, "board-sdk");
	ck_assert_str_eq(sdk.image.format, "tar");
	expect = xstrdup("/out/board-sdk.tar");
	ck_assert_str_eq(sdk.image.output, expect);
	free(expect);
	buf_release(&text);
	recipe_release(&img);
	recipe_release(&sdk);
}
END_TEST

/* An SDK for the build host's own architecture is not yet supported; a missing lock is said. */
START_TEST(prepare_refusals)
{
	struct recipe img;
	struct sdk s;
	char *text = xasprintf("name = \"pc\"; architecture = \"%s\"; packages = { install = "
			       "[ \"hello\" ]; };", arch_host());
	char *lock = xasprintf("%s/none.lock", dir);

	ck_assert_int_eq(recipe_parse_text(&img, text, "r.cfg", dir, &checks), 0);
	ck_assert_int_eq(sdk_prepare(&s, &img, lock, "/x.tar", &checks), -MKI_E_NOTYET);
	sdk_release(&s);
	recipe_release(&img);
	ck_assert_int_eq(recipe_parse_text(&img, IMAGE, "r.cfg", dir, &checks), 0);
	ck_assert_int_eq(sdk_prepare(&s, &img, lock, "/x.tar", &checks), -MKI_E_LOCK);
	sdk_release(&s);
	recipe_release(&img);
	free(text);
	/* an SDK that runs on another architecture than the build host's */
	text = xasprintf(IMAGE "sdk = { architecture = \"%s\"; };",
			 strcmp(arch_host(), "s390x") ? "s390x" : "amd64");
	ck_assert_int_eq(recipe_parse_text(&img, text, "r.cfg", dir, &checks), 0);
	ck_assert_int_eq(sdk_prepare(&s, &img, lock, "/x.tar", &checks), -MKI_E_NOTYET);
	sdk_release(&s);
	recipe_release(&img);
	free(text);
	free(lock);
}
END_TEST

/* ---- the request over indexes written here -------------------------------------------- */

static struct index_file files[3];
static struct indexes ix = { NULL, 0, files, 0 };

static char arch_names[3][8];

static void index_add(const char *arch, const char *text)
{
	char *a = arch_names[ix.n_files];

	char *path = xasprintf("%s/Packages-%s", dir, arch);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	snprintf(a, sizeof(arch_names[0]), "%s", arch);
	files[ix.n_files++] = (struct index_file){ 0, NULL, a, path, path, 0, 0 };
}

#define PKG(n, a, v, extra) "Package: " n "\nArchitecture: " a "\nVersion: " v "\n" extra "\n\n"
#define HOST_INDEX PKG("crossbuild-essential-armhf", "all", "12.9", "") \
	PKG("libc6", "amd64", "2.36-9", "Section: libs")
#define MA "Multi-Arch: same\n"
#define ZLIB PKG("zlib1g", "armhf", "1:1.2.13.dfsg-1", MA "Section: libs\nSource: zlib") \
	PKG("zlib1g-dev", "armhf", "1:1.2.13.dfsg-1", MA "Section: libdevel\nSource: zlib\n" \
	    "Depends: zlib1g (= 1:1.2.13.dfsg-1), libc6-dev | libc-dev, zlib-tool")

static void lock_add(struct sdk *s, const char *name, const char *arch, const char *version)
{
	struct lock_pkg *p;

	s->image_lock.pkgs = xrealloc(s->image_lock.pkgs,
				      (s->image_lock.n_pkgs + 1) * sizeof(*p));
	p = &s->image_lock.pkgs[s->image_lock.n_pkgs++];
	memset(p, 0, sizeof(*p));
	p->name = xstrdup(name);
	p->arch = xstrdup(arch);
	p->version = xstrdup(version);
}

static void sdk_init(struct sdk *s)
{
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(recipe_parse_text(&s->recipe, "name = \"b-sdk\"; architecture = \"amd64\";"
					   " auxiliary_architectures = [ \"armhf\" ]; packages = "
					   "{ install = [ \"pkgconf\" ]; };", "sdk", dir, &checks), 0);
	s->loaded = 1;
	s->image_libraries = 1;
	strv_push(&s->targets, "armhf");
	lock_add(s, "zlib1g", "armhf", "1:1.2.13.dfsg-1");
}

static int has_pkg(const struct recipe *r, const char *name, const char *arch, const char *v)
{
	size_t i;

	for (i = 0; i < r->n_packages; i++)
		if (!strcmp(r->packages[i].name, name) && r->packages[i].arch &&
		    !strcmp(r->packages[i].arch, arch) && r->packages[i].version &&
		    !strcmp(r->packages[i].version, v))
			return 1;
	return 0;
}

START_TEST(request_pins_dev_and_library)
{
	struct sdk s;

	sdk_init(&s);
	lock_add(&s, "zlib-tool", "armhf", "1:1.2.13.dfsg-1");
	index_add("amd64", HOST_INDEX);
	index_add("armhf", ZLIB PKG("unrelated-dev", "armhf", "1", "Source: other")
		  PKG("zlib-tool", "armhf", "1:1.2.13.dfsg-1", "Multi-Arch: foreign\nSource: zlib\n"
		      "Section: utils")
		  PKG("zlib1g-static-dev", "armhf", "1:1.2.13.dfsg-1", "Source: zlib\n"
		      "Depends: zlib1g"));
	ck_assert_int_eq(sdk_request(&s, &ix), 0);
	ck_assert(has_pkg(&s.recipe, "zlib1g-dev", "armhf", "1:1.2.13.dfsg-1"));
	ck_assert(has_pkg(&s.recipe, "zlib1g", "armhf", "1:1.2.13.dfsg-1"));
	/* pkgconf, the -dev, its library: not the tool of its source, not the -dev that cannot
	   co-install (Multi-Arch: no) */
	ck_assert_uint_eq(s.recipe.n_packages, 3);
	sdk_release(&s);
}
END_TEST

START_TEST(request_dev_of_another_version)
{
	struct sdk s;

	sdk_init(&s);
	lock_add(&s, "libssl3", "armhf", "3.0.11-1");
	index_add("amd64", HOST_INDEX);
	index_add("armhf", ZLIB PKG("libssl3", "armhf", "3.0.11-1", MA "Section: libs\nSource: openssl")
		  PKG("libssl-dev", "armhf", "3.0.15-1", MA "Source: openssl\nDepends: libssl3 (= 3.0.15-1)"));
	ck_assert_int_eq(sdk_request(&s, &ix), -MKI_E_RESOLVE);
	sdk_release(&s);
}
END_TEST

START_TEST(request_without_toolchain)
{
	struct sdk s;

	sdk_init(&s);
	index_add("amd64", PKG("libc6", "amd64", "2.36-9", "Section: libs"));
	index_add("armhf", ZLIB);
	ck_assert_int_eq(sdk_request(&s, &ix), -MKI_E_RESOLVE);
	sdk_release(&s);
}
END_TEST

START_TEST(request_dev_missing_for_an_architecture)
{
	struct sdk s;

	sdk_init(&s);
	s.image_libraries = 0;
	strv_push(&s.image_dev, "libfoo-dev");
	index_add("amd64", HOST_INDEX);
	index_add("armhf", ZLIB);
	ck_assert_int_eq(sdk_request(&s, &ix), -MKI_E_RESOLVE);
	sdk_release(&s);
}
END_TEST

START_TEST(request_lock_not_in_indexes)
{
	struct sdk s;

	sdk_init(&s);
	lock_add(&s, "busybox", "armhf", "1:1.35.0-4");
	index_add("amd64", HOST_INDEX);
	index_add("armhf", ZLIB PKG("busybox", "armhf", "1:1.36.1-1", ""));
	ck_assert_int_eq(sdk_request(&s, &ix), -MKI_E_LOCK);
	sdk_release(&s);
}
END_TEST

static void free_files(void)
{
	size_t i;

	for (i = 0; i < ix.n_files; i++)
		free(files[i].path);
	ix.n_files = 0;
	teardown();
}

Suite *sdk_suite(void)
{
	Suite *s = suite_create("sdk");
	TCase *tc = tcase_create("sdk");

	tcase_add_checked_fixture(tc, setup, free_files);
	tcase_add_test(tc, recipe_text_for_the_host);
	tcase_add_test(tc, prepare_refusals);
	tcase_add_test(tc, request_pins_dev_and_library);
	tcase_add_test(tc, request_dev_of_another_version);
	tcase_add_test(tc, request_without_toolchain);
	tcase_add_test(tc, request_dev_missing_for_an_architecture);
	tcase_add_test(tc, request_lock_not_in_indexes);
	suite_add_tcase(s, tc);
	return s;
}
