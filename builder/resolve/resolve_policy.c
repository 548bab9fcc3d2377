/*
 * Resolve policy: which package satisfies a dependency, decided as apt decides it, so that
 * mkimage installs what `apt-get install` would (mkimage(7), "How packages are chosen").
 *
 * apt (apt-pkg/depcache.cc, MarkInstall) walks the request depth first: a dependency already
 * satisfied by a marked package is left alone; otherwise the alternatives of the or-group are
 * tried in the order written, and within one alternative the candidates are ordered by
 * CompareProviders: the package of that very name before other providers, Essential first, the
 * native architecture before the others (in APT::Architectures order), the higher Priority. A
 * candidate whose own dependencies fail is discarded and the next one tried; a candidate's
 * Conflicts unmark what was marked before (apt's problem resolver then lets the dependants
 * choose again: repair() below). This file replays that walk over the libsolv pool; resolve.c
 * then hands the marked set to libsolv, which verifies it (and searches itself only when apt's
 * greedy choice is not installable).
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

/*
 * The walk's state. apt marks the request "protected" (from the user): a later choice never
 * unmarks it. Other marks can be undone: a candidate whose own dependencies fail is discarded,
 * and a candidate's Conflicts/Breaks unmark ("keep") the marked packages they hit.
 */
struct walk {
	const struct resolve_policy *pol;
	Map marked;
	Map roots;      /* the request: protected */
	Map conflicted; /* solvables a marked package conflicts with */
	Map held;       /* held back by repair(): never chosen again */
	Queue order;    /* solvables in marking order (unmarked ones too) */
	Queue stack;    /* frames of FRAME ids: solvable, dependency position, dependency, candidate */
	int evicted;    /* a package was unmarked for another's Conflicts */
	int failed;     /* the frame just popped failed */
};

#define FRAME 4

static int satisfied(const struct walk *w, Id dep)
{
	Pool *pool = w->pol->pool;
	Id p, pp;

	FOR_PROVIDES(p, pp, dep)
		if (MAPTST(&w->marked, p))
			return 1;
	return 0;
}

/* The multiarch version lock (N:#same, resolve.c) is no Conflicts apt would act on. */
static int is_version_lock(const Pool *pool, Id dep)
{
	size_t len;
	const char *n = target_base(pool, dep, &len);

	return n[len] == ':' && !strcmp(n + len, ":#same");
}

static void add_conflicts(struct walk *w, Id p)
{
	Pool *pool = w->pol->pool;
	Solvable *s = pool_id2solvable(pool, p);
	Id *dp, q, qq;

	if (!s->conflicts)
		return;
	for (dp = s->repo->idarraydata + s->conflicts; *dp; dp++)
		FOR_PROVIDES(q, qq, *dp)
			if (q != p)
				MAPSET(&w->conflicted, q);
}

static void mark(struct walk *w, Id p)
{
	MAPSET(&w->marked, p);
	queue_push(&w->order, p);
	add_conflicts(w, p);
}

/* apt's MarkKeep of a package marked before: it is not installed after all. */
static void unmark(struct walk *w, Id p)
{
	int i;

	MAPCLR(&w->marked, p);
	map_empty(&w->conflicted);
	for (i = 0; i < w->order.count; i++)
		if (MAPTST(&w->marked, w->order.elements[i]))
			add_conflicts(w, w->order.elements[i]);
}

/* Whether some candidate (or a marked package) could satisfy `dep` (apt's IsInstallOk). */
static int satisfiable(const struct walk *w, Id dep)
{
	const struct resolve_policy *pol = w->pol;
	Pool *pool = pol->pool;
	Id p, pp;

	FOR_PROVIDES(p, pp, dep)
		if (MAPTST(&w->marked, p) ||
		    (MAPTST(pol->considered, p) && !(pol->excluded && MAPTST(pol->excluded, p))))
			return 1;
	return 0;
}

/* Whether `a`'s Conflicts/Breaks hit `b`; with `evicting`, only those apt would act on. */
static int conflicts_with(Pool *pool, Id a, Id b, int evicting)
{
	Solvable *s = pool_id2solvable(pool, a);
	Id *dp, q, qq;

	if (!s->conflicts || a == b)
		return 0;
	for (dp = s->repo->idarraydata + s->conflicts; *dp; dp++)
		if (!evicting || !is_version_lock(pool, *dp))
			FOR_PROVIDES(q, qq, *dp)
				if (q == b)
					return 1;
	return 0;
}

/*
 * Whether a marked package's Conflicts hit `p` and stay: apt does not unmark a package for the
 * Conflicts it declares itself, only for those of the package being marked.
 */
