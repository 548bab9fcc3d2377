#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/accel.h"
#include "configure/accel_internal.h"
#include "debian/arch.h"
#include "debian/pkgindex.h"

START_TEST(source_version_drops_binnmu_only)
{
	static const char *const cases[][2] = {
		{ "1.2-3+b4", "1.2-3" },     { "1:4.13+dfsg1-1+b12", "1:4.13+dfsg1-1" },
		{ "1.2-3", "1.2-3" },        { "2.36-9+deb12u14", "2.36-9+deb12u14" },
		{ "1.0+b", "1.0+b" },        { "1.0+bx1", "1.0+bx1" },
		{ "1.0+b1+b2", "1.0+b1" },   { "1.47.0-2+b2", "1.47.0-2" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *v = accel_source_version(cases[i][0]);

		ck_assert_msg(!strcmp(v, cases[i][1]), "%s -> %s, want %s", cases[i][0], v,
			      cases[i][1]);
		free(v);
	}
}
END_TEST

START_TEST(elf_needed_reads_the_hosts_shell)
{
	struct strv needed = { 0 };
	char text[] = "/tmp/mkimage-accel-test-XXXXXX";
	int fd;

	ck_assert_int_eq(accel_elf_needed("/bin/sh", &needed), 0);
	ck_assert(strv_contains(&needed, "libc.so.6"));
	strv_release(&needed);
	fd = mkstemp(text);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	ck_assert_int_lt(accel_elf_needed(text, &needed), 0);
	ck_assert_int_eq((int)needed.n, 0);
	unlink(text);
}
END_TEST

/* coreutils' expr carries a RUNPATH on Debian (its libgmp); the shell none. */
START_TEST(elf_dynamic_reads_runpath)
{
	struct strv needed = { 0 }, runpath = { 0 };

	ck_assert_int_eq(accel_elf_dynamic("/bin/sh", &needed, &runpath), 0);
	ck_assert_int_eq((int)runpath.n, 0);
	strv_release(&needed);
	ck_assert_int_eq(accel_elf_dynamic("/usr/bin/expr", &needed, &runpath), 0);
	ck_assert(strv_contains(&needed, "libgmp.so.10"));
	ck_assert_int_eq((int)runpath.n, 1);
	ck_assert_str_eq(runpath.v[0], "/usr/lib/" MKI_HOST_MULTIARCH);
	strv_release(&needed);
	strv_release(&runpath);
}
END_TEST

static void add_entry(struct plan *p, const char *name, const char *arch, const char *version)
{
	struct plan_entry *e;

	p->v = realloc(p->v, (p->n + 1) * sizeof(*p->v));
	e = &p->v[p->n++];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	e->arch = strdup(arch);
	e->version = strdup(version);
}

static const char *const packages =
	"Package: dash\nVersion: 0.5.12-2+b1\nArchitecture: ARCH\nPre-Depends: libc6 (>= 2.34)\n"
	"Filename: pool/main/d/dash/dash_0.5.12-2+b1_ARCH.deb\nSize: 100\nSHA256: "
	"1111111111111111111111111111111111111111111111111111111111111111\n\n"
	"Package: libc6\nVersion: 2.36-9\nArchitecture: ARCH\nDepends: libgcc-s1\n"
	"Filename: pool/main/g/glibc/libc6_2.36-9_ARCH.deb\nSize: 200\nSHA256: "
	"2222222222222222222222222222222222222222222222222222222222222222\n\n"
	"Package: coreutils\nVersion: 9.1-2\nArchitecture: ARCH\n"
	"Filename: pool/main/c/coreutils/coreutils_9.1-2_ARCH.deb\nSize: 300\nSHA256: "
	"3333333333333333333333333333333333333333333333333333333333333333\n\n"
	"Package: libunrelated1\nVersion: 1.0-1\nArchitecture: ARCH\n"
	"Filename: pool/main/u/u/libunrelated1_1.0-1_ARCH.deb\nSize: 400\nSHA256: "
	"4444444444444444444444444444444444444444444444444444444444444444\n";

/* Tools and what they depend on, in the plan's source version only; never the unrelated. */
/* A new index file at `path` (a mkstemp template), open for writing. */
static FILE *index_create(char *path)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	return fdopen(fd, "w");
}

