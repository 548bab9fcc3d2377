/*
 * Resolve: Packages indexes + the recipe's request -> the ordered plan, on libsolv.
 *
 * The pool is filled by resolve_encode.c (multiarch rewritten as apt does), the candidates chosen
 * by resolve_candidates.c and the request turned into jobs by resolve_jobs.c. Here: apt's choice
 * (resolve_policy.c) verified by libsolv, the plan read back from the chosen stanzas (Packages'
 * text is not kept: each solvable remembers where its stanza is), ordered by resolve_order.c;
 * failures explained by resolve_problems.c. And the lock file.
 */
#include "resolve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "debian/arch.h"
#include "debian/deb822.h"
#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/url.h"
#include "repo/keyfpr.h"
#include "resolve_ctx.h"
#include "resolve_order.h"
#include "resolve_policy.h"

/* ---- the plan ---------------------------------------------------------------------------- */

static char *field_dup(const struct deb822 *d, const char *name)
{
	const char *v = deb822_get(d, name);

	return v ? xstrdup(v) : NULL;
}

static void fill_source(struct plan_entry *e, const char *src)
{
	const char *sp, *open, *close;

	if (!src || !*src) {
		e->source = xstrdup(e->name);
		e->source_version = xstrdup(e->version);
		return;
	}
	sp = strchr(src, ' ');
	e->source = sp ? xstrndup(src, (size_t)(sp - src)) : xstrdup(src);
	open = strchr(src, '(');
	close = open ? strchr(open, ')') : NULL;
	e->source_version = close ? xstrndup(open + 1, (size_t)(close - open - 1))
				  : xstrdup(e->version);
}

static int fill_remote(const struct srcfile *sf, const struct deb822 *d, struct plan_entry *e)
{
	const char *fn = deb822_get(d, "Filename"), *sha = deb822_get(d, "SHA256");
	const char *size = deb822_get(d, "Size");
	char *end;

	if (!fn || !sha || !size || !hash_sha256_hex_valid(sha) || strstr(fn, "..") || fn[0] == '/')
		return log_errno(-MKI_E_PARSE,
				 "%s:%lu: '%s' lacks a valid Filename, Size or SHA256 field",
				 d->file, d->stanza_line, e->name);
	errno = 0;
	e->size = strtoull(size, &end, 10);
	if (errno || *end || end == size)
		return log_errno(-MKI_E_PARSE, "%s:%lu: '%s' has an invalid Size '%s'", d->file,
				 d->stanza_line, e->name, size);
	memcpy(e->sha256, sha, 65);
	/* Filename is a path; "1%3a2.0" in it must reach the server as written (apt quotes too). */
	e->url = url_join(sf->rel->src->uri, fn);
	return 0;
}

static int fill_local(const struct srcfile *sf, struct plan_entry *e)
{
	struct stat st;
	int ret;

	if (stat(sf->path, &st))
		return log_errno(-errno, "cannot read local package '%s': %m", sf->path);
	if ((ret = hash_file_hex(sf->path, HASH_SHA256, e->sha256)))
		return log_errno(ret, "cannot read local package '%s': %s", sf->path,
				 strerror(-ret));
	e->size = (uint64_t)st.st_size;
	e->path = xstrdup(sf->path);
	return 0;
}

/* What goes into the lock must fit on its line: a newline or ESC in an index is malformed. */
static int check_lock_fields(const struct deb822 *d, const struct plan_entry *e)
{
	const char *const names[] = { "Package", "Architecture", "Version", "Source", "Source" };
	const char *const v[] = { e->name, e->arch, e->version, e->source, e->source_version };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i] && !lockfile_field_ok(v[i], 0))
			return log_errno(-MKI_E_PARSE,
					 "%s:%lu: the %s field of '%s' holds '%s': a control "
					 "character, a space or a byte outside ASCII; the index is "
					 "malformed", d->file, d->stanza_line, names[i],
					 e->name ? e->name : "?", v[i]);
	return 0;
}