static int conflicted(const struct walk *w, Id p)
{
	Pool *pool = w->pol->pool;
	Id q;
	int i;

	if (!MAPTST(&w->conflicted, p))
		return 0;
	for (i = 0; i < w->order.count; i++) {
		q = w->order.elements[i];
		if (MAPTST(&w->marked, q) && conflicts_with(pool, q, p, 0) &&
		    (MAPTST(&w->roots, q) || !conflicts_with(pool, p, q, 1)))
			return 1;
	}
	return 0;
}

/*
 * Whether apt's MarkInstall would take `p`: no marked package conflicts with it, its Conflicts
 * hit nothing protected, every Pre-Depends/Depends has some candidate.
 */
static int installable(const struct walk *w, Id p)
{
	Pool *pool = w->pol->pool;
	Solvable *s = pool_id2solvable(pool, p);
	Id *dp, q, qq;

	if (MAPTST(&w->held, p) || conflicted(w, p))
		return 0;
	if (s->conflicts)
		for (dp = s->repo->idarraydata + s->conflicts; *dp; dp++)
			FOR_PROVIDES(q, qq, *dp)
				if (q != p && MAPTST(&w->marked, q) &&
				    (MAPTST(&w->roots, q) || is_version_lock(pool, *dp)))
					return 0;
	if (s->requires)
		for (dp = s->repo->idarraydata + s->requires; *dp; dp++)
			if (*dp != SOLVABLE_PREREQMARKER && !satisfiable(w, *dp))
				return 0;
	return 1;
}

/* Mark `p`, first unmarking what its Conflicts/Breaks hit (apt: the later choice wins). */
static void take(struct walk *w, Id p)
{
	Pool *pool = w->pol->pool;
	Solvable *s = pool_id2solvable(pool, p);
	Id *dp, q, qq;

	if (s->conflicts)
		for (dp = s->repo->idarraydata + s->conflicts; *dp; dp++)
			FOR_PROVIDES(q, qq, *dp)
				if (q != p && MAPTST(&w->marked, q)) {
					unmark(w, q);
					w->evicted = 1;
				}
	mark(w, p);
}

/* Insertion sort by provider_cmp: provider lists are short. */
static void sort_providers(const struct resolve_policy *pol, Id *v, int n, const char *base,
			   size_t blen)
{
	int i, j;
	Id t;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && provider_cmp(pol, v[j], v[j - 1], base, blen) < 0; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

/* apt's possible solutions of `dep`: each alternative's candidates in CompareProviders order. */
static void solutions(const struct resolve_policy *pol, Id dep, Queue *q)
{
	Pool *pool = pol->pool;
	Reldep *rd;
	size_t blen;
	const char *base;
	Id p, pp;
	int from = q->count;

	if (ISRELDEP(dep) && (rd = GETRELDEP(pool, dep))->flags == REL_OR) {
		solutions(pol, rd->name, q);
		solutions(pol, rd->evr, q);
		return;
	}
	base = target_base(pool, dep, &blen);
	FOR_PROVIDES(p, pp, dep)
		if (MAPTST(pol->considered, p) && !(pol->excluded && MAPTST(pol->excluded, p)))
			queue_pushunique(q, p);
	sort_providers(pol, q->elements + from, q->count - from, base, blen);
}

/* The first installable solution of `dep` from index *next on; *next moves past it. 0 if none. */
static Id next_solution(const struct walk *w, Id dep, Id *next)
{
	Queue q;
	Id p = 0;

	queue_init(&q);
	solutions(w->pol, dep, &q);
	for (; *next < q.count && !p; (*next)++)
		if (installable(w, q.elements[*next]))
			p = q.elements[*next];
	queue_free(&q);
	return p;
}

/*
 * The next dependency of `p` to follow: *pos >= 0 is a position in its requires (Pre-Depends and
 * Depends), *pos < 0 one in its recommends (-1 the first).
 */
static Id next_dep(const struct walk *w, Id p, Id *pos)
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

static void push_frame(struct walk *w, Id p)
{
	queue_push2(&w->stack, p, 0);
	queue_push2(&w->stack, 0, 0);
}

/*
 * One step of apt's MarkInstall for the frame on top: follow its next dependency, or try the next
 * solution of the one whose solution just failed. A package whose Pre-Depends/Depends cannot be
 * met is discarded (the request excepted) and its parent tries its next solution; what it marked
 * stays marked, as in apt, until sweep().
 */
static void step(struct walk *w)
{
	Id *f = w->stack.elements + w->stack.count - FRAME; /* p, pos, dep, next */
	Id p = f[0], c;

	if (f[2] && !w->failed) {
		f[2] = 0; /* the child's solution held */
		return;
	}
	w->failed = 0;
	if (!f[2]) {
		if (!(f[2] = next_dep(w, p, &f[1]))) {
			queue_truncate(&w->stack, w->stack.count - FRAME);
			return;
		}
		f[3] = 0;
		if (satisfied(w, f[2])) {
			f[2] = 0;
			return;
		}
	}
	if ((c = next_solution(w, f[2], &f[3]))) {
		if (MAPTST(&w->marked, c)) {
			f[2] = 0; /* marked meanwhile by a failed solution's dependencies */
			return;
		}
		take(w, c);
		push_frame(w, c);
		return;
	}
	f[2] = 0;
	if (f[1] > 0 && !MAPTST(&w->roots, p)) { /* a Pre-Depends/Depends nothing meets */
		unmark(w, p);
		queue_truncate(&w->stack, w->stack.count - FRAME);
		w->failed = 1;
	}
}

static void run(struct walk *w, const Id *from, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!MAPTST(&w->marked, from[i]))
			continue;
		push_frame(w, from[i]);
		while (w->stack.count)
			step(w);
		w->failed = 0;
	}
}

