/*
 * Resolve, the 64-bit time_t transition (debian/t64.h) read from the pool: which considered
 * package carries a library's new name on an architecture where it does not provide the old
 * one. That is the index data: the new name follows the rule, the package Breaks (or Conflicts
 * with) or Replaces the old name, and its Provides lack it (they carry it where the ABI did not
 * change).
 * Used to explain a dependency nothing provides and to tell the plan which renames it holds.
 */
#include <stdlib.h>
#include <string.h>

#include "debian/relation.h"
#include "debian/t64.h"
#include "lib/log.h"
#include "resolve_ctx.h"

/* The name a dependency, provide or conflict is about, without version or ":#same" guard. */
static Id dep_base(Pool *pool, Id dep)
{
	int depth = 0;

	while (ISRELDEP(dep) && depth++ < 64)
		dep = GETRELDEP(pool, dep)->name;
	return dep;
}

static int lists_name(Pool *pool, const Id *dp, Id name)
{
	for (; *dp; dp++)
		if (dep_base(pool, *dp) == name)
			return 1;
	return 0;
}

/*
 * The names `p` (named `name`) breaks, conflicts with or replaces that it is the new name of, by
 * the rule, into `olds`. Replaces is not in the pool: the stanza is read again, only for the
 * few packages the rule picks.
 */
static void old_names(const struct resolve_ctx *c, Id p, const char *name, struct strv *olds)
{
	Pool *pool = c->pool;
	Solvable *s = pool_id2solvable(pool, p);
	struct relation_iter it;
	struct relation r;
	struct deb822 d;
	const char *v;
	const Id *dp;

	for (dp = s->repo->idarraydata + s->conflicts; *dp; dp++) {
		const char *n = pool_id2str(pool, dep_base(pool, *dp));

		if (t64_renamed(n, name) && !strv_contains(olds, n))
			strv_push(olds, n);
	}
	if (resolve_read_stanza(c, p, &d))
		return;
	if ((v = deb822_get(&d, "Replaces"))) {
		relation_iter_init(&it, v, strlen(v));
		while (relation_next(&it, &r) > 0) {
			char *n = xstrndup(r.name, r.name_len);

			if (t64_renamed(n, name) && !strv_contains(olds, n))
				strv_push(olds, n);
			free(n);
		}
	}
	deb822_close(&d);
}

/* Does `p` provide `old` (a plain name) on its own architecture? */
static int provides(Pool *pool, Id p, const char *old)
{
	Solvable *s = pool_id2solvable(pool, p);
	Id id = pool_str2id(pool, old, 0);

	return id && lists_name(pool, s->repo->idarraydata + s->provides, id);
}

/*
 * Is `p` the new name of `old` on its own architecture, where it lacks `old`? It Breaks it
 * (1122 of trixie armhf's 1204 renames) or only Replaces it (the other 82).
 */
static int succeeds(const struct resolve_ctx *c, Id p, const char *old)
{
	const char *name = pool_id2str(c->pool, pool_id2solvable(c->pool, p)->name);
	struct strv olds = { 0 };
	int yes;

	if (!t64_renamed(old, name) || provides(c->pool, p, old))
		return 0;
	old_names(c, p, name, &olds);
	yes = strv_contains(&olds, old);
	strv_release(&olds);
	return yes;
}

/* The considered package of `arch` carrying the new name of `old` there, or 0. */
static Id successor(const struct resolve_ctx *c, const char *old, Id arch)
{
	Pool *pool = c->pool;
	Id p;

	FOR_POOL_SOLVABLES(p) {
		if (pool_id2solvable(pool, p)->arch == arch && MAPTST(&c->considered, p) &&
		    succeeds(c, p, old))
			return p;
	}
	return 0;
}

/* Does something considered provide `dep` (alternatives, versions and all)? */
static int provided(const struct resolve_ctx *c, Id dep)
{
	Pool *pool = c->pool;
	Id p, pp;

	FOR_PROVIDES(p, pp, dep)
		if (MAPTST(&c->considered, p))
			return 1;
	return 0;
}

#define RENAMED_MAX 64 /* renamed libraries one message names */

/* Renamed libraries a package depends on by their old names: olds[i] is now news[i]. */
struct renamed {
	struct strv olds, news;
};

