/*
 * Resolve, the 64-bit time_t transition (debian/t64.h) read from the pool: which considered
 * package carries a library's new name on an architecture where it does not provide the old
 * one. That is the index data: the new name follows the rule, the package Breaks (or Conflicts
 * with) the old name, and its Provides lack it (they carry it where the ABI did not change).
 * Used to explain a dependency nothing provides and to tell the plan which renames it holds.
 */
#include <string.h>

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

/* Is `p` the new name of `old` (plain name) on its own architecture, where it lacks `old`? */
static int succeeds(Pool *pool, Id p, Id old)
{
	Solvable *s = pool_id2solvable(pool, p);
	const Id *data = s->repo->idarraydata;

	return t64_renamed(pool_id2str(pool, old), pool_id2str(pool, s->name)) &&
	       lists_name(pool, data + s->conflicts, old) &&
	       !lists_name(pool, data + s->provides, old);
}

/* The considered package of `arch` carrying the new name of `old` there, or 0. */
static Id successor(const struct resolve_ctx *c, Id old, Id arch)
{
	Pool *pool = c->pool;
	Id p;

	FOR_POOL_SOLVABLES(p) {
		if (pool_id2solvable(pool, p)->arch == arch && MAPTST(&c->considered, p) &&
		    succeeds(pool, p, old))
			return p;
	}
	return 0;
}

/* The recipe's architectures where `old` has a new name that does not provide it: "armhf". */
static void abi_archs(const struct resolve_ctx *c, Id old, struct buf *b)
{
	size_t i, n = 0;

	for (i = 0; i < c->archs.n; i++) {
		Id a = pool_str2id(c->pool, c->archs.v[i], 0);

		if (!a || !successor(c, old, a))
			continue;
		buf_addf(b, "%s%s", n++ ? ", " : "", c->archs.v[i]);
	}
}

/* One name "n:arch" a package depends on, explained when it is a renamed library. */
static void explain_name(const struct resolve_ctx *c, Id src, Id dep, struct strv *notes)
{
	Pool *pool = c->pool;
	const char *n = pool_id2str(pool, dep), *colon = strrchr(n, ':');
	const char *pkg = pool_id2str(pool, pool_id2solvable(pool, src)->name);
	Id old = colon ? pool_strn2id(pool, n, (unsigned)(colon - n), 0) : 0;
	Id arch = colon ? pool_str2id(pool, colon + 1, 0) : 0;
	struct buf b = { 0 }, archs = { 0 };
	const char *oldn, *newn;
	Id s;

	if (!old || !arch || !(s = successor(c, old, arch)))
		return;
	oldn = pool_id2str(pool, old);
	newn = pool_id2str(pool, pool_id2solvable(pool, s)->name);
	abi_archs(c, old, &archs);
	buf_addf(&b, "'%s' is '%s' since Debian's 64-bit time_t transition, and on %s '%s' does "
		     "not provide '%s': " T64_WHY,
		 oldn, newn, archs.p, newn, oldn);
	if (!strv_contains(notes, b.p))
		strv_push(notes, b.p);
	buf_release(&b);
	buf_addf(&b, "ways out: rebuild '%s' for this release against '%s', or build the image on "
		     "the release '%s' was made for (e.g. suite = \"bookworm\")",
		 pkg, newn, pkg);
	if (!strv_contains(notes, b.p))
		strv_push(notes, b.p);
	buf_release(&b);
	buf_release(&archs);
}

static void explain_dep(const struct resolve_ctx *c, Id src, Id dep, struct strv *notes,
			int depth)
{
	Reldep *rd;

	if (depth > 64)
		return;
	if (!ISRELDEP(dep)) {
		explain_name(c, src, dep, notes);
		return;
	}
	rd = GETRELDEP(c->pool, dep);
	if (rd->flags == REL_OR) {
		explain_dep(c, src, rd->name, notes, depth + 1);
		explain_dep(c, src, rd->evr, notes, depth + 1);
	} else if (rd->flags != REL_WITHOUT) {
		explain_dep(c, src, rd->name, notes, depth + 1);
	}
}

void resolve_t64_explain(const struct resolve_ctx *c, Id src, Id dep, struct strv *notes)
{
	explain_dep(c, src, dep, notes, 0);
}

void resolve_t64_renames(const struct resolve_ctx *c, const Id *chosen, size_t n,
			 struct plan *pl)
{
	Pool *pool = c->pool;
	size_t i;
	Id *dp;

	for (i = 0; i < n; i++) {
		Solvable *s = pool_id2solvable(pool, chosen[i]);

		if (s->arch == ARCH_ALL || !strstr(pool_id2str(pool, s->name), "t64"))
			continue;
		for (dp = s->repo->idarraydata + s->conflicts; *dp; dp++) {
			Id old = dep_base(pool, *dp);

			if (ISRELDEP(old) || !succeeds(pool, chosen[i], old))
				continue;
			log_debug("resolve: '%s' is '%s' on %s, a new ABI (64-bit time_t)",
				  pool_id2str(pool, old), pool_id2str(pool, s->name),
				  pool_id2str(pool, s->arch));
			plan_add_abi_rename(pl, pool_id2str(pool, s->arch), pool_id2str(pool, old),
					    pool_id2str(pool, s->name));
		}
	}
}
