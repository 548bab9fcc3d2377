#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "debian/plan.h"

/* dpkg names a package by name alone unless it is Multi-Arch: same. */
static const struct {
	const char *name, *arch, *multi_arch, *want;
} names[] = {
	{ "libc6", "armhf", "same", "libc6:armhf" },
	{ "libc6", "armel", "same", "libc6:armel" },
	{ "perl", "armhf", "foreign", "perl" },
	{ "python3", "armhf", "allowed", "python3" },
	{ "hello", "armhf", "no", "hello" },
	{ "base-files", "all", NULL, "base-files" },
	{ "odd", "armhf", "Same", "odd" }, /* the value is lowercase; nothing else matches */
};

START_TEST(dpkg_name)
{
	struct plan_entry e = { 0 };
	char *n;

	e.name = (char *)(uintptr_t)names[_i].name;
	e.arch = (char *)(uintptr_t)names[_i].arch;
	e.multi_arch = (char *)(uintptr_t)names[_i].multi_arch;
	n = plan_entry_dpkg_name(&e);
	ck_assert_str_eq(n, names[_i].want);
	ck_assert_ptr_ne(n, e.name);
	free(n);
}
END_TEST

/* Release frees every field an entry owns (ASan's leak check) and leaves an empty plan. */
START_TEST(release_everything)
{
	struct plan p = { 0 };
	struct plan_entry *e;
	size_t i;

	for (i = 0; i < 3; i++) {
		ALLOC_GROW(p.v, p.n + 1, p.alloc);
		e = &p.v[p.n++];
		memset(e, 0, sizeof(*e));
		e->name = xasprintf("pkg%zu", i);
		e->arch = xstrdup("armhf");
		e->version = xstrdup("1.0");
		e->multi_arch = xstrdup("same");
		e->priority = xstrdup("optional");
		e->section = xstrdup("libs");
		e->maintainer = xstrdup("A <a@example.org>");
		e->installed_size = xstrdup("12");
		e->source = xstrdup("src");
		e->source_version = xstrdup("1.0");
		e->url = xstrdup("http://127.0.0.1/debian/pool/x.deb");
		e->path = xstrdup("/tmp/x.deb");
		e->depends = xcalloc(2, sizeof(size_t));
		e->n_depends = 2;
	}
	p.primary = xstrdup("armhf");
	strv_push(&p.archs, "armhf");
	strv_push(&p.archs, "armel");
	plan_release(&p);
	ck_assert_ptr_null(p.v);
	ck_assert_uint_eq(p.n, 0);
	ck_assert_ptr_null(p.primary);
	ck_assert_uint_eq(p.archs.n, 0);
	plan_release(&p); /* a released plan is empty: releasing it again is harmless */
}
END_TEST

/* A plan of `n` entries "p0".."pN" of armhf, priority optional; the caller sets the rest. */
static void small_plan(struct plan *p, size_t n)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	p->primary = xstrdup("armhf");
	for (i = 0; i < n; i++) {
		struct plan_entry *e;

		ALLOC_GROW(p->v, p->n + 1, p->alloc);
		e = &p->v[p->n++];
		memset(e, 0, sizeof(*e));
		e->name = xasprintf("p%zu", i);
		e->arch = xstrdup("armhf");
		e->priority = xstrdup("optional");
	}
}

/* Entry `i` depends on the entries in `deps` (-1 ends them), the first `pre` as Pre-Depends. */
static void depends(struct plan *p, size_t i, size_t pre, const int *deps)
{
	struct plan_entry *e = &p->v[i];

	while (deps[e->n_depends] >= 0)
		e->n_depends++;
	e->depends = xcalloc(e->n_depends ? e->n_depends : 1, sizeof(size_t));
	for (size_t k = 0; k < e->n_depends; k++)
		e->depends[k] = (size_t)deps[k];
	e->n_pre_depends = pre;
}

static void set_priority(struct plan *p, size_t i, const char *prio)
{
	free(p->v[i].priority);
	p->v[i].priority = prio ? xstrdup(prio) : NULL;
}

/* The members as "0 3 4", for exact comparisons. */
static char *members(const struct plan *p, size_t *n)
{
	unsigned char *in = xmalloc(p->n ? p->n : 1);
	struct buf b = { 0 };
	size_t i;

	memset(in, 0xaa, p->n ? p->n : 1); /* every byte is set, members or not */
	*n = plan_essential_set(p, in);
	buf_addf(&b, "%s", "");
	for (i = 0; i < p->n; i++) {
		ck_assert_uint_le(in[i], 1);
		if (in[i])
			buf_addf(&b, "%s%zu", b.len ? " " : "", i);
	}
	free(in);
	return buf_detach(&b);
}

