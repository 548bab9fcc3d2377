/*
 * The resolver end to end on tiny Packages files written at test time: the multiarch encoding
 * (resolve_encode.c), the candidates, the request, libsolv's solve and the plan's order.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "recipe/recipe_internal.h"
#include "resolve/resolve.h"

#define SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* One stanza; `extra` holds whole lines such as "Depends: x\n". */
#define PKG(name, ver, arch, extra) \
	"Package: " name "\nVersion: " ver "\nArchitecture: " arch "\n" extra \
	"Filename: pool/" name "_" ver "_" arch ".deb\nSize: 1\nSHA256: " SHA "\n\n"

struct fixture {
	char dir[64];
	char uri[32], suite[16], main_comp[8];
	struct source src;
	struct index_release rel;
	struct index_file files[3];
	struct indexes ix;
	struct recipe r;
	struct plan plan;
};

static void add_index(struct fixture *f, const char *arch, const char *text)
{
	struct index_file *x = &f->files[f->ix.n_files++];
	FILE *out;

	x->component = f->main_comp;
	x->arch = xstrdup(arch);
	x->path = xasprintf("%s/Packages_%s", f->dir, arch);
	out = fopen(x->path, "w");
	ck_assert_ptr_nonnull(out);
	fputs(text, out);
	fclose(out);
}

/* Primary armhf, auxiliary armel; stderr to /dev/null (errors are expected in some tests). */
static void setup(struct fixture *f, const char *armhf, const char *armel)
{
	int fd = open("/dev/null", O_WRONLY);

	memset(f, 0, sizeof(*f));
	dup2(fd, 2);
	close(fd);
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-resolve.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->uri, sizeof(f->uri), "http://127.0.0.1/debian");
	snprintf(f->suite, sizeof(f->suite), "bookworm");
	snprintf(f->main_comp, sizeof(f->main_comp), "main");
	f->src.uri = f->uri;
	f->src.suite = f->suite;
	f->rel.src = &f->src;
	f->ix.releases = &f->rel;
	f->ix.n_releases = 1;
	f->ix.files = f->files;
	add_index(f, "armhf", armhf);
	if (armel)
		add_index(f, "armel", armel);
	f->r.arch = xstrdup("armhf");
	strv_push(&f->r.aux_archs, "armel");
}

static void request(struct fixture *f, const char *spec)
{
	struct recipe_package p = { 0 };
	const char *why = NULL;

	ck_assert_int_eq(recipe_parse_package(spec, &p, &why), 0);
	p.line = (int)f->r.n_packages + 1;
	f->r.packages = xrealloc(f->r.packages, (f->r.n_packages + 1) * sizeof(p));
	f->r.packages[f->r.n_packages++] = p;
}

/* The plan as "name:arch=version ..." in install order. */
static char *plan_text(const struct plan *p)
{
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < p->n; i++)
		buf_addf(&b, "%s%s:%s=%s", i ? " " : "", p->v[i].name, p->v[i].arch,
			 p->v[i].version);
	return buf_detach(&b);
}

static void teardown(struct fixture *f)
{
	size_t i;

	for (i = 0; i < f->ix.n_files; i++) {
		unlink(f->files[i].path);
		free(f->files[i].path);
		free(f->files[i].arch);
	}
	rmdir(f->dir);
	plan_release(&f->plan);
	recipe_release(&f->r);
}

static void assert_plan(struct fixture *f, const char *want)
{
	char *got;

	ck_assert_int_eq(resolve_plan(&f->plan, &f->r, &f->ix, NULL), 0);
	got = plan_text(&f->plan);
	ck_assert_str_eq(got, want);
	free(got);
}

/* The newest candidate satisfies a versioned Depends; dependencies come first; URL quoted. */
START_TEST(newest_candidate_dependencies_first)
{
	struct fixture f;

	setup(&f, PKG("app", "1:1.0", "armhf", "Depends: libfoo (>= 1.5)\n")
		  PKG("libfoo", "1.0", "armhf", "") PKG("libfoo", "2.0", "armhf", "")
		  PKG("unrelated", "1.0", "armhf", ""), NULL);
	request(&f, "app");
	assert_plan(&f, "libfoo:armhf=2.0 app:armhf=1:1.0");
	ck_assert_str_eq(f.plan.v[1].url, "http://127.0.0.1/debian/pool/app_1%3A1.0_armhf.deb");
	ck_assert_uint_eq(f.plan.v[1].n_depends, 1);
	ck_assert_uint_eq(f.plan.v[1].depends[0], 0);
	teardown(&f);
}
END_TEST

