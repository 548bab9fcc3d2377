/*
 * Resolve, the request: the recipe's base set, packages, local .debs and excludes as solver jobs,
 * each remembered with what the user wrote (for resolve_problems.c). Unknown names get a "did you
 * mean"; a virtual name with several providers is refused as apt refuses it.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/log.h"
#include "resolve_ctx.h"

static void add_job(struct resolve_ctx *c, Id how, Id what, const char *desc)
{
	queue_push2(&c->jobs, how, what);
	strv_push(&c->job_what, desc);
}

static const char *closest_name(const struct resolve_ctx *c, const char *name)
{
	Pool *pool = c->pool;
	const char *best = NULL, *n;
	unsigned d, best_d = 3;
	Id p;

	FOR_POOL_SOLVABLES(p) {
		n = pool_id2str(c->pool, pool_id2solvable(c->pool, p)->name);
		if (labs((long)strlen(n) - (long)strlen(name)) > 2)
			continue;
		d = str_distance(n, name);
		if (d < best_d) {
			best_d = d;
			best = n;
		}
	}
	return best;
}

/* Considered solvables named `nid` for `arch` (or all) into q; *elsewhere names another arch. */
static void find_named(const struct resolve_ctx *c, Id nid, Id arch, Queue *q,
		       const char **elsewhere)
{
	Pool *pool = c->pool;
	Id p, pp;
	Solvable *s;

	*elsewhere = NULL;
	FOR_PROVIDES(p, pp, nid) {
		s = pool_id2solvable(c->pool, p);
		if (s->name != nid || !MAPTST(&c->considered, p))
			continue;
		if (s->arch == arch || s->arch == ARCH_ALL)
			queue_pushunique(q, p);
		else
			*elsewhere = pool_id2str(c->pool, s->arch);
	}
}

static int unknown_package(const struct resolve_ctx *c, const struct recipe_package *rp)
{
	const char *near = closest_name(c, rp->name);

	if (near)
		log_error("unknown package '%s' (recipe line %d): no index lists it (did you mean "
			  "'%s'?)", rp->name, rp->line, near);
	else
		log_error("unknown package '%s' (recipe line %d): no index lists it; check the name "
			  "and the recipe's sources and components", rp->name, rp->line);
	return -MKI_E_RESOLVE;
}

static int str_cmp(const void *a, const void *b, void *arg)
{
	(void)arg;
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A requested name no package has, only Provides: as apt, take its provider when there is one,
 * refuse to guess among several (`apt-get install awk`: "you should explicitly select one").
 */
static int virtual_request(struct resolve_ctx *c, const struct recipe_package *rp, Id virt,
			   const char *desc)
{
	Pool *pool = c->pool;
	struct strv names = { 0 };
	char *list;
	Id p, pp;

	FOR_PROVIDES(p, pp, virt) {
		const char *n = pool_id2str(c->pool, pool_id2solvable(c->pool, p)->name);

		if (MAPTST(&c->considered, p) && !strv_contains(&c->r->excludes, n) &&
		    !strv_contains(&names, n))
			strv_push(&names, n);
	}
	if (names.n <= 1) {
		strv_release(&names);
		add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE_PROVIDES, virt, desc);
		return 0;
	}
	solv_sort(names.v, names.n, sizeof(*names.v), str_cmp, NULL);
	list = strv_join(&names, ", ");
	log_error("'%s' (recipe line %d) is a virtual package provided by %zu packages: write one "
		  "of: %s", rp->name, rp->line, names.n, list);
	free(list);
	strv_release(&names);
	return -MKI_E_RESOLVE;
}

static int request_one(struct resolve_ctx *c, const struct recipe_package *rp)
{
	const char *arch = rp->arch ? rp->arch : c->archs.v[0], *elsewhere = NULL;
	Id nid = pool_str2id(c->pool, rp->name, 0), virt, aid;
	char *desc;
	int added = 1;
	Queue q;

	if (!strv_contains(&c->archs, arch)) {
		char *all = strv_join(&c->archs, ", ");

		log_error("unknown architecture '%s' in '%s:%s' (recipe line %d): the recipe's "
			  "architectures are %s", arch, rp->name, arch, rp->line, all);
		free(all);
		return -MKI_E_RESOLVE;
	}
	if (strv_contains(&c->r->excludes, rp->name))
		return log_errno(-MKI_E_RESOLVE,
				 "'%s' is both requested (recipe line %d) and excluded", rp->name,
				 rp->line);
	desc = xasprintf("%s%s%s%s%s", rp->name, rp->arch ? ":" : "", rp->arch ? rp->arch : "",
			 rp->version ? "=" : "", rp->version ? rp->version : "");
	queue_init(&q);
	/* intern first: new strings may move the pool's string space under `elsewhere` */
	virt = resolve_name_arch_id(c->pool, rp->name, strlen(rp->name), arch);
	aid = pool_str2id(c->pool, arch, 1);
	if (nid)
		find_named(c, nid, aid, &q, &elsewhere);
	if (q.count)
		add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE_ONE_OF, pool_queuetowhatprovides(c->pool, &q),
			desc);
	else if (!rp->version && c->pool->whatprovidesdata[pool_whatprovides(c->pool, virt)])
		added = virtual_request(c, rp, virt, desc) ? -1 : 1;
	else
		added = 0;
	queue_free(&q);
	free(desc);
	if (added)
		return added < 0 ? -MKI_E_RESOLVE : 0;
	if (nid && elsewhere)
		return log_errno(-MKI_E_RESOLVE, "'%s' is not available for %s (recipe line %d), "
				 "only for other architectures such as %s: write '%s:%s'",
				 rp->name, arch, rp->line, elsewhere, rp->name, elsewhere);
	return unknown_package(c, rp);
}