static int fill_entry(const struct srcfile *sf, const struct deb822 *d, struct plan_entry *e)
{
	const char *ess = deb822_get(d, "Essential"), *ma = deb822_get(d, "Multi-Arch");

	e->name = field_dup(d, "Package");
	e->arch = field_dup(d, "Architecture");
	e->version = field_dup(d, "Version");
	e->multi_arch = xstrdup(ma && (!strcmp(ma, "same") || !strcmp(ma, "foreign") ||
				       !strcmp(ma, "allowed")) ? ma : "no");
	e->essential = ess && !strcasecmp(ess, "yes");
	e->priority = field_dup(d, "Priority");
	e->section = field_dup(d, "Section");
	e->maintainer = field_dup(d, "Maintainer");
	e->installed_size = field_dup(d, "Installed-Size");
	fill_source(e, deb822_get(d, "Source"));
	if (check_lock_fields(d, e))
		return -MKI_E_PARSE;
	return sf->rel ? fill_remote(sf, d, e) : fill_local(sf, e);
}

int resolve_read_stanza(const struct resolve_ctx *c, Id p, struct deb822 *d)
{
	const struct pkgref *ref = &c->refs[p];
	const struct srcfile *sf = &c->files[ref->file];
	int ret;

	ret = sf->rel ? deb822_open(d, sf->path) : deb822_open_mem(d, sf->path, sf->text,
								    sf->text_len);
	if (ret)
		return log_errno(ret, "cannot read index '%s' again: %s", sf->path, strerror(-ret));
	deb822_set_limits(d, c->lim, sf->rel ? -MKI_E_LIMIT_REPO : -MKI_E_LIMIT_PKG);
	ret = deb822_seek(d, ref->offset, ref->line);
	if (!ret && (ret = deb822_next(d)) == 0)
		ret = -MKI_E_PARSE;
	if (ret == -MKI_E_PARSE)
		log_error("%s:%u: index changed while it was being read", sf->path, ref->line);
	if (ret < 0)
		deb822_close(d);
	return ret < 0 ? ret : 0;
}

static int read_entry(struct resolve_ctx *c, Id p, struct plan_entry *e)
{
	const struct srcfile *sf = &c->files[c->refs[p].file];
	struct deb822 d;
	int ret = resolve_read_stanza(c, p, &d);

	if (ret)
		return ret;
	ret = fill_entry(sf, &d, e);
	if (ret == -MKI_E_PARSE && !e->name)
		log_error("%s:%u: index changed while it was being read", sf->path,
			  c->refs[p].line);
	deb822_close(&d);
	return ret;
}

/* ---- order ------------------------------------------------------------------------------- */

/* Entries' depends (plan indices) from the chosen set, Pre-Depends first; idx: solvable -> i+1. */
static void collect_depends(struct resolve_ctx *c, struct plan *pl, const size_t *idx,
			    const Id *ids)
{
	Pool *pool = c->pool;
	Id p2, pp, *dp;
	size_t i, j, k, alloc;
	int pass, pre;

	for (i = 0; i < pl->n; i++) {
		Solvable *s = pool_id2solvable(pool, ids[i]);
		struct plan_entry *e = &pl->v[i];

		if (!s->requires)
			continue;
		alloc = 0;
		for (pass = 1; pass >= 0; pass--) {
			pre = 0;
			for (dp = s->repo->idarraydata + s->requires; *dp; dp++) {
				if (*dp == SOLVABLE_PREREQMARKER) {
					pre = 1;
					continue;
				}
				if (pre != pass)
					continue;
				FOR_PROVIDES(p2, pp, *dp) {
					if (!idx[p2] || idx[p2] - 1 == i)
						continue;
					j = idx[p2] - 1;
					for (k = 0; k < e->n_depends && e->depends[k] != j; k++)
						;
					if (k < e->n_depends)
						continue;
					pl->v[j].pre_depended |= pre;
					ALLOC_GROW(e->depends, e->n_depends + 1, alloc);
					e->depends[e->n_depends++] = j;
				}
			}
			if (pass)
				e->n_pre_depends = e->n_depends;
		}
	}
}

static int chosen_cmp(const void *a, const void *b, void *arg)
{
	const struct resolve_ctx *c = arg;
	Id x = *(const Id *)a, y = *(const Id *)b;
	const struct pkgref *rx = &c->refs[x], *ry = &c->refs[y];

	if (rx->file != ry->file)
		return rx->file < ry->file ? -1 : 1;
	return rx->offset < ry->offset ? -1 : rx->offset > ry->offset;
}

static void report_older(const struct resolve_ctx *c, Id p)
{
	Solvable *s = pool_id2solvable(c->pool, p);

	if (c->best[p])
		return;
	log_warn("'%s:%s' %s is not the newest version available (allow_older is set)",
		 pool_id2str(c->pool, s->name), pool_id2str(c->pool, s->arch),
		 pool_id2str(c->pool, s->evr));
}

