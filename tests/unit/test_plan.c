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

Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, dpkg_name, 0, sizeof(names) / sizeof(names[0]));
	tcase_add_test(tc, release_everything);
	suite_add_tcase(s, tc);
	return s;
}
