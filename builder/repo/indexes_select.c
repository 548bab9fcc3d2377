/*
 * Indexes, selection: the Packages files of each verified Release that the recipe's components
 * and architectures need, in the compression the Release offers first (.xz, .zst, .gz, plain),
 * their download URL (by-hash when offered) and whether the cache already holds them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "indexes_ctx.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/runlimits.h"
#include "store/cachegc.h"

static void want_release(struct want *x)
{
	free(x->comp);
	free(x->arch);
	free(x->url);
	free(x->derived);
	free(x->item.path);
}

void indexes_wants_release(struct wants *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		want_release(&w->v[i]);
	free(w->v);
}

void indexes_wants_drop(struct wants *w, size_t ri)
{
	size_t i, o = 0;

	for (i = 0; i < w->n; i++)
		if (w->v[i].rel == ri)
			want_release(&w->v[i]);
		else
			w->v[o++] = w->v[i];
	w->n = o;
}

/* "updates/main" in a Components field names the component "main" (Debian's security archive). */
static int offers_component(const struct strv *comps, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < comps->n; i++) {
		size_t len = strlen(comps->v[i]);

		if (!strcmp(comps->v[i], name) ||
		    (len > n && comps->v[i][len - n - 1] == '/' && !strcmp(comps->v[i] + len - n, name)))
			return 1;
	}
	return 0;
}

static int check_offered(const struct rel *r, const struct strv *offered, const char *kind,
			 const char *name)
{
	char *list, *rn;

	if (!offered->n || offers_component(offered, name))
		return 0;
	list = strv_join(offered, " ");
	rn = rel_name(r);
	log_error("%s has no %s '%s' (its Release lists: %s); fix the source's %ss (%s)", rn, kind,
		  name, list, kind, r->src->origin);
	free(list);
	free(rn);
	return -MKI_E_SOURCE;
}

static const struct rel_entry *pick_file(const struct rel *r, const char *comp, const char *arch)
{
	static const char *const ext[] = { ".xz", ".zst", ".gz", "", NULL };
	const struct rel_entry *e = NULL;
	int i;

	for (i = 0; ext[i] && !e; i++) {
		char *path = xasprintf("%s/binary-%s/Packages%s", comp, arch, ext[i]);

		e = indexes_rel_find(&r->info, path);
		free(path);
	}
	return e;
}

/*
 * What the signed Release declares is refused before anything is downloaded: a Packages file of
 * "several GiB" costs us nothing but this check.
 */
static int check_declared(const struct indexes_ctx *c, const struct rel *r,
			  const struct rel_entry *f, const struct rel_entry *plain)
{
	const struct limits *lim = &c->st->limits;
	const struct rel_entry *e = f;
	enum limit_id id = LIMIT_INDEX_SIZE;
	char *rn;

	if (f->size <= runlimits_get(lim, LIMIT_INDEX_SIZE)) {
		if (!plain || plain->size <= runlimits_get(lim, LIMIT_INDEX_UNPACKED))
			return 0;
		e = plain;
		id = LIMIT_INDEX_UNPACKED;
	}
	rn = rel_name(r);
	log_error("the Release of %s declares '%s' as %llu bytes, more than %s: refused before "
		  "downloading it (%s)", rn, e->path, (unsigned long long)e->size,
		  runlimits_format(id, runlimits_get(lim, id)).s, runlimits_hint(lim, id).s);
	free(rn);
	return -MKI_E_LIMIT_REPO;
}

/* Claimed first (cachegc.h): a collection then never removes the decompressed index under us. */
static int want_cached(struct indexes_ctx *c, struct want *x, const char *sha256)
{
	struct stat st;
	int ret = cachegc_claim(c->st->cache_user, sha256);

	x->derived = xasprintf("%s/indexes/%s", c->st->cache_dir, sha256);
	x->reuse = !ret && !stat(x->derived, &st) && S_ISREG(st.st_mode);
	return ret;
}