/*
 * Seeds: Essential: yes, or Priority: required (any case, as apt reads it), of the primary
 * architecture or "all"; a foreign architecture's required package is not one.
 */
START_TEST(essential_seeds)
{
	struct plan p;
	size_t n;
	char *m;

	small_plan(&p, 7);
	p.v[1].essential = 1;
	set_priority(&p, 2, "required");
	set_priority(&p, 3, "Required");
	set_priority(&p, 4, "required");
	free(p.v[4].arch);
	p.v[4].arch = xstrdup("armel");
	set_priority(&p, 5, "important");
	set_priority(&p, 6, NULL);
	p.v[6].essential = 1;
	free(p.v[6].arch);
	p.v[6].arch = xstrdup("all");
	m = members(&p, &n);
	ck_assert_str_eq(m, "1 2 3 6");
	ck_assert_uint_eq(n, 4);
	free(m);
	/* without a primary architecture every one counts */
	free(p.primary);
	p.primary = NULL;
	m = members(&p, &n);
	ck_assert_str_eq(m, "1 2 3 4 6");
	ck_assert_uint_eq(n, 5);
	free(m);
	plan_release(&p);
}
END_TEST

/*
 * The closure: Pre-Depends and Depends at any depth, whatever their arch (an armel library
 * an Essential package needs is in), and nothing that only depends on a member.
 */
START_TEST(essential_closure)
{
	static const int d0[] = { 1, 2, -1 }, d1[] = { 3, -1 }, d3[] = { 4, -1 }, d5[] = { 0, -1 },
			 d6[] = { 7, -1 };
	struct plan p;
	size_t n;
	char *m;

	small_plan(&p, 8);
	p.v[0].essential = 1;
	depends(&p, 0, 1, d0); /* Pre-Depends p1, Depends p2 */
	depends(&p, 1, 0, d1);
	depends(&p, 3, 0, d3);
	free(p.v[4].arch);
	p.v[4].arch = xstrdup("armel");
	depends(&p, 5, 0, d5);  /* p5 depends on the essential p0: not a member for that */
	depends(&p, 6, 0, d6);  /* p6 -> p7, neither essential */
	m = members(&p, &n);
	ck_assert_str_eq(m, "0 1 2 3 4");
	ck_assert_uint_eq(n, 5);
	free(m);
	plan_release(&p);
}
END_TEST

/* A dependency cycle is closed once: every member of it, each counted once, and it ends. */
START_TEST(essential_cycle)
{
	static const int d1[] = { 2, -1 }, d2[] = { 3, -1 }, d3[] = { 1, 2, -1 }, d4[] = { 4, -1 };
	struct plan p;
	size_t n;
	char *m;

	small_plan(&p, 6);
	set_priority(&p, 2, "required");
	depends(&p, 1, 0, d1);
	depends(&p, 2, 0, d2);
	depends(&p, 3, 1, d3);
	depends(&p, 4, 0, d4); /* a self-loop outside the set */
	m = members(&p, &n);
	ck_assert_str_eq(m, "1 2 3");
	ck_assert_uint_eq(n, 3);
	free(m);
	plan_release(&p);
}
END_TEST

/* A plan without any Essential or required package (base = "none"): an empty set. */
START_TEST(essential_none)
{
	static const int d1[] = { 0, -1 };
	struct plan p;
	size_t n;
	char *m;

	small_plan(&p, 3);
	depends(&p, 1, 0, d1);
	set_priority(&p, 2, "important");
	m = members(&p, &n);
	ck_assert_str_eq(m, "");
	ck_assert_uint_eq(n, 0);
	free(m);
	plan_release(&p);
	small_plan(&p, 0); /* and an empty plan */
	m = members(&p, &n);
	ck_assert_str_eq(m, "");
	ck_assert_uint_eq(n, 0);
	free(m);
	plan_release(&p);
}
END_TEST

/* The renames a plan holds: one per (arch, old name), copied, found by both, their users
 * kept once, all freed with the plan. */
