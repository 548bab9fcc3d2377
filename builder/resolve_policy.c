/*
 * Resolve policy: which package satisfies a dependency, decided as apt decides it, so that
 * mkimage installs what `apt-get install` would (README "How packages are chosen").
 *
 * apt (apt-pkg/depcache.cc, MarkInstall) walks the request depth first: a dependency already
 * satisfied by a marked package is left alone; otherwise the alternatives of the or-group are
 * tried in the order written, and within one alternative the candidates are ordered by
 * CompareProviders: the package of that very name before other providers, Essential first, the
 * native architecture before the others (in APT::Architectures order), the higher Priority. This
 * file replays that walk over the libsolv pool; resolve.c then hands the marked set to libsolv,
 * which verifies it (and searches itself only when apt's greedy choice is not installable).
 */
#include "resolve_policy.h"

#include <string.h>

#include <solv/bitmap.h>
#include <solv/evr.h>
#include <solv/repo.h>
#include <solv/solver.h>

/* The name of dependency atom `dep` without its ":arch" (the "group" apt prefers). */
static const char *target_base(const Pool *pool, Id dep, size_t *len)
{
	const char *n, *colon;

	while (ISRELDEP(dep))
		dep = GETRELDEP(pool, dep)->name;
	n = pool_id2str(pool, dep);
	colon = strchr(n, ':');
	*len = colon ? (size_t)(colon - n) : strlen(n);
	return n;
}

static size_t arch_rank(const struct resolve_policy *pol, Id arch)
{
	size_t i;

	if (arch == ARCH_ALL)
		return 0; /* apt files Architecture: all under the native arch */
	for (i = 0; i < pol->n_archs; i++)
		if (pol->arch_ids[i] == arch)
			return i;
	return pol->n_archs;
}

/* apt's CompareProviders: < 0 if `a` is preferred over `b` for a target named base[0..blen). */
static int provider_cmp(const struct resolve_policy *pol, Id a, Id b, const char *base,
			size_t blen)
{
	Pool *pool = pol->pool;
	const Solvable *x = pool_id2solvable(pool, a), *y = pool_id2solvable(pool, b);
	const char *xn = pool_id2str(pool, x->name), *yn = pool_id2str(pool, y->name);
	int xg = strlen(xn) == blen && !memcmp(xn, base, blen);
	int yg = strlen(yn) == blen && !memcmp(yn, base, blen);
	size_t xa, ya;
	int r;

	if (xg != yg)
		return yg - xg;
	if ((pol->rank[a] == 0) != (pol->rank[b] == 0))
		return pol->rank[a] == 0 ? -1 : 1;
	xa = arch_rank(pol, x->arch);
	ya = arch_rank(pol, y->arch);
	if (xa != ya)
		return xa < ya ? -1 : 1;
	if (pol->rank[a] != pol->rank[b])
		return pol->rank[a] < pol->rank[b] ? -1 : 1;
	if ((r = strcmp(xn, yn)))
		return r;
	/* several considered versions (allow-older, local .debs): the newest */
	return pool_evrcmp(pool, y->evr, x->evr, EVRCMP_COMPARE);
}

/* The best candidate for one alternative (no REL_OR inside), or 0. */
static Id pick_one(const struct resolve_policy *pol, Id alt, const Map *avoid)
{
	Pool *pool = pol->pool;
	size_t blen;
	const char *base = target_base(pool, alt, &blen);
	Id p, pp, best = 0;

	FOR_PROVIDES(p, pp, alt) {
		if (!MAPTST(pol->considered, p) || (pol->excluded && MAPTST(pol->excluded, p)) ||
		    (avoid && MAPTST(avoid, p)))
			continue;
		if (!best || provider_cmp(pol, p, best, base, blen) < 0)
			best = p;
	}
	return best;
}

/* or-groups are built left-nested: ((a | b) | c) */
static Id pick_alt(const struct resolve_policy *pol, Id dep, const Map *avoid)
{
	Reldep *rd;
	Id p;

	if (!ISRELDEP(dep) || (rd = GETRELDEP(pol->pool, dep))->flags != REL_OR)
		return pick_one(pol, dep, avoid);
	if ((p = pick_alt(pol, rd->name, avoid)))
		return p;
	return pick_alt(pol, rd->evr, avoid);
}

Id resolve_policy_pick(const struct resolve_policy *pol, Id dep, const Map *avoid)
{
	return pick_alt(pol, dep, avoid);
}

struct walk {
	const struct resolve_policy *pol;
	Map marked;
	Map conflicted; /* solvables a marked package conflicts with (and the marked ones' rivals) */
	Queue *out;
};

static int satisfied(const struct walk *w, Id dep)
{
	Pool *pool = w->pol->pool;
	Id p, pp;

	FOR_PROVIDES(p, pp, dep)
		if (MAPTST(&w->marked, p))
			return 1;
	return 0;
}