static int add_want(struct indexes_ctx *c, struct wants *w, size_t ri, const char *comp,
		    const char *arch)
{
	const struct rel *r = &c->rels[ri];
	const struct rel_entry *f = pick_file(r, comp, arch);
	char *plain = xasprintf("%s/binary-%s/Packages", comp, arch), *rn;
	struct want *x;

	if (!f && !strcmp(arch, "all")) {
		free(plain);
		return 0;
	}
	if (!f) {
		rn = rel_name(r);
		log_error("%s lists no '%s' (.xz, .zst, .gz or plain) although it names component "
			  "'%s' and architecture '%s'", rn, plain, comp, arch);
		free(rn);
		free(plain);
		return -MKI_E_SOURCE;
	}
	if (check_declared(c, r, f, indexes_rel_find(&r->info, plain))) {
		free(plain);
		return -MKI_E_LIMIT_REPO;
	}
	ALLOC_GROW(w->v, w->n + 1, w->alloc);
	x = &w->v[w->n++];
	memset(x, 0, sizeof(*x));
	x->rel = ri;
	x->comp = xstrdup(comp);
	x->arch = xstrdup(arch);
	x->file = f;
	x->plain = indexes_rel_find(&r->info, plain);
	x->url = r->info.by_hash ? xasprintf("%s/%s/binary-%s/by-hash/SHA256/%s", r->base, comp,
					     arch, f->sha256)
				 : xasprintf("%s/%s", r->base, f->path);
	free(plain);
	return want_cached(c, x, f->sha256);
}

/* A host source whose Release lacks an architecture: skipped, as apt does, with a warning. */
static int skip_arch(const struct rel *r, const char *arch, int warn)
{
	char *rn;

	if (!r->src->from_host || !r->info.archs.n || strv_contains(&r->info.archs, arch))
		return 0;
	if (warn) {
		rn = rel_name(r);
		log_warn("%s does not provide architecture '%s'; skipped (%s)", rn, arch,
			 r->src->origin);
		free(rn);
	}
	return 1;
}

/*
 * The host-arch index only speeds configuring up (accel.h): offline, one not yet in the cache is
 * left out rather than failing a build that needs nothing from it.
 */
static void native_want(struct indexes_ctx *c, struct wants *w)
{
	struct want *x = &w->v[w->n - 1];

	x->native_tools = 1;
	if (c->st->offline && !x->reuse) {
		log_info("offline: no host-architecture index in the cache for native tools (%s)",
			 x->url);
		want_release(x);
		w->n--;
	}
}

/* A host source whose Release lacks a component the recipe names: skipped, with a warning. */
static int skip_component(const struct rel *r, const char *comp, int warn)
{
	char *rn, *list;

	if (!r->src->from_host || !r->info.comps.n || offers_component(&r->info.comps, comp))
		return 0;
	if (warn) {
		rn = rel_name(r);
		list = strv_join(&r->info.comps, " ");
		log_warn("%s has no component '%s' (its Release lists: %s); skipped (%s)", rn,
			 comp, list, r->src->origin);
		free(list);
		free(rn);
	}
	return 1;
}

int indexes_want_release_files(struct indexes_ctx *c, struct wants *w, size_t ri)
{
	const struct rel *r = &c->rels[ri];
	const struct release_info *ri_ = &r->info;
	size_t i, j;
	int ret = 0, all;

	for (i = 0; i < r->src->components.n && !ret; i++)
		if (!skip_component(r, r->src->components.v[i], !c->round))
			ret = check_offered(r, &ri_->comps, "component", r->src->components.v[i]);
	for (i = 0; i < r->src->archs.n && !ret && !r->src->from_host; i++)
		ret = check_offered(r, &ri_->archs, "architecture", r->src->archs.v[i]);
	all = strv_contains(&ri_->archs, "all") && !ri_->no_all && !c->native_only;
	for (i = 0; i < r->src->components.n && !ret; i++) {
		if (skip_component(r, r->src->components.v[i], 0))
			continue;
		for (j = 0; j < r->src->archs.n && !ret && !c->native_only; j++)
			if (skip_arch(r, r->src->archs.v[j], !i && !c->round))
				continue;
			else
				ret = add_want(c, w, ri, r->src->components.v[i],
					       r->src->archs.v[j]);
		if (!ret && all)
			ret = add_want(c, w, ri, r->src->components.v[i], "all");
		if (!ret && c->native_arch && strv_contains(&ri_->archs, c->native_arch) &&
		    pick_file(r, r->src->components.v[i], c->native_arch) &&
		    !(ret = add_want(c, w, ri, r->src->components.v[i], c->native_arch)))
			native_want(c, w);
	}
	return ret;
}