START_TEST(abi_renames)
{
	struct plan p = { 0 };
	char arch[] = "armhf";
	const struct plan_abi_rename *a;

	plan_add_abi_rename(&p, arch, "libssl3", "libssl3t64");
	plan_add_abi_rename(&p, "armel", "libssl3", "libssl3t64");
	plan_add_abi_rename(&p, "armhf", "libssl3", "other");
	arch[0] = 'x';
	ck_assert_uint_eq(p.n_abi_renames, 2);
	a = plan_abi_rename_find(&p, "armhf", "libssl3");
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(a->new_name, "libssl3t64");
	ck_assert_ptr_nonnull(plan_abi_rename_find(&p, "armel", "libssl3"));
	ck_assert_ptr_null(plan_abi_rename_find(&p, "amd64", "libssl3"));
	ck_assert_ptr_null(plan_abi_rename_find(&p, "armhf", "libssl3t64"));
	plan_add_abi_user(&p, "armhf", "libssl3", "app:armhf");
	plan_add_abi_user(&p, "armhf", "libssl3", "app:armhf");
	plan_add_abi_user(&p, "amd64", "libssl3", "app:amd64"); /* no rename there: nothing */
	ck_assert_uint_eq(a->users.n, 1);
	ck_assert_str_eq(a->users.v[0], "app:armhf");
	ck_assert_uint_eq(plan_abi_rename_find(&p, "armel", "libssl3")->users.n, 0);
	plan_release(&p);
	ck_assert_uint_eq(p.n_abi_renames, 0);
	ck_assert_ptr_null(p.abi_renames);
}
END_TEST

/* Two packages, one local, as --plan prints them (mkimage(1)); their seed and installed size. */
static char amd64[] = "amd64", all[] = "all", a[] = "a", quoted[] = "b\"", v1[] = "1",
	    v2[] = "2~1", url[] = "http://x/a.deb", kib[] = "3", huge[] = "99999999999999";
static char *archs[] = { amd64, NULL };

static void two(struct plan *p, struct plan_entry *e)
{
	memset(p, 0, sizeof(*p));
	e[0] = (struct plan_entry){ .name = a, .arch = amd64, .version = v1, .size = 10, .url = url,
				    .installed_size = kib };
	e[1] = (struct plan_entry){ .name = quoted, .arch = all, .version = v2,
				    .installed_size = huge };
	memset(e[0].sha256, 'a', 64);
	memset(e[1].sha256, 'b', 64);
	p->v = e;
	p->n = 2;
	p->archs.v = archs;
	p->archs.n = 1;
}

START_TEST(format_text_and_json)
{
	struct plan_entry e[2];
	struct buf b = { 0 };
	struct plan p;

	two(&p, e);
	plan_format(&p, 0, &b);
	ck_assert_str_eq(b.p, "a:amd64=1 10 " "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
			      "b\":all=2~1 0 " "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n");
	buf_release(&b);
	plan_format(&p, 1, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "{\n  \"architectures\": [\"amd64\"],\n  \"packages\": [\n    "
					  "{ \"name\": \"a\", \"architecture\": \"amd64\", \"version\": \"1\", "
					  "\"size\": 10, \"sha256\": \"aaaa"));
	ck_assert_ptr_nonnull(strstr(b.p, "{ \"name\": \"b\\\"\", \"architecture\": \"all\""));
	ck_assert_ptr_nonnull(strstr(b.p, "\"local\": true }\n  ],\n  \"total\": 2\n}\n"));
	buf_release(&b);
	p.n = 0;
	plan_format(&p, 1, &b);
	ck_assert_str_eq(b.p, "{\n  \"architectures\": [\"amd64\"],\n  \"packages\": [],\n  \"total\": 0\n}\n");
	buf_release(&b);
}
END_TEST

/* The seed changes with any package's sha256; an Installed-Size is bounded at a TiB. */
START_TEST(seed_and_installed_bytes)
{
	char digest[65], seed1[65], seed2[65];
	struct plan_entry e[2];
	struct plan p;

	memset(digest, 'd', 64);
	digest[64] = '\0';
	two(&p, e);
	plan_seed(&p, digest, seed1);
	ck_assert_uint_eq(strlen(seed1), 64);
	e[1].sha256[0] = 'c';
	plan_seed(&p, digest, seed2);
	ck_assert_str_ne(seed1, seed2);
	ck_assert_uint_eq(plan_installed_bytes(&p), 3 * 1024 + (1ULL << 40));
}
END_TEST

Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, dpkg_name, 0, sizeof(names) / sizeof(names[0]));
	tcase_add_test(tc, release_everything);
	tcase_add_test(tc, essential_seeds);
	tcase_add_test(tc, essential_closure);
	tcase_add_test(tc, essential_cycle);
	tcase_add_test(tc, essential_none);
	tcase_add_test(tc, abi_renames);
	tcase_add_test(tc, format_text_and_json);
	tcase_add_test(tc, seed_and_installed_bytes);
	suite_add_tcase(s, tc);
	return s;
}