static int build_plan(struct resolve_ctx *c, Solver *solv, struct plan *pl)
{
	Queue all, dq;
	size_t *idx = xcalloc((size_t)c->pool->nsolvables, sizeof(*idx)), i;
	int ret = 0;

	queue_init(&all);
	queue_init(&dq);
	solver_get_decisionqueue(solv, &all);
	for (i = 0; i < (size_t)all.count; i++)
		if (all.elements[i] > 0 && all.elements[i] != SYSTEMSOLVABLE)
			queue_push(&dq, all.elements[i]);
	queue_free(&all);
	solv_sort(dq.elements, (size_t)dq.count, sizeof(Id), chosen_cmp, c);
	pl->v = xcalloc((size_t)dq.count + 1, sizeof(*pl->v));
	pl->alloc = (size_t)dq.count + 1;
	for (i = 0; !ret && i < (size_t)dq.count; i++) {
		idx[dq.elements[i]] = i + 1;
		pl->n = i + 1;
		ret = read_entry(c, dq.elements[i], &pl->v[i]);
		report_older(c, dq.elements[i]);
	}
	if (!ret) {
		collect_depends(c, pl, idx, dq.elements);
		resolve_order(pl);
		resolve_t64_renames(c, dq.elements, (size_t)dq.count, pl);
	}
	queue_free(&dq);
	free(idx);
	return ret;
}

/* --locked: the plan must be exactly the lock, byte for byte. */
static int check_lock(const struct resolve_ctx *c, const struct plan *pl)
{
	size_t i, j;
	int ret = 0;

	for (i = 0; i < pl->n; i++) {
		const struct plan_entry *e = &pl->v[i];

		for (j = 0; j < c->lock.n_pkgs; j++) {
			const struct lock_pkg *lp = &c->lock.pkgs[j];

			if (strcmp(lp->name, e->name) || strcmp(lp->arch, e->arch))
				continue;
			if (strcmp(lp->sha256, e->sha256) || lp->size != e->size) {
				log_error("'%s:%s=%s' differs from the lock: sha256 %s, locked %s",
					  e->name, e->arch, e->version, e->sha256, lp->sha256);
				ret = -MKI_E_LOCK;
			}
			break;
		}
	}
	if (!ret && pl->n != c->lock.n_pkgs) {
		log_error("the lock lists %zu packages but only %zu can be installed from the indexes",
			  c->lock.n_pkgs, pl->n);
		ret = -MKI_E_LOCK;
	}
	return ret;
}

/* What apt would install for the request (resolve_policy.c), into `chosen`. */
static void apt_choice(const struct resolve_ctx *c, Queue *chosen)
{
	Pool *pool = c->pool;
	struct resolve_policy pol = { .pool = pool, .considered = &c->considered,
				      .n_archs = c->archs.n, .recommends = c->r->recommends };
	uint8_t *rank = xcalloc((size_t)pool->nsolvables, 1);
	Id *archs = xcalloc(c->archs.n, sizeof(*archs)), p;
	Map excluded;
	Queue roots;
	size_t i;

	for (i = 0; i < c->archs.n; i++)
		archs[i] = pool_str2id(pool, c->archs.v[i], 1);
	map_init(&excluded, pool->nsolvables);
	FOR_POOL_SOLVABLES(p) {
		uint8_t f = (size_t)p < c->alloc_refs ? c->refs[p].flags : 0;

		rank[p] = f & F_ESSENTIAL ? 0 : f & F_REQUIRED ? 1 : f & F_IMPORTANT ? 2 : 3;
		if (c->r->excludes.n &&
		    strv_contains(&c->r->excludes, pool_id2str(pool, pool_id2solvable(pool, p)->name)))
			MAPSET(&excluded, p);
	}
	pol.rank = rank;
	pol.arch_ids = archs;
	pol.excluded = &excluded;
	queue_init(&roots);
	resolve_policy_roots(&pol, &c->jobs, &roots);
	resolve_policy_walk(&pol, &roots, chosen);
	queue_free(&roots);
	map_free(&excluded);
	free(archs);
	free(rank);
}

static Solver *solver_new(const struct resolve_ctx *c)
{
	Solver *solv = solver_create(c->pool);

	solver_set_flag(solv, SOLVER_FLAG_IGNORE_RECOMMENDED, !c->r->recommends || c->locked);
	solver_set_flag(solv, SOLVER_FLAG_NO_INFARCHCHECK, 1);
	return solv;
}