/* Whether `p` conflicts with a marked package (apt would not pick it either). */
static int clashes(const struct walk *w, Id p)
{
	Pool *pool = w->pol->pool;
	Solvable *s = pool_id2solvable(pool, p);
	Id *dp, q, qq;

	if (MAPTST(&w->conflicted, p))
		return 1;
	if (!s->conflicts)
		return 0;
	for (dp = s->repo->idarraydata + s->conflicts; *dp; dp++)
		FOR_PROVIDES(q, qq, *dp)
			if (q != p && MAPTST(&w->marked, q))
				return 1;
	return 0;
}

static void mark(struct walk *w, Id p)
{
	Pool *pool = w->pol->pool;
	Solvable *s = pool_id2solvable(pool, p);
	Id *dp, q, qq;

	MAPSET(&w->marked, p);
	queue_push(w->out, p);
	if (!s->conflicts)
		return;
	for (dp = s->repo->idarraydata + s->conflicts; *dp; dp++)
		FOR_PROVIDES(q, qq, *dp)
			if (q != p)
				MAPSET(&w->conflicted, q);
}

/* Choose and mark a package for `dep`; 0 if apt would find none that installs. */
static Id satisfy(struct walk *w, Id dep)
{
	Map avoid;
	Id p;

	p = pick_alt(w->pol, dep, &w->conflicted);
	if (!p || !clashes(w, p))
		return p;
	/* rare: the favourite conflicts with a marked package; try the others, apt's way */
	map_init(&avoid, w->pol->pool->nsolvables);
	map_or(&avoid, &w->conflicted);
	do
		MAPSET(&avoid, p);
	while ((p = pick_alt(w->pol, dep, &avoid)) && clashes(w, p));
	map_free(&avoid);
	return p;
}

/*
 * The next dependency of `p` to follow: *pos >= 0 is a position in its requires (Pre-Depends and
 * Depends), *pos < 0 one in its recommends (-1 the first).
 */
static Id next_dep(const struct walk *w, Id p, int *pos)
{
	Solvable *s = pool_id2solvable(w->pol->pool, p);
	Id *dp, d;

	if (*pos >= 0 && s->requires)
		for (dp = s->repo->idarraydata + s->requires; (d = dp[*pos]);) {
			(*pos)++;
			if (d != SOLVABLE_PREREQMARKER)
				return d;
		}
	if (*pos >= 0)
		*pos = -1;
	if (!w->pol->recommends || !s->recommends)
		return 0;
	d = s->repo->idarraydata[s->recommends + (Offset)(-*pos - 1)];
	if (d)
		(*pos)--;
	return d;
}

void resolve_policy_walk(const struct resolve_policy *pol, const Queue *roots, Queue *out)
{
	struct walk w = { .pol = pol, .out = out };
	Queue stack; /* frames: solvable, position in its dependencies */
	Id p, dep;
	int i, pos;

	map_init(&w.marked, pol->pool->nsolvables);
	map_init(&w.conflicted, pol->pool->nsolvables);
	queue_init(&stack);
	for (i = 0; i < roots->count; i++)
		if (!MAPTST(&w.marked, roots->elements[i]))
			mark(&w, roots->elements[i]);
	for (i = 0; i < roots->count; i++) {
		queue_push2(&stack, roots->elements[i], 0);
		while (stack.count) {
			p = stack.elements[stack.count - 2];
			pos = stack.elements[stack.count - 1];
			dep = next_dep(&w, p, &pos);
			stack.elements[stack.count - 1] = pos;
			if (!dep) {
				queue_truncate(&stack, stack.count - 2);
				continue;
			}
			if (satisfied(&w, dep) || !(p = satisfy(&w, dep)))
				continue;
			mark(&w, p);
			queue_push2(&stack, p, 0);
		}
	}
	queue_free(&stack);
	map_free(&w.marked);
	map_free(&w.conflicted);
}

/* The newest of a 0-terminated list of solvables (the versions of one requested name). */
static Id newest_of(Pool *pool, const Id *ids)
{
	Id best = 0;

	for (; *ids; ids++)
		if (!best || pool_evrcmp(pool, pool_id2solvable(pool, *ids)->evr,
					 pool_id2solvable(pool, best)->evr, EVRCMP_COMPARE) > 0)
			best = *ids;
	return best;
}

void resolve_policy_roots(const struct resolve_policy *pol, const Queue *jobs, Queue *roots)
{
	Pool *pool = pol->pool;
	Id how, what, p;
	int i;

	for (i = 0; i + 1 < jobs->count; i += 2) {
		how = jobs->elements[i];
		what = jobs->elements[i + 1];
		if ((how & SOLVER_JOBMASK) != SOLVER_INSTALL)
			continue;
		switch (how & SOLVER_SELECTMASK) {
		case SOLVER_SOLVABLE:
			queue_push(roots, what);
			break;
		case SOLVER_SOLVABLE_ONE_OF:
			if ((p = newest_of(pool, pool->whatprovidesdata + what)))
				queue_push(roots, p);
			break;
		case SOLVER_SOLVABLE_PROVIDES:
			if ((p = resolve_policy_pick(pol, what, NULL)))
				queue_push(roots, p);
			break;
		}
	}
}