/* Keep only what the request needs through the dependencies followed (apt removes the rest). */
static void sweep(struct walk *w, const Queue *roots)
{
	Pool *pool = w->pol->pool;
	Map keep;
	Queue todo;
	Id p, q, qq, d, pos;
	int i;

	map_init(&keep, pool->nsolvables);
	queue_init_clone(&todo, roots);
	for (i = 0; i < todo.count; i++)
		MAPSET(&keep, todo.elements[i]);
	while (todo.count) {
		p = queue_pop(&todo);
		for (pos = 0; (d = next_dep(w, p, &pos));)
			FOR_PROVIDES(q, qq, d)
				if (MAPTST(&w->marked, q) && !MAPTST(&keep, q)) {
					MAPSET(&keep, q);
					queue_push(&todo, q);
				}
	}
	map_and(&w->marked, &keep);
	map_free(&keep);
	queue_free(&todo);
}

/* Hold back marked packages with a Pre-Depends/Depends no marked package meets; how many. */
static int hold_broken(struct walk *w)
{
	Pool *pool = w->pol->pool;
	Solvable *s;
	Id p, *dp;
	int i, n = 0;

	for (i = 0; i < w->order.count; i++) {
		p = w->order.elements[i];
		if (!MAPTST(&w->marked, p) || MAPTST(&w->roots, p))
			continue;
		s = pool_id2solvable(pool, p);
		if (!s->requires)
			continue;
		for (dp = s->repo->idarraydata + s->requires; *dp; dp++)
			if (*dp != SOLVABLE_PREREQMARKER && !satisfied(w, *dp)) {
				unmark(w, p);
				MAPSET(&w->held, p);
				n++;
				break;
			}
	}
	return n;
}

#define REPAIR_ROUNDS 32

/*
 * apt's problem resolver, for what the Conflicts of a later choice broke: hold back the packages
 * left with an unmet dependency, then let every marked package choose again where it lacks one
 * (the next alternative), until a round changes nothing.
 */
static void repair(struct walk *w, const Queue *roots)
{
	Queue again;
	int round, held, before;

	for (round = 0; round < REPAIR_ROUNDS; round++) {
		sweep(w, roots);
		held = hold_broken(w);
		before = w->order.count;
		queue_init_clone(&again, &w->order);
		run(w, again.elements, again.count);
		queue_free(&again);
		if (!held && w->order.count == before)
			return;
	}
}

void resolve_policy_walk(const struct resolve_policy *pol, const Queue *roots, Queue *out)
{
	struct walk w = { .pol = pol };
	Map emitted;
	Id p;
	int i;

	map_init(&w.marked, pol->pool->nsolvables);
	map_init(&w.roots, pol->pool->nsolvables);
	map_init(&w.conflicted, pol->pool->nsolvables);
	map_init(&w.held, pol->pool->nsolvables);
	map_init(&emitted, pol->pool->nsolvables);
	queue_init(&w.order);
	queue_init(&w.stack);
	for (i = 0; i < roots->count; i++)
		if (!MAPTST(&w.marked, roots->elements[i])) {
			MAPSET(&w.roots, roots->elements[i]);
			mark(&w, roots->elements[i]);
		}
	run(&w, roots->elements, roots->count);
	if (w.evicted)
		repair(&w, roots);
	sweep(&w, roots);
	for (i = 0; i < w.order.count; i++) {
		p = w.order.elements[i];
		if (MAPTST(&w.marked, p) && !MAPTST(&emitted, p)) {
			MAPSET(&emitted, p);
			queue_push(out, p);
		}
	}
	queue_free(&w.stack);
	queue_free(&w.order);
	map_free(&emitted);
	map_free(&w.held);
	map_free(&w.conflicted);
	map_free(&w.roots);
	map_free(&w.marked);
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