/* The names "n:arch" in `dep` whose library has a new name on that arch, into `r` (each once). */
static void renamed_in(const struct resolve_ctx *c, Id dep, struct renamed *r, int depth)
{
	Pool *pool = c->pool;
	const char *n, *colon;
	char *old;
	Id arch, s;

	if (depth > 64)
		return;
	if (ISRELDEP(dep)) {
		Reldep *rd = GETRELDEP(pool, dep);

		renamed_in(c, rd->name, r, depth + 1);
		if (rd->flags == REL_OR)
			renamed_in(c, rd->evr, r, depth + 1);
		return;
	}
	n = pool_id2str(pool, dep);
	colon = strrchr(n, ':');
	arch = colon ? pool_str2id(pool, colon + 1, 0) : 0;
	if (!arch || r->olds.n == RENAMED_MAX)
		return;
	old = xstrndup(n, (size_t)(colon - n));
	if (!strv_contains(&r->olds, old) && (s = successor(c, old, arch))) {
		strv_push(&r->olds, old);
		strv_push(&r->news, pool_id2str(pool, pool_id2solvable(pool, s)->name));
	}
	free(old);
}

/* "'a', 'b' and 'c'": the new names of `r` from index `from`, or with `now` the old names, each
 * followed by " (now 'new')". */
static void join(struct buf *b, const struct renamed *r, size_t from, int now)
{
	size_t i;

	for (i = from; i < r->olds.n; i++) {
		buf_adds(b, i == from ? "" : i + 1 == r->olds.n ? " and " : ", ");
		if (now)
			buf_addf(b, "'%s' (now '%s')", r->olds.v[i], r->news.v[i]);
		else
			buf_addf(b, "'%s'", r->news.v[i]);
	}
}

/* The recipe's architectures where `old` has a new name that does not provide it. */
static void abi_archs(const struct resolve_ctx *c, const char *old, struct buf *b)
{
	struct strv v = { 0 };
	size_t i;

	for (i = 0; i < c->archs.n; i++) {
		Id a = pool_str2id(c->pool, c->archs.v[i], 0);

		if (a && successor(c, old, a))
			strv_push(&v, c->archs.v[i]);
	}
	for (i = 0; i < v.n; i++)
		buf_addf(b, "%s%s", i == 0 ? "" : i + 1 == v.n ? " and " : ", ", v.v[i]);
	strv_release(&v);
}

static void push_note(struct strv *notes, struct buf *b)
{
	if (!strv_contains(notes, b->p))
		strv_push(notes, b->p);
	buf_release(b);
}

void resolve_t64_explain(const struct resolve_ctx *c, Id src, Id dep, struct strv *notes)
{
	Solvable *s = pool_id2solvable(c->pool, src);
	const char *pkg = pool_id2str(c->pool, s->name);
	struct renamed r = { 0 };
	struct buf b = { 0 };
	const Id *dp;

	renamed_in(c, dep, &r, 0);
	if (!r.olds.n)
		return;
	for (dp = s->repo->idarraydata + s->requires; *dp; dp++)
		if (*dp != SOLVABLE_PREREQMARKER && !provided(c, *dp))
			renamed_in(c, *dp, &r, 0);
	buf_addf(&b, "'%s' is '%s' since Debian's 64-bit time_t transition, and on ", r.olds.v[0],
		 r.news.v[0]);
	abi_archs(c, r.olds.v[0], &b);
	buf_addf(&b, " '%s' does not provide '%s': " T64_WHY, r.news.v[0], r.olds.v[0]);
	push_note(notes, &b);
	if (r.olds.n > 1) {
		buf_addf(&b, "'%s' also depends on ", pkg);
		join(&b, &r, 1, 1);
		buf_adds(&b, ", renamed alike");
		push_note(notes, &b);
	}
	buf_addf(&b, "ways out: rebuild '%s' for this release against ", pkg);
	join(&b, &r, 0, 0);
	buf_addf(&b, ", or build the image on the release '%s' was made for (e.g. suite = "
		     "\"bookworm\")", pkg);
	push_note(notes, &b);
	strv_release(&r.olds);
	strv_release(&r.news);
}

/* The alternatives of dependency `dep`, in order, into `alts`. */
static void alternatives(Pool *pool, Id dep, Queue *alts, int depth)
{
	Reldep *rd = ISRELDEP(dep) ? GETRELDEP(pool, dep) : NULL;

	if (rd && rd->flags == REL_OR && depth < 64) {
		alternatives(pool, rd->name, alts, depth + 1);
		alternatives(pool, rd->evr, alts, depth + 1);
		return;
	}
	queue_push(alts, dep);
}