/*
 * Multi-Arch: an armel program's Depends on a foreign tool is met by the primary arch's; its
 * library (M-A same) comes for armel, at the same version as the armhf copy.
 */
START_TEST(foreign_and_same)
{
	struct fixture f;

	setup(&f, PKG("perl", "5.36", "armhf", "Multi-Arch: foreign\n")
		  PKG("libc6", "2.36", "armhf", "Multi-Arch: same\n")
		  PKG("app", "1.0", "armhf", "Depends: libc6\n"),
	      PKG("libc6", "2.36", "armel", "Multi-Arch: same\n")
		  PKG("tool", "1.0", "armel", "Depends: perl, libc6\n"));
	request(&f, "app");
	request(&f, "tool:armel");
	assert_plan(&f, "libc6:armel=2.36 libc6:armhf=2.36 app:armhf=1.0 perl:armhf=5.36 "
			"tool:armel=1.0");
	teardown(&f);
}
END_TEST

/* "python3:any" is met by the other arch's python3 only when it is Multi-Arch: allowed. */
START_TEST(any_needs_allowed)
{
	struct fixture f;

	setup(&f, PKG("python3", "3.11", "armhf", "Multi-Arch: allowed\n"),
	      PKG("tool", "1.0", "armel", "Depends: python3:any\n"));
	request(&f, "tool:armel");
	assert_plan(&f, "python3:armhf=3.11 tool:armel=1.0");
	teardown(&f);

	setup(&f, PKG("python3", "3.11", "armhf", ""),
	      PKG("tool", "1.0", "armel", "Depends: python3:any\n"));
	request(&f, "tool:armel");
	ck_assert_int_eq(resolve_plan(&f.plan, &f.r, &f.ix, NULL), -MKI_E_RESOLVE);
	teardown(&f);
}
END_TEST

/* M-A same copies must share one version: newer armhf than armel is version skew. */
START_TEST(same_version_skew_refused)
{
	struct fixture f;

	setup(&f, PKG("libc6", "2.37", "armhf", "Multi-Arch: same\n"),
	      PKG("libc6", "2.36", "armel", "Multi-Arch: same\n"));
	request(&f, "libc6");
	request(&f, "libc6:armel");
	ck_assert_int_eq(resolve_plan(&f.plan, &f.r, &f.ix, NULL), -MKI_E_RESOLVE);
	teardown(&f);
}
END_TEST

/* A virtual name with one provider is that provider; Pre-Depends are placed first. */
START_TEST(virtual_and_pre_depends)
{
	struct fixture f;

	setup(&f, PKG("mailer", "1.0", "armhf", "Depends: mail-transport-agent\n")
		  PKG("postfix", "3.7", "armhf", "Provides: mail-transport-agent\n"
					       "Pre-Depends: debconf\n")
		  PKG("debconf", "1.5", "armhf", ""), NULL);
	request(&f, "mailer");
	assert_plan(&f, "debconf:armhf=1.5 postfix:armhf=3.7 mailer:armhf=1.0");
	ck_assert_uint_eq(f.plan.v[1].n_pre_depends, 1);
	ck_assert_int_eq(f.plan.v[0].pre_depended, 1);
	teardown(&f);
}
END_TEST

/* Bad input: a malformed relation is a parse error; an unknown name a resolve error. */
START_TEST(malformed_and_unknown)
{
	struct fixture f;

	setup(&f, PKG("app", "1.0", "armhf", "Depends: libfoo (>= )\n"), NULL);
	request(&f, "app");
	ck_assert_int_eq(resolve_plan(&f.plan, &f.r, &f.ix, NULL), -MKI_E_PARSE);
	teardown(&f);

	setup(&f, PKG("app", "1.0", "armhf", ""), NULL);
	request(&f, "apq");
	ck_assert_int_eq(resolve_plan(&f.plan, &f.r, &f.ix, NULL), -MKI_E_RESOLVE);
	ck_assert_uint_eq(f.plan.n, 0);
	teardown(&f);
}
END_TEST

Suite *resolve_suite(void)
{
	Suite *s = suite_create("resolve");
	TCase *tc = tcase_create("resolve");

	tcase_add_test(tc, newest_candidate_dependencies_first);
	tcase_add_test(tc, foreign_and_same);
	tcase_add_test(tc, any_needs_allowed);
	tcase_add_test(tc, same_version_skew_refused);
	tcase_add_test(tc, virtual_and_pre_depends);
	tcase_add_test(tc, malformed_and_unknown);
	suite_add_tcase(s, tc);
	return s;
}
