#include <check.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "lib/str.h"
#include "resolve/resolve_ctx.h"

#define SHA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static char *fields(const char *const *locked, const char *const *now)
{
	struct strv a = { 0 }, b = { 0 };
	struct buf out = { 0 };

	for (; *locked; locked++)
		strv_push(&a, *locked);
	for (; *now; now++)
		strv_push(&b, *now);
	resolve_lock_fields_changed(&a, &b, &out);
	strv_release(&a);
	strv_release(&b);
	return out.p ? buf_detach(&out) : xstrdup("");
}

/* A key whose digest differs, one only the lock has and one only the recipe has: each once. */
START_TEST(fields_named_once)
{
	const char *locked[] = { "name " SHA, "packages.install " SHA, "hostname " SHA, NULL };
	const char *now[] = { "name " SHA, "packages.install " SHB, "host_twins " SHA, NULL };
	const char *same[] = { "name " SHA, "packages.install " SHA, "hostname " SHA, NULL };
	char *s = fields(locked, now);

	ck_assert_str_eq(s, "'packages.install', 'host_twins', 'hostname'");
	free(s);
	s = fields(locked, same);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

static void lock_add(struct lockfile *lk, const char *name, const char *arch, const char *v)
{
	ALLOC_GROW(lk->pkgs, lk->n_pkgs + 1, lk->alloc_pkgs);
	lk->pkgs[lk->n_pkgs++] = (struct lock_pkg){ .name = xstrdup(name), .arch = xstrdup(arch),
						    .version = xstrdup(v) };
}

static void plan_add(struct plan *p, const char *name, const char *arch, const char *v)
{
	ALLOC_GROW(p->v, p->n + 1, p->alloc);
	p->v[p->n++] = (struct plan_entry){ .name = xstrdup(name), .arch = xstrdup(arch),
					    .version = xstrdup(v) };
}

/* The lock sorted, the plan in install order: added, removed and changed, by name and arch. */
START_TEST(packages_added_removed_changed)
{
	struct lockfile lk = { 0 };
	struct plan p = { 0 };
	struct buf out = { 0 };

	lock_add(&lk, "base-files", "armhf", "12.4");
	lock_add(&lk, "busybox", "armhf", "1:1.35.0-4");
	lock_add(&lk, "libc6", "armel", "2.36-9");
	lock_add(&lk, "libc6", "armhf", "2.36-9");
	plan_add(&p, "libc6", "armhf", "2.36-10");
	plan_add(&p, "base-files", "armhf", "12.4");
	plan_add(&p, "zlib1g", "armhf", "1:1.2.13");
	plan_add(&p, "libc6", "armel", "2.36-9");
	resolve_lock_packages_changed(&lk, &p, &out);
	ck_assert_str_eq(out.p, "the plan would add 1 (zlib1g:armhf 1:1.2.13), remove 1 "
				"(busybox:armhf 1:1.35.0-4), change 1 (libc6:armhf 2.36-9 -> 2.36-10)");
	buf_release(&out);

	plan_release(&p);
	memset(&p, 0, sizeof(p));
	plan_add(&p, "libc6", "armhf", "2.36-9");
	plan_add(&p, "libc6", "armel", "2.36-9");
	plan_add(&p, "busybox", "armhf", "1:1.35.0-4");
	plan_add(&p, "base-files", "armhf", "12.4");
	resolve_lock_packages_changed(&lk, &p, &out);
	ck_assert_str_eq(out.p, "the package set stays the same");
	buf_release(&out);
	plan_release(&p);
	lockfile_release(&lk);
}
END_TEST

/* Beyond 8 of a kind the rest is counted, not listed: the message stays one line. */
START_TEST(packages_many_counted)
{
	struct lockfile lk = { 0 };
	struct plan p = { 0 };
	struct buf out = { 0 };
	char name[16];
	int i;

	for (i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "p%02d", i);
		plan_add(&p, name, "armhf", "1");
	}
	resolve_lock_packages_changed(&lk, &p, &out);
	ck_assert_ptr_nonnull(strstr(out.p, "the plan would add 12 (p00:armhf 1, "));
	ck_assert_ptr_nonnull(strstr(out.p, "p07:armhf 1, ...)"));
	ck_assert_ptr_null(strstr(out.p, "p08"));
	buf_release(&out);
	plan_release(&p);
	lockfile_release(&lk);
}
END_TEST

Suite *resolve_lockchange_suite(void)
{
	Suite *s = suite_create("resolve_lockchange");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, fields_named_once);
	tcase_add_test(tc, packages_added_removed_changed);
	tcase_add_test(tc, packages_many_counted);
	suite_add_tcase(s, tc);
	return s;
}
