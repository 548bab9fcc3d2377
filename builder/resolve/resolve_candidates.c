/*
 * Resolve, candidates: which versions of each (name, arch) the solver may choose. apt's candidate
 * (the newest) unless the recipe pins a version, --locked names one, the user's own .deb replaces
 * the archive's, or allow_older opens every version.
 */
#include <string.h>

#include <solv/evr.h>

#include "lib/err.h"
#include "lib/log.h"
#include "resolve_ctx.h"

static int cand_cmp(const void *a, const void *b, void *arg)
{
	Pool *pool = arg;
	Id pa = *(const Id *)a, pb = *(const Id *)b;
	Solvable *x = pool_id2solvable(pool, pa), *y = pool_id2solvable(pool, pb);
	int r;

	if (x->name != y->name)
		return strcmp(pool_id2str(pool, x->name), pool_id2str(pool, y->name));
	if (x->arch != y->arch)
		return strcmp(pool_id2str(pool, x->arch), pool_id2str(pool, y->arch));
	r = pool_evrcmp(pool, y->evr, x->evr, EVRCMP_COMPARE);
	return r ? r : (pa > pb) - (pa < pb);
}

/* The pin the recipe puts on (name, arch of `s`), or NULL. */
static const struct recipe_package *pin_for(const struct resolve_ctx *c, const Solvable *s)
{
	const char *name = pool_id2str(c->pool, s->name), *arch = pool_id2str(c->pool, s->arch);
	size_t i;

	for (i = 0; i < c->r->n_packages; i++) {
		const struct recipe_package *rp = &c->r->packages[i];

		if (!rp->version || strcmp(rp->name, name))
			continue;
		if (!strcmp(arch, "all") || !strcmp(arch, rp->arch ? rp->arch : c->archs.v[0]))
			return rp;
	}
	return NULL;
}

static const struct lock_pkg *locked_for(const struct resolve_ctx *c, const Solvable *s)
{
	const char *name = pool_id2str(c->pool, s->name), *arch = pool_id2str(c->pool, s->arch);
	size_t i;

	for (i = 0; i < c->lock.n_pkgs; i++)
		if (!strcmp(c->lock.pkgs[i].name, name) && !strcmp(c->lock.pkgs[i].arch, arch))
			return &c->lock.pkgs[i];
	return NULL;
}

/* Choose the considered solvables of one (name, arch) group ids[0..n), newest first. */
static int choose_group(struct resolve_ctx *c, const Id *ids, size_t n)
{
	Pool *pool = c->pool;
	Solvable *s = pool_id2solvable(pool, ids[0]);
	const struct recipe_package *pin = c->locked ? NULL : pin_for(c, s);
	const struct lock_pkg *lp = c->locked ? locked_for(c, s) : NULL;
	const char *want = pin ? pin->version : lp ? lp->version : NULL;
	size_t i;
	int any_local = 0;

	c->best[ids[0]] = 1;
	for (i = 0; i < n; i++)
		any_local |= resolve_is_local(c, ids[i]);
	if (c->locked && !lp)
		return 0;
	for (i = 0; i < n; i++) {
		s = pool_id2solvable(pool, ids[i]);
		if (i && s->evr == pool_id2solvable(pool, ids[i - 1])->evr)
			continue; /* the same version from another source: keep the first */
		if (any_local && !resolve_is_local(c, ids[i]))
			continue; /* the user's own .deb wins */
		if (want ? !pool_evrcmp_str(pool, pool_id2str(pool, s->evr), want, EVRCMP_COMPARE)
			 : (i == 0 || any_local || c->r->allow_older)) {
			MAPSET(&c->considered, ids[i]);
			if (want || (!c->r->allow_older && !any_local))
				return 0;
		}
	}
	if (!want)
		return 0;
	return 1; /* pinned version missing: reported by check_pins */
}

static void list_versions(const struct resolve_ctx *c, const char *name, const char *arch,
			  struct buf *b)
{
	Pool *pool = c->pool;
	Id nid = pool_str2id(c->pool, name, 0), p;
	Solvable *s;

	FOR_POOL_SOLVABLES(p) {
		s = pool_id2solvable(c->pool, p);
		if (s->name != nid || !c->refs[p].valid)
			continue;
		if (strcmp(pool_id2str(c->pool, s->arch), arch) &&
		    strcmp(pool_id2str(c->pool, s->arch), "all"))
			continue;
		buf_addf(b, "%s%s", b->len ? ", " : "", pool_id2str(c->pool, s->evr));
	}
}

static int check_pins(struct resolve_ctx *c)
{
	Pool *pool = c->pool;
	size_t i, j;
	int ret = 0;

	for (i = 0; i < c->r->n_packages; i++) {
		const struct recipe_package *a = &c->r->packages[i];
		const char *arch = a->arch ? a->arch : c->archs.v[0];
		struct buf b = { 0 };
		Id nid, p;
		int found = 0;

		if (!a->version)
			continue;
		for (j = 0; j < i; j++) {
			const struct recipe_package *o = &c->r->packages[j];

			if (o->version && !strcmp(o->name, a->name) &&
			    !strcmp(o->arch ? o->arch : c->archs.v[0], arch) &&
			    strcmp(o->version, a->version)) {
				log_error("conflicting pins: '%s=%s' (line %d) and '%s=%s' (line %d)",
					  o->name, o->version, o->line, a->name, a->version, a->line);
				ret = -MKI_E_RESOLVE;
			}
		}
		nid = pool_str2id(c->pool, a->name, 0);
		FOR_POOL_SOLVABLES(p) {
			Solvable *s = pool_id2solvable(pool, p);

			if (nid && s->name == nid && MAPTST(&c->considered, p) &&
			    (s->arch == ARCH_ALL || !strcmp(pool_id2str(pool, s->arch), arch)))
				found = 1;
		}
		if (found || !nid || !strv_contains(&c->archs, arch))
			continue; /* unknown names and archs are reported with the request */
		list_versions(c, a->name, arch, &b);
		log_error("version '%s' of '%s' is not available for %s (available: %s)", a->version,
			  a->name, arch, b.len ? b.p : "none");
		buf_release(&b);
		ret = -MKI_E_RESOLVE;
	}
	return ret;
}

int resolve_choose_candidates(struct resolve_ctx *c)
{
	Pool *pool = c->pool;
	Queue q;
	Id p;
	size_t i, start;

	queue_init(&q);
	FOR_POOL_SOLVABLES(p)
		if ((size_t)p < c->alloc_refs && c->refs[p].valid)
			queue_push(&q, p);
	solv_sort(q.elements, (size_t)q.count, sizeof(Id), cand_cmp, pool);
	map_init(&c->considered, pool->nsolvables);
	MAPSET(&c->considered, SYSTEMSOLVABLE);
	c->best = xcalloc((size_t)pool->nsolvables, sizeof(*c->best));
	for (start = 0; start < (size_t)q.count; start = i) {
		Solvable *s = pool_id2solvable(pool, q.elements[start]), *t;

		for (i = start + 1; i < (size_t)q.count; i++) {
			t = pool_id2solvable(pool, q.elements[i]);
			if (t->name != s->name || t->arch != s->arch)
				break;
		}
		choose_group(c, q.elements + start, i - start);
	}
	queue_free(&q);
	pool->considered = &c->considered;
	return c->locked ? 0 : check_pins(c);
}