/*
 * libsolv verifies apt's choice (the chosen set installed as jobs of their own). Where that set is
 * not installable - apt's problem resolver would then give up or remove things - libsolv searches
 * itself, still steered towards apt's choices, and finds a valid set if there is one (mkimage(7):
 * "How packages are chosen"). Returns the solver that succeeded, or the failed one.
 */
static Solver *solve_as_apt(const struct resolve_ctx *c, int *failed)
{
	Queue chosen, jobs;
	Solver *solv = NULL;
	int pass, i;

	queue_init(&chosen);
	if (!c->locked)
		apt_choice(c, &chosen);
	for (pass = chosen.count ? 0 : 1; pass < 2; pass++) {
		queue_init_clone(&jobs, &c->jobs);
		for (i = 0; i < chosen.count; i++)
			queue_push2(&jobs, (pass ? SOLVER_FAVOR : SOLVER_INSTALL) | SOLVER_SOLVABLE,
				    chosen.elements[i]);
		if (solv)
			solver_free(solv);
		solv = solver_new(c);
		*failed = solver_solve(solv, &jobs) != 0;
		queue_free(&jobs);
		if (!*failed)
			break;
		if (!pass)
			log_debug("resolve: apt's choice (%d packages) is not installable; searching",
				  chosen.count);
	}
	queue_free(&chosen);
	return solv;
}

static int solve(struct resolve_ctx *c, struct plan *out)
{
	int failed, ret;
	Solver *solv = solve_as_apt(c, &failed);

	if (failed) {
		resolve_report_problems(c, solv);
		ret = -MKI_E_RESOLVE;
	} else {
		ret = build_plan(c, solv, out);
	}
	solver_free(solv);
	if (!ret && c->locked)
		ret = check_lock(c, out);
	return ret;
}

static int open_lock(struct resolve_ctx *c, const struct settings *st)
{
	int ret;

	if ((ret = lockfile_read(&c->lock, st->lock_file)))
		return ret == -MKI_E_LOCK ? ret : -MKI_E_LOCK;
	/* resolved anew, to say what changed (resolve_lockchange.c) */
	c->lock_changed = strcmp(c->lock.recipe, c->r->digest) != 0;
	c->locked = !c->lock_changed;
	return 0;
}

static int check_archs(const struct resolve_ctx *c)
{
	size_t i;

	for (i = 0; i < c->archs.n; i++)
		if (!arch_find(c->archs.v[i]))
			return log_errno(-MKI_E_RESOLVE, "unknown architecture '%s' in the recipe",
					 c->archs.v[i]);
	return 0;
}

static void ctx_release(struct resolve_ctx *c)
{
	size_t i;

	if (c->pool) {
		c->pool->considered = NULL;
		pool_free(c->pool);
	}
	map_free(&c->considered);
	queue_free(&c->jobs);
	strv_release(&c->job_what);
	strv_release(&c->archs);
	for (i = 0; i < c->n_files; i++) {
		free(c->files[i].path);
		free(c->files[i].text);
	}
	free(c->files);
	free(c->refs);
	free(c->best);
	lockfile_release(&c->lock);
}

int resolve_plan(struct plan *out, const struct recipe *r, const struct indexes *ix,
		 const struct settings *st)
{
	struct resolve_ctx c = { .r = r, .ix = ix, .lim = st ? &st->limits : NULL };
	double t0 = log_now();
	int ret;

	memset(out, 0, sizeof(*out));
	queue_init(&c.jobs);
	recipe_all_archs(r, &c.archs);
	if ((ret = check_archs(&c)) || (st && st->locked && (ret = open_lock(&c, st))))
		goto out;
	c.pool = resolve_pool_new(&c);
	if ((ret = resolve_load_all(&c)))
		goto out;
	if ((ret = resolve_choose_candidates(&c)) && c.lock_changed)
		ret = resolve_lock_changed(&c, NULL, st->lock_file); /* a pin the indexes lack */
	if (ret)
		goto out;
	pool_createwhatprovides(c.pool);
	ret = c.locked ? resolve_build_locked_jobs(&c) : resolve_build_jobs(&c);
	if (ret && c.lock_changed)
		ret = resolve_lock_changed(&c, NULL, st->lock_file);
	if (ret)
		goto out;
	log_debug("resolve: %d packages loaded, %d jobs, %.3f s", c.pool->nsolvables - 2,
		  c.jobs.count / 2, log_now() - t0);
	ret = solve(&c, out);
	if (c.lock_changed) {
		ret = resolve_lock_changed(&c, ret ? NULL : out, st->lock_file);
		goto out;
	}
	if (ret)
		goto out;
	out->primary = xstrdup(c.archs.v[0]);
	for (size_t i = 0; i < c.archs.n; i++)
		strv_push(&out->archs, c.archs.v[i]);
	log_info("resolved %zu packages in %.2f s", out->n, log_now() - t0);
out:
	if (ret)
		plan_release(out);
	ctx_release(&c);
	return ret;
}