static const char *const base_names[] = { "none", "essential", "required", "important" };

static int in_base(const struct resolve_ctx *c, Id p)
{
	const struct pkgref *ref = &c->refs[p];
	Solvable *s = pool_id2solvable(c->pool, p);
	int want = c->r->base;

	if (s->arch != ARCH_ALL && s->arch != pool_str2id(c->pool, c->archs.v[0], 0))
		return 0;
	if (strv_contains(&c->r->excludes, pool_id2str(c->pool, s->name)))
		return 0;
	return (ref->flags & F_ESSENTIAL) || (want >= BASE_REQUIRED && (ref->flags & F_REQUIRED)) ||
	       (want >= BASE_IMPORTANT && (ref->flags & F_IMPORTANT));
}

/* Base set, requests, local .debs, excludes; then the multiarch and preference jobs. */
int resolve_build_jobs(struct resolve_ctx *c)
{
	Pool *pool = c->pool;
	Queue same;
	Id p, nid;
	size_t i;
	int ret = 0, r;

	FOR_POOL_SOLVABLES(p)
		if (c->r->base != BASE_NONE && MAPTST(&c->considered, p) && c->best[p] &&
		    in_base(c, p)) {
			char *d = xasprintf("%s (base set '%s')",
					    pool_id2str(c->pool, pool_id2solvable(c->pool, p)->name),
					    base_names[c->r->base]);
			add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE, p, d);
			free(d);
		}
	for (i = 0; i < c->r->n_packages; i++)
		if ((r = request_one(c, &c->r->packages[i])))
			ret = r;
	FOR_POOL_SOLVABLES(p)
		if (MAPTST(&c->considered, p) && resolve_is_local(c, p))
			add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE, p, c->files[c->refs[p].file].path);
	for (i = 0; i < c->r->excludes.n; i++) {
		if (!(nid = pool_str2id(c->pool, c->r->excludes.v[i], 0))) {
			log_warn("excluded package '%s' is not in any index", c->r->excludes.v[i]);
			continue;
		}
		add_job(c, SOLVER_LOCK | SOLVER_SOLVABLE_NAME, nid, c->r->excludes.v[i]);
	}
	queue_init(&same);
	FOR_POOL_SOLVABLES(p)
		if (MAPTST(&c->considered, p) && c->refs[p].ma == MA_SAME)
			queue_push(&same, p);
	if (same.count)
		add_job(c, SOLVER_MULTIVERSION | SOLVER_SOLVABLE_ONE_OF,
			pool_queuetowhatprovides(c->pool, &same), "Multi-Arch: same");
	queue_free(&same);
	return ret;
}

/* --locked: exactly the lock's packages. */
int resolve_build_locked_jobs(struct resolve_ctx *c)
{
	Pool *pool = c->pool;
	Queue same;
	Id p;
	size_t i, n = 0;
	int ret = 0;

	queue_init(&same);
	FOR_POOL_SOLVABLES(p)
		if (p != SYSTEMSOLVABLE && MAPTST(&c->considered, p)) {
			add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE, p, "the lock file");
			if (c->refs[p].ma == MA_SAME)
				queue_push(&same, p);
			n++;
		}
	if (same.count)
		add_job(c, SOLVER_MULTIVERSION | SOLVER_SOLVABLE_ONE_OF,
			pool_queuetowhatprovides(c->pool, &same), "Multi-Arch: same");
	queue_free(&same);
	for (i = 0; i < c->lock.n_pkgs && n != c->lock.n_pkgs; i++) {
		const struct lock_pkg *lp = &c->lock.pkgs[i];
		Id nid = pool_str2id(c->pool, lp->name, 0), found = 0;

		FOR_POOL_SOLVABLES(p) {
			Solvable *s = pool_id2solvable(c->pool, p);

			if (nid && s->name == nid && MAPTST(&c->considered, p) &&
			    !strcmp(pool_id2str(c->pool, s->arch), lp->arch))
				found = 1;
		}
		if (!found) {
			log_error("the lock names '%s:%s=%s', which no index lists any more", lp->name,
				  lp->arch, lp->version);
			ret = -MKI_E_LOCK;
		}
	}
	return ret;
}