/* The rename in `pl` an alternative "X:arch (op v)" names by its old name, or NULL. */
static const struct plan_abi_rename *renamed_alt(Pool *pool, Id alt, const struct plan *pl)
{
	const char *n = pool_id2str(pool, dep_base(pool, alt)), *colon = strrchr(n, ':');
	const struct plan_abi_rename *a;
	char *old;

	if (!colon)
		return NULL;
	old = xstrndup(n, (size_t)(colon - n));
	a = plan_abi_rename_find(pl, colon + 1, old);
	free(old);
	return a;
}

/* Does a package in `chosen` provide `dep`? */
static int met_by(Pool *pool, Id dep, const Map *chosen)
{
	Id p, pp;

	FOR_PROVIDES(p, pp, dep)
		if (MAPTST(chosen, p))
			return 1;
	return 0;
}

/*
 * The renamed library a dependency group of a chosen package names by its old name, when the
 * plan meets the group only through that name: no other alternative (the new name included,
 * as a rebuilt library's shlibs write "liblcmaps0 | liblcmaps0t64") is in the plan. Or NULL.
 */
static const struct plan_abi_rename *old_abi_group(Pool *pool, const Queue *alts,
						   const Map *chosen, const struct plan *pl)
{
	const struct plan_abi_rename *a = NULL, *r;
	int i;

	for (i = 0; i < alts->count; i++)
		if ((r = renamed_alt(pool, alts->elements[i], pl)) && !a)
			a = r;
	for (i = 0; a && i < alts->count; i++)
		if (!renamed_alt(pool, alts->elements[i], pl) &&
		    met_by(pool, alts->elements[i], chosen))
			return NULL;
	return a;
}

/* Record `p` (chosen) as a user of each rename it depends on only through the old name. */
static void old_abi_users(Pool *pool, Id p, const Map *chosen, struct plan *pl)
{
	Solvable *s = pool_id2solvable(pool, p);
	const struct plan_abi_rename *a;
	const Id *dp;
	Queue alts;
	char *user;

	queue_init(&alts);
	for (dp = s->repo->idarraydata + s->requires; *dp; dp++) {
		if (*dp == SOLVABLE_PREREQMARKER)
			continue;
		queue_empty(&alts);
		alternatives(pool, *dp, &alts, 0);
		if (!(a = old_abi_group(pool, &alts, chosen, pl)))
			continue;
		user = xasprintf("%s:%s", pool_id2str(pool, s->name), pool_id2str(pool, s->arch));
		log_debug("resolve: '%s' reaches '%s' only through its old name '%s'", user,
			  a->new_name, a->old_name);
		plan_add_abi_user(pl, a->arch, a->old_name, user);
		free(user);
	}
	queue_free(&alts);
}

/* Record in `pl` the renames among the chosen packages whose new name lacks the old one. */
static void chosen_renames(const struct resolve_ctx *c, const Id *chosen, size_t n,
			   struct plan *pl)
{
	Pool *pool = c->pool;
	size_t i, j;

	for (i = 0; i < n; i++) {
		Solvable *s = pool_id2solvable(pool, chosen[i]);
		const char *name = pool_id2str(pool, s->name), *arch = pool_id2str(pool, s->arch);
		struct strv olds = { 0 };

		if (s->arch == ARCH_ALL || !strstr(name, "t64"))
			continue;
		old_names(c, chosen[i], name, &olds);
		for (j = 0; j < olds.n; j++) {
			if (provides(pool, chosen[i], olds.v[j]))
				continue;
			log_debug("resolve: '%s' is '%s' on %s, a new ABI (64-bit time_t)",
				  olds.v[j], name, arch);
			plan_add_abi_rename(pl, arch, olds.v[j], name);
		}
		strv_release(&olds);
	}
}

void resolve_t64_renames(const struct resolve_ctx *c, const Id *chosen, size_t n,
			 struct plan *pl)
{
	Map in;
	size_t i;

	chosen_renames(c, chosen, n, pl);
	if (!pl->n_abi_renames)
		return;
	map_init(&in, c->pool->nsolvables);
	for (i = 0; i < n; i++)
		MAPSET(&in, chosen[i]);
	for (i = 0; i < n; i++)
		old_abi_users(c->pool, chosen[i], &in, pl);
	map_free(&in);
}
