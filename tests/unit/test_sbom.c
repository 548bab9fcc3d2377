#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debian/plan.h"
#include "emit/report.h"
#include "emit/sbom.h"
#include "recipe/recipe.h"

static void add(struct plan *p, const char *name, const char *arch, const char *version,
		const char *maint)
{
	struct plan_entry *e;

	ALLOC_GROW(p->v, p->n + 1, p->alloc);
	e = &p->v[p->n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	e->arch = xstrdup(arch);
	e->version = xstrdup(version);
	e->maintainer = maint ? xstrdup(maint) : NULL;
	e->url = xasprintf("http://127.0.0.1/pool/%s_%s.deb", name, arch);
	memset(e->sha256, 'a', 64);
}

static char *slurp(const char *file)
{
	FILE *f = fopen(file, "r");
	char *s = xcalloc(1, 1 << 16);

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_gt(fread(s, 1, (1 << 16) - 1, f), 0);
	fclose(f);
	return s;
}

START_TEST(spdx_document)
{
	struct plan p = { 0 };
	struct recipe r = { 0 };
	char file[] = "/tmp/mkimage-sbom-XXXXXX", *text, cmd[128];
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	close(fd);
	char name[] = "board";

	r.name = name;
	add(&p, "libstdc++6", "armel", "12.2.0-14", "Debian GCC Maintainers <debian-gcc@lists.debian.org>");
	add(&p, "zlib1g", "armhf", "1:1.2.13.dfsg-1", NULL);
	/* libstdc++6 Depends on zlib1g twice over (say Pre-Depends and Depends): one relationship */
	p.v[0].depends = xcalloc(2, sizeof(*p.v[0].depends));
	p.v[0].depends[0] = p.v[0].depends[1] = 1;
	p.v[0].n_depends = 2;
	ck_assert_int_eq(sbom_write(&p, &r, NULL, NULL, NULL, "board.ext4", "0123", 1700000000, file), 0);
	text = slurp(file);
	{
		const char *rel = "{ \"spdxElementId\": "
				  "\"SPDXRef-Package-libstdcplusplus6-armel-12.2.0-14\", "
				  "\"relationshipType\": \"DEPENDS_ON\", \"relatedSpdxElement\": "
				  "\"SPDXRef-Package-zlib1g-armhf-1-1.2.13.dfsg-1\" }";
		const char *first = strstr(text, rel);

		ck_assert_ptr_nonnull(first);
		ck_assert_ptr_null(strstr(first + 1, rel));
		ck_assert_ptr_nonnull(strstr(text, "\"primaryPackagePurpose\": \"OPERATING_SYSTEM\""));
	}
	ck_assert_ptr_nonnull(strstr(text, "\"spdxVersion\": \"SPDX-2.3\""));
	ck_assert_ptr_nonnull(strstr(text, "\"created\": \"2023-11-14T22:13:20Z\""));
	ck_assert_ptr_nonnull(strstr(text, "\"documentNamespace\": "
				     "\"https://spdx.org/spdxdocs/mkimage/board-0123\""));
	ck_assert_ptr_null(strstr(text, "example.org"));
	ck_assert_ptr_nonnull(strstr(text, "pkg:deb/debian/libstdc%2B%2B6@12.2.0-14?arch=armel"));
	ck_assert_ptr_nonnull(strstr(text, "pkg:deb/debian/zlib1g@1%3A1.2.13.dfsg-1?arch=armhf"));
	ck_assert_ptr_nonnull(strstr(text, "Organization: Debian GCC Maintainers (debian-gcc@lists.debian.org)"));
	ck_assert_ptr_nonnull(strstr(text, "\"built from Debian source package zlib1g "
				     "1:1.2.13.dfsg-1\""));
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool %s >/dev/null", file);
	ck_assert_int_eq(system(cmd), 0);
	free(text);
	unlink(file);
	plan_release(&p);
}
END_TEST

static void put(const char *dir, const char *pkg, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/usr/share/doc/%s", dir, pkg);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/usr/share/doc/%s/copyright", dir, pkg);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

#define FORMAT "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n"

/*
 * licenseDeclared from each package's copyright file in the tree: a DEP-5 one gives its
 * expression, a free-form one NOASSERTION, a licence of the file's own goes to
 * hasExtractedLicensingInfos with its text (Latin-1 in it still makes valid JSON).
 */
START_TEST(licenses_from_tree)
{
	struct plan p = { 0 };
	struct recipe r = { 0 };
	char dir[] = "/tmp/mkimage-sbomtree-XXXXXX", file[128], cmd[256], *text;
	char name[] = "board";
	const char *noassertion = "\"licenseDeclared\": \"NOASSERTION\"";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/usr/share/doc", dir);
	ck_assert_int_eq(system(cmd), 0);
	put(dir, "zlib1g", FORMAT "Files: *\nCopyright: x\nLicense: Zlib\n");
	put(dir, "libc6", "This is the Debian prepackaged version of the GNU C Library.\n");
	put(dir, "pam", FORMAT "Files: *\nCopyright: x\nLicense: Beerware or GPL-2+\n\n"
			       "License: Beerware\n Poul-Henning Kamp wrote this file; caf\xe9.\n");
	r.name = name;
	add(&p, "zlib1g", "armhf", "1", NULL);
	add(&p, "libc6", "armhf", "2.36", NULL);
	add(&p, "pam", "armhf", "1", NULL);
	add(&p, "nodoc", "armhf", "1", NULL);
	snprintf(file, sizeof(file), "%s/sbom.json", dir);
	ck_assert_int_eq(sbom_write(&p, &r, NULL, NULL, dir, "board.ext4", "0123", 0, file), 0);
	text = slurp(file);
	ck_assert_ptr_nonnull(strstr(text, "\"licenseDeclared\": \"Zlib\""));
	ck_assert_ptr_nonnull(strstr(text, "\"licenseDeclared\": \"LicenseRef-Beerware OR "
					   "GPL-2.0-or-later\""));
	ck_assert_ptr_nonnull(strstr(strstr(text, "\"libc6\""), noassertion));
	ck_assert_ptr_nonnull(strstr(strstr(text, "\"nodoc\""), noassertion));
	ck_assert_ptr_nonnull(strstr(text, "\"hasExtractedLicensingInfos\": [\n    { "
					   "\"licenseId\": \"LicenseRef-Beerware\""));
	ck_assert_ptr_nonnull(strstr(text, "wrote this file; caf\\ufffd."));
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool %s >/dev/null", file);
	ck_assert_int_eq(system(cmd), 0);
	free(text);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	plan_release(&p);
}
END_TEST

/* What was captured after unpacking is declared, whatever a script wrote into the tree later. */
START_TEST(licenses_as_shipped)
{
	struct plan p = { 0 };
	struct recipe r = { 0 };
	struct dep5_texts shipped;
	FILE *f;
	char dir[] = "/tmp/mkimage-sbomcap-XXXXXX", file[128], cmd[256], *text;
	char name[] = "board";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/usr/share/doc", dir);
	ck_assert_int_eq(system(cmd), 0);
	put(dir, "victim", FORMAT "Files: *\nCopyright: x\nLicense: Apache-2.0\n");
	r.name = name;
	add(&p, "victim", "armhf", "1", NULL);
	add(&p, "nodoc", "armhf", "1", NULL);
	ck_assert_int_eq(sbom_capture(&shipped, &p, dir), 0);
	ck_assert_uint_eq(shipped.n, 2);
	ck_assert_int_eq(shipped.err[0], 0);
	ck_assert_int_eq(shipped.err[1], -ENOENT);
	/* a maintainer script rewrites it */
	snprintf(file, sizeof(file), "%s/usr/share/doc/victim/copyright", dir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs(FORMAT "Files: *\nCopyright: x\nLicense: GPL-2+\n", f);
	fclose(f);
	snprintf(file, sizeof(file), "%s/sbom.json", dir);
	ck_assert_int_eq(sbom_write(&p, &r, &shipped, NULL, dir, "board.ext4", "0123", 0, file), 0);
	text = slurp(file);
	ck_assert_ptr_nonnull(strstr(text, "\"licenseDeclared\": \"Apache-2.0\""));
	ck_assert_ptr_null(strstr(text, "GPL-2.0-or-later"));
	free(text);
	/* without the capture (a tree from the layer cache) the tree is read */
	ck_assert_int_eq(sbom_write(&p, &r, NULL, NULL, dir, "board.ext4", "0123", 0, file), 0);
	text = slurp(file);
	ck_assert_ptr_nonnull(strstr(text, "\"licenseDeclared\": \"GPL-2.0-or-later\""));
	free(text);
	dep5_texts_release(&shipped);
	ck_assert_ptr_null(shipped.v);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	plan_release(&p);
}
END_TEST

/* A vendor's local .deb: its own supplier, no Debian purl or source; a namespace of its own. */
START_TEST(local_vendor_package)
{
	struct plan p = { 0 };
	struct recipe r = { 0 };
	char file[] = "/tmp/mkimage-sbomlocal-XXXXXX", *text, *vendor, cmd[128];
	char name[] = "gw", ns[] = "https://sbom.acme.test/fleet/";
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	close(fd);
	r.name = name;
	r.sbom_namespace = ns;
	add(&p, "acme-agent", "armhf", "2.1+acme1", "Jane Doe <jane@acme.test>");
	free(p.v[0].url);
	p.v[0].url = NULL;
	p.v[0].path = xstrdup("/home/jane/recipes/vendor/acme-agent_2.1+acme1_armhf.deb");
	add(&p, "hello", "armhf", "2.10-3", "Santiago Vila <sanvila@debian.org>");
	ck_assert_int_eq(sbom_write(&p, &r, NULL, NULL, NULL, "gw.ext4", "0123", 0, file), 0);
	text = slurp(file);
	vendor = strstr(text, "\"SPDXID\": \"SPDXRef-Package-acme-agent-armhf-2.1-acme1\"");
	ck_assert_ptr_nonnull(vendor);
	*strstr(vendor, "\n    }") = 0; /* the vendor's package alone */
	ck_assert_ptr_nonnull(strstr(vendor, "\"supplier\": \"Person: Jane Doe (jane@acme.test)\""));
	ck_assert_ptr_nonnull(strstr(vendor, "\"downloadLocation\": \"NOASSERTION\""));
	ck_assert_ptr_nonnull(strstr(vendor, "local package file 'acme-agent_2.1+acme1_armhf.deb'"));
	ck_assert_ptr_null(strstr(vendor, "/home/jane"));
	ck_assert_ptr_null(strstr(vendor, "pkg:deb"));
	ck_assert_ptr_null(strstr(vendor, "Debian"));
	ck_assert_ptr_nonnull(strstr(vendor, "\"primaryPackagePurpose\": \"APPLICATION\""));
	free(text);
	text = slurp(file);
	ck_assert_ptr_nonnull(strstr(text, "\"documentNamespace\": "
				     "\"https://sbom.acme.test/fleet/gw-0123\""));
	ck_assert_ptr_nonnull(strstr(text, "Person: Santiago Vila (sanvila@debian.org)"));
	ck_assert_ptr_nonnull(strstr(text, "pkg:deb/debian/hello@2.10-3?arch=armhf"));
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool %s >/dev/null", file);
	ck_assert_int_eq(system(cmd), 0);
	free(text);
	unlink(file);
	plan_release(&p);
}
END_TEST

/* One rule says what a package is: by its name and Section, the area stripped. */
START_TEST(purposes)
{
	static const char *const rows[][3] = {
		{ "libc6", "libs", "LIBRARY" },
		{ "libssl-dev", "libdevel", "LIBRARY" },
		{ "libfoo1", NULL, "LIBRARY" },
		{ "libreoffice-core", "editors", "APPLICATION" },
		{ "firmware-brcm80211", "non-free-firmware/kernel", "FIRMWARE" },
		{ "raspi-firmware", "non-free-firmware/firmware", "FIRMWARE" },
		{ "linux-image-6.1.0-13-armmp", "kernel", "OPERATING_SYSTEM" },
		{ "busybox", "utils", "APPLICATION" },
		{ "tzdata", "localization", "APPLICATION" },
		{ "acme-agent", NULL, "APPLICATION" },
	};
	struct plan_entry e = { 0 };
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		e.name = xstrdup(rows[i][0]);
		e.section = rows[i][1] ? xstrdup(rows[i][1]) : NULL;
		ck_assert_msg(!strcmp(sbom_purpose(&e), rows[i][2]), "%s: %s", rows[i][0],
			      sbom_purpose(&e));
		free(e.name);
		free(e.section);
	}
}
END_TEST

START_TEST(report_counts_per_arch)
{
	struct plan p = { 0 };
	struct recipe r = { 0 };
	struct report rep = { 0 };
	char file[] = "/tmp/mkimage-report-XXXXXX", *text, cmd[128];
	int fd = mkstemp(file), i;

	ck_assert_int_ge(fd, 0);
	close(fd);
	char name[] = "board";

	r.name = name;
	add(&p, "a1", "armhf", "1", NULL);
	add(&p, "b1", "armel", "1", NULL);
	add(&p, "c1", "armhf", "1", NULL);
	for (i = 0; i < REPORT_STAGES; i++)
		rep.stage_secs[i] = -1;
	rep.stage_names[0] = "fetch";
	rep.stage_secs[0] = 1.5;
	ck_assert_int_eq(report_write(&rep, &p, &r, file), 0);
	text = slurp(file);
	ck_assert_ptr_nonnull(strstr(text, "\"armhf\": 2, \"armel\": 1, \"total\": 3"));
	ck_assert_ptr_nonnull(strstr(text, "\"fetch\": 1.500"));
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool %s >/dev/null", file);
	ck_assert_int_eq(system(cmd), 0);
	free(text);
	unlink(file);
	plan_release(&p);
}
END_TEST

Suite *sbom_suite(void)
{
	Suite *s = suite_create("sbom");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, spdx_document);
	tcase_add_test(tc, licenses_from_tree);
	tcase_add_test(tc, licenses_as_shipped);
	tcase_add_test(tc, local_vendor_package);
	tcase_add_test(tc, purposes);
	tcase_add_test(tc, report_counts_per_arch);
	suite_add_tcase(s, tc);
	return s;
}
