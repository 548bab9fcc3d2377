/* The install order (resolve_order.c) on plans built by hand: no indexes, no libsolv. */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/resolve_order.h"

/*
 * A plan of `n` entries named by `spec`, one word each: "name[:arch][!][^]" where '!' marks it
 * Essential and '^' Pre-Depended. Depends are added with dep() afterwards.
 */
static void make_plan(struct plan *pl, const char *spec)
{
	char *copy = xstrdup(spec), *save = NULL, *w;

	memset(pl, 0, sizeof(*pl));
	pl->v = xcalloc(32, sizeof(*pl->v));
	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		struct plan_entry *e = &pl->v[pl->n++];
		size_t len = strcspn(w, ":!^");

		e->name = xstrndup(w, len);
		e->arch = w[len] == ':' ? xstrndup(w + len + 1, strcspn(w + len + 1, "!^"))
					 : xstrdup("armhf");
		e->essential = strchr(w, '!') != NULL;
		e->pre_depended = strchr(w, '^') != NULL;
	}
	pl->alloc = 32;
	free(copy);
}

static size_t find(const struct plan *pl, const char *name)
{
	size_t i;

	for (i = 0; i < pl->n; i++)
		if (!strcmp(pl->v[i].name, name))
			return i;
	ck_abort_msg("no entry '%s'", name);
	return 0;
}

/* `from` depends on `to`; Pre-Depends must be added before Depends, as resolve.c does. */
static void dep(struct plan *pl, const char *from, const char *to, int pre)
{
	struct plan_entry *e = &pl->v[find(pl, from)];

	e->depends = xrealloc(e->depends, (e->n_depends + 1) * sizeof(*e->depends));
	e->depends[e->n_depends++] = find(pl, to);
	if (pre)
		e->n_pre_depends = e->n_depends;
}

/* The order as "a b c", names only (arch appended when not armhf). */
static char *order_of(const struct plan *pl)
{
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < pl->n; i++) {
		buf_addf(&b, "%s%s", i ? " " : "", pl->v[i].name);
		if (strcmp(pl->v[i].arch, "armhf"))
			buf_addf(&b, ":%s", pl->v[i].arch);
	}
	return buf_detach(&b);
}

/* Order `pl` and compare the result with `want`. */
static void check_order(struct plan *pl, const char *want)
{
	char *o;

	resolve_order(pl);
	o = order_of(pl);
	ck_assert_str_eq(o, want);
	free(o);
}

/* Without a cycle, every entry's depends (renumbered) point at earlier entries. */
static void assert_depends_earlier(const struct plan *pl)
{
	size_t i, k;

	for (i = 0; i < pl->n; i++)
		for (k = 0; k < pl->v[i].n_depends; k++)
			ck_assert_uint_lt(pl->v[i].depends[k], i);
}

START_TEST(chain_puts_dependencies_first)
{
	struct plan pl;

	make_plan(&pl, "a b c d");
	dep(&pl, "a", "b", 0);
	dep(&pl, "b", "c", 0);
	dep(&pl, "d", "a", 0);
	check_order(&pl, "c b a d");
	assert_depends_earlier(&pl);
	/* depends now point at the new positions: a (index 2) depends on b (index 1) */
	ck_assert_uint_eq(pl.v[2].depends[0], 1);
	ck_assert_uint_eq(pl.v[3].depends[0], 2);
	plan_release(&pl);
}
END_TEST

/* Independent entries: by name, then by arch (deterministic whatever the input order). */
START_TEST(ties_by_name_then_arch)
{
	struct plan pl;

	make_plan(&pl, "zlib:armel b libc:armel libc zlib");
	check_order(&pl, "b libc:armel libc zlib:armel zlib");
	plan_release(&pl);
}
END_TEST

/* Tier 0 (Essential, Pre-Depends targets and what they need) goes before everything else. */
START_TEST(essential_tier_first)
{
	struct plan pl;

	make_plan(&pl, "aaa base! dash^ libdash zz");
	dep(&pl, "dash", "libdash", 0);
	dep(&pl, "aaa", "dash", 1);
	check_order(&pl, "base libdash dash aaa zz");
	assert_depends_earlier(&pl);
	plan_release(&pl);
}
END_TEST

/*
 * A Depends cycle is placed as one block, after what it waits on (c) and before what depends on
 * it (user); inside it, when no member waits on a Pre-Depends, the name decides.
 */
START_TEST(cycle_honours_pre_depends)
{
	struct plan pl;

	make_plan(&pl, "a b c^ user");
	dep(&pl, "a", "c", 1);
	dep(&pl, "a", "b", 0);
	dep(&pl, "b", "a", 0);
	dep(&pl, "user", "a", 0);
	/* c first (the cycle waits on it); then a and b each wait on one member: the name */
	check_order(&pl, "c a b user");
	plan_release(&pl);
}
END_TEST

/* In a cycle, a member with an unplaced Pre-Depends waits for the others, whatever its name. */
START_TEST(cycle_member_with_pending_pre_depends_waits)
{
	struct plan pl;

	make_plan(&pl, "a b");
	dep(&pl, "a", "b", 1);
	dep(&pl, "b", "a", 0);
	check_order(&pl, "b a");
	plan_release(&pl);
}
END_TEST

START_TEST(empty_plan)
{
	struct plan pl;

	make_plan(&pl, "");
	resolve_order(&pl);
	ck_assert_uint_eq(pl.n, 0);
	plan_release(&pl);
}
END_TEST

Suite *resolve_order_suite(void)
{
	Suite *s = suite_create("resolve_order");
	TCase *tc = tcase_create("order");

	tcase_add_test(tc, chain_puts_dependencies_first);
	tcase_add_test(tc, ties_by_name_then_arch);
	tcase_add_test(tc, essential_tier_first);
	tcase_add_test(tc, cycle_honours_pre_depends);
	tcase_add_test(tc, cycle_member_with_pending_pre_depends_waits);
	tcase_add_test(tc, empty_plan);
	suite_add_tcase(s, tc);
	return s;
}