/* ---- the lock ---------------------------------------------------------------------------- */

/* What --locked needs to find the sources again: components and the keyring's fingerprints. */
static int lock_source_keys(struct lockfile *lk, const struct indexes *ix)
{
	size_t i, k;
	int ret = 0;

	for (i = 0; i < ix->n_releases && !ret; i++) {
		const struct source *src = ix->releases[i].src;

		for (k = 0; k < src->components.n; k++)
			strv_push(&lk->sources[i].components, src->components.v[k]);
		if (src->keyring)
			ret = keyfpr_list(src->keyring, &lk->sources[i].keys);
	}
	return ret;
}

/* The lock's entries for plan `p`: xcalloc'ed, `*n` of them. */
static struct lock_pkg *lock_pkgs(const struct plan *p, size_t *n)
{
	struct lock_pkg *v = xcalloc(p->n + 1, sizeof(*v));
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->v[i];

		v[i].name = xstrdup(e->name);
		v[i].arch = xstrdup(e->arch);
		v[i].version = xstrdup(e->version);
		if (e->source && strcmp(e->source, e->name))
			v[i].source = xstrdup(e->source);
		memcpy(v[i].sha256, e->sha256, 65);
		v[i].size = e->size;
		v[i].local = !e->url;
	}
	*n = p->n;
	return v;
}

/* Where the twins came from: the servers (host[:port] alone), how many, how many bytes. */
static void lock_twins(struct lockfile *lk, const struct plan *twins, const char *from)
{
	size_t i;
	char host[256];

	if (!twins || !twins->n || !from)
		return;
	lk->twins_info.from = xstrdup(from);
	for (i = 0; i < twins->n; i++) {
		if (twins->v[i].url && !url_host(twins->v[i].url, host, sizeof(host)) &&
		    !strv_contains(&lk->twins_info.hosts, host))
			strv_push(&lk->twins_info.hosts, host);
		lk->twins_info.bytes += twins->v[i].size;
	}
	lk->twins_info.packages = twins->n;
	lk->twins = lock_pkgs(twins, &lk->n_twins);
	lk->alloc_twins = lk->n_twins;
}

int resolve_write_lock(const struct plan *p, const struct recipe *r, const struct indexes *ix,
		       const struct plan *twins, const char *twins_from, const char *file)
{
	struct lockfile lk = { 0 };
	size_t i;
	int ret;

	memcpy(lk.recipe, r->digest, sizeof(lk.recipe));
	if (r->file) /* a recipe read from a file; the test driver's, made by hand, has no keys */
		recipe_field_digests(r, &lk.fields);
	lock_twins(&lk, twins, twins_from);
	for (i = 0; i < p->archs.n; i++)
		strv_push(&lk.archs, p->archs.v[i]);
	lk.sources = xcalloc(ix->n_releases + 1, sizeof(*lk.sources));
	for (i = 0; i < ix->n_releases; i++) {
		const struct index_release *rel = &ix->releases[i];

		lk.sources[i].uri = xstrdup(rel->src->uri);
		lk.sources[i].suite = xstrdup(rel->src->suite);
		lk.sources[i].date = rel->date ? xstrdup(rel->date) : NULL;
		memcpy(lk.sources[i].sha256, rel->inrelease_sha256, 65);
		if (rel->use != INDEX_CURRENT)
			lk.sources[i].index = xstrdup(rel->use == INDEX_STALE ? "stale" : "omitted");
	}
	lk.n_sources = lk.alloc_sources = ix->n_releases;
	ret = lock_source_keys(&lk, ix);
	if (ret) {
		lockfile_release(&lk);
		return ret;
	}
	lk.pkgs = lock_pkgs(p, &lk.n_pkgs);
	lk.alloc_pkgs = lk.n_pkgs;
	ret = lockfile_write(&lk, file);
	lockfile_release(&lk);
	return ret;
}