START_TEST(select_takes_same_version_tools_and_their_dependencies)
{
	char path[] = "/tmp/mkimage-accel-packages-XXXXXX", uri[] = "http://127.0.0.1:1/debian";
	struct pkgindex ix = { .path = path, .base = uri };
	struct plan p = { 0 }, twins = { 0 };
	FILE *f = index_create(path);

	for (const char *q = packages; *q; q++)
		if (!strncmp(q, "ARCH", 4)) {
			fputs(arch_host(), f);
			q += 3;
		} else
			fputc(*q, f);
	fclose(f);
	add_entry(&p, "dash", "armhf", "0.5.12-2");
	add_entry(&p, "libc6", "armhf", "2.36-9");
	add_entry(&p, "coreutils", "armhf", "9.1-1");
	add_entry(&p, "libunrelated1", "armhf", "1.0-1");
	add_entry(&p, "debconf", "all", "1.5.82");
	ck_assert_int_eq(accel_select(&ix, 1, &p, &twins, "test"), 0);
	ck_assert_int_eq((int)twins.n, 2);
	ck_assert_str_eq(twins.v[0].name, "dash");
	ck_assert_str_eq(twins.v[0].arch, arch_host());
	ck_assert_str_eq(twins.v[0].url,
			 "http://127.0.0.1:1/debian/pool/main/d/dash/dash_0.5.12-2%2Bb1_amd64.deb");
	ck_assert_str_eq(twins.v[1].name, "libc6");
	ck_assert_int_eq((int)twins.v[1].size, 200);
	ck_assert_str_eq(twins.v[1].sha256,
			 "2222222222222222222222222222222222222222222222222222222222222222");
	plan_release(&twins);
	plan_release(&p);
	unlink(path);
}
END_TEST

/*
 * dracut-install is a tool package; libkmod2 comes as its dependency, and with it liblzma5, which
 * libkmod opens with dlopen() (no Depends names it) to read .ko.xz modules.
 */
START_TEST(select_takes_the_libraries_libkmod_opens)
{
	static const char *const index[] = { "dracut-install", "libkmod2", "liblzma5", "libzstd1" };
	char path[] = "/tmp/mkimage-accel-packages-XXXXXX", uri[] = "http://127.0.0.1:1/debian";
	struct pkgindex ix = { .path = path, .base = uri };
	struct plan p = { 0 }, twins = { 0 };
	FILE *f = index_create(path);

	for (size_t i = 0; i < sizeof(index) / sizeof(index[0]); i++)
		fprintf(f, "Package: %s\nVersion: 1.0-1\nArchitecture: %s\n%sFilename: pool/%s.deb\n"
			"Size: 1\nSHA256: %064zu\n\n", index[i], arch_host(),
			i ? "" : "Depends: libkmod2 (>= 33~)\n", index[i], i);
	fclose(f);
	add_entry(&p, "dracut-install", "armhf", "1.0-1");
	add_entry(&p, "libkmod2", "armhf", "1.0-1");
	add_entry(&p, "liblzma5", "armhf", "1.0-1");
	/* libzstd1 is not in the plan: its twin is not taken */
	ck_assert_int_eq(accel_select(&ix, 1, &p, &twins, "test"), 0);
	ck_assert_int_eq((int)twins.n, 3);
	ck_assert_str_eq(twins.v[0].name, "dracut-install");
	ck_assert_str_eq(twins.v[1].name, "libkmod2");
	ck_assert_str_eq(twins.v[2].name, "liblzma5");
	plan_release(&twins);
	plan_release(&p);
	unlink(path);
}
END_TEST

Suite *accel_suite(void)
{
	Suite *s = suite_create("accel");
	TCase *tc = tcase_create("accel");

	tcase_add_test(tc, source_version_drops_binnmu_only);
	tcase_add_test(tc, elf_needed_reads_the_hosts_shell);
	tcase_add_test(tc, elf_dynamic_reads_runpath);
	if (!strcmp(arch_host(), "amd64"))
		tcase_add_test(tc, select_takes_same_version_tools_and_their_dependencies);
	if (!strcmp(arch_host(), "amd64"))
		tcase_add_test(tc, select_takes_the_libraries_libkmod_opens);
	suite_add_tcase(s, tc);
	return s;
}
