/*
 * Indexes: trust starts here. Nothing from a Release file is used before gpgv has accepted it
 * against the source's own keyring, and only the bytes inside the signed part are parsed.
 * This file downloads (InRelease, else Release + Release.gpg; then the Packages files) and runs
 * the stage; the other jobs are in indexes_parse.c, indexes_verify.c, indexes_select.c and
 * indexes_decompress.c (indexes_ctx.h).
 */
#include "indexes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debian/arch.h"
#include "indexes_ctx.h"
#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"

static void rel_release(struct rel *r)
{
	free(r->base);
	free(r->cache_dir);
	free(r->work);
	free(r->signed_path);
	free(r->sig_path);
	free(r->served_date);
	free(r->why);
	buf_release(&r->text);
	indexes_info_release(&r->info);
	memset(r, 0, sizeof(*r));
}

/* --- InRelease / Release ------------------------------------------------------------------- */

static time_t file_mtime(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_mtime;
}

static int rel_init(struct indexes_ctx *c, struct rel *r, const struct source *src, size_t i)
{
	char key[65], *id = xasprintf("%s\n%s", src->uri, src->suite);

	hash_sha256_hex(id, strlen(id), key);
	free(id);
	r->src = src;
	r->base = xasprintf("%s/dists/%s", src->uri, src->suite);
	r->cache_dir = xasprintf("%s/releases/%s", c->st->cache_dir, key);
	r->work = xasprintf("%s/%s-%zu", c->st->work_dir, c->native_only ? "twins" : "release", i);
	if (mkdir(r->work, 0755) && errno != EEXIST)
		return log_errno(-errno, "cannot create '%s': %m", r->work);
	return 0;
}

/* --offline: the last verified files of this source, checked again below. */
static int use_cached(struct rel *r)
{
	char *in = xasprintf("%s/InRelease", r->cache_dir), *rel = xasprintf("%s/Release",
									     r->cache_dir);
	char *gpg = xasprintf("%s/Release.gpg", r->cache_dir), *name;

	if (!access(in, R_OK)) {
		r->inrelease = 1;
		r->signed_path = in;
		in = NULL;
	} else if (!access(rel, R_OK) && (r->src->trusted || !access(gpg, R_OK))) {
		r->signed_path = rel;
		r->sig_path = gpg;
		rel = gpg = NULL;
	}
	free(in);
	free(rel);
	free(gpg);
	if (r->signed_path)
		return 0;
	name = rel_name(r);
	log_error("the indexes of %s are not in the cache and --offline forbids downloading them "
		  "(run once without --offline)", name);
	free(name);
	return -MKI_E_OFFLINE;
}

static void inrelease_item(struct rel *r, struct fetch_item *it, struct strv *names)
{
	char *cached = xasprintf("%s/InRelease", r->cache_dir);

	strv_push_take(names, xasprintf("%s/InRelease", r->base));
	strv_push_take(names, xasprintf("%s/InRelease", r->work));
	*it = (struct fetch_item){ .url = names->v[names->n - 2], .dest = names->v[names->n - 1],
				   .what = "InRelease", .missing_ok = 1,
				   .if_modified = file_mtime(cached) };
	free(cached);
}

static void take_inrelease(struct rel *r, const struct fetch_item *it)
{
	r->inrelease = 1;
	if (it->not_modified) {
		r->signed_path = xasprintf("%s/InRelease", r->cache_dir);
		log_debug("InRelease of '%s' unchanged (HTTP 304)", r->base);
		return;
	}
	r->signed_path = xstrdup(it->dest);
	r->fresh = 1;
	r->filetime = it->filetime;
}

static void release_items(struct rel *r, struct fetch_item *it, struct strv *names)
{
	static const char *const files[] = { "Release", "Release.gpg" };
	int k;

	for (k = 0; k < 2; k++) {
		strv_push_take(names, xasprintf("%s/%s", r->base, files[k]));
		strv_push_take(names, xasprintf("%s/%s", r->work, files[k]));
		it[k] = (struct fetch_item){ .url = names->v[names->n - 2], .what = files[k],
					     .dest = names->v[names->n - 1], .missing_ok = 1 };
	}
}

static int take_release(struct rel *r, const struct fetch_item *it)
{
	char *name = rel_name(r);
	int ret = 0;

	if (it[0].result == -MKI_E_NOTFOUND) {
		log_error("%s has neither InRelease nor Release at '%s/': check the suite name and the "
			  "uri", name, r->base);
		ret = -MKI_E_SOURCE;
	} else if (it[1].result == -MKI_E_NOTFOUND && !r->src->trusted) {
		log_error("%s is not signed: '%s/' has a Release but neither InRelease nor "
			  "Release.gpg; refusing it (mark the source trusted only if you must)", name,
			  r->base);
		ret = -MKI_E_SIGNATURE;
	}
	free(name);
	if (ret)
		return ret;
	r->signed_path = xstrdup(it[0].dest);
	r->sig_path = it[1].result ? NULL : xstrdup(it[1].dest);
	r->fresh = 1;
	r->filetime = it[0].filetime;
	return 0;
}

/* Release + Release.gpg for the sources without an InRelease. */
static int fetch_fallback(struct indexes_ctx *c, const struct fetch_item *in)
{
	struct fetch_item *items = xcalloc(2 * c->n, sizeof(*items));
	struct strv names = { 0 };
	size_t i, n = 0, *which = xcalloc(c->n, sizeof(*which));
	int ret;

	for (i = 0; i < c->n; i++)
		if (in[i].result == -MKI_E_NOTFOUND) {
			release_items(&c->rels[i], &items[2 * n], &names);
			which[n++] = i;
		}
	ret = n ? c->download(items, 2 * n, c->st, "release", NULL) : 0;
	for (i = 0; i < n && !ret; i++)
		ret = take_release(&c->rels[which[i]], &items[2 * i]);
	strv_release(&names);
	free(items);
	free(which);
	return ret;
}

static int fetch_signed_files(struct indexes_ctx *c)
{
	struct fetch_item *items = xcalloc(c->n + 1, sizeof(*items));
	struct strv names = { 0 };
	size_t i;
	int ret = 0;

	for (i = 0; i < c->n && c->st->offline && !ret; i++)
		ret = use_cached(&c->rels[i]);
	if (c->st->offline)
		goto out;
	for (i = 0; i < c->n; i++)
		inrelease_item(&c->rels[i], &items[i], &names);
	ret = c->download(items, c->n, c->st, "release", NULL);
	for (i = 0; i < c->n && !ret; i++)
		if (!items[i].result)
			take_inrelease(&c->rels[i], &items[i]);
	if (!ret)
		ret = fetch_fallback(c, items);
out:
	strv_release(&names);
	free(items);
	return ret;
}

/* --- Packages ------------------------------------------------------------------------------ */

/*
 * Download the indexes not yet decompressed in the cache; by-hash falls back to the plain name.
 * Bytes that do not match are a result here (a mirror mid-sync is retried, indexes_stale.c).
 */
static int fetch_wants(struct indexes_ctx *c, struct wants *w, int by_hash_retry)
{
	struct fetch_item *items = xcalloc(w->n + 1, sizeof(*items));
	size_t i, n = 0, *idx = xcalloc(w->n + 1, sizeof(*idx));
	int ret, again = 0;

	for (i = 0; i < w->n; i++) {
		struct want *x = &w->v[i];

		if (x->reuse || x->item.path || (by_hash_retry && x->item.result != -MKI_E_NOTFOUND))
			continue;
		if (by_hash_retry) {
			x->by_hash_missing = 1;
			free(x->url);
			x->url = xasprintf("%s/%s", c->rels[x->rel].base, x->file->path);
		}
		items[n] = (struct fetch_item){ .url = x->url, .what = x->file->path,
						.size = x->file->size, .sha256 = x->file->sha256,
						.missing_ok = c->rels[x->rel].info.by_hash &&
							      !by_hash_retry,
						.mismatch_ok = 1 };
		idx[n++] = i;
	}
	ret = n ? c->download(items, n, c->st, "indexes", NULL) : 0;
	for (i = 0; i < n; i++) {
		w->v[idx[i]].item = items[i];
		again |= items[i].result == -MKI_E_NOTFOUND;
	}
	free(items);
	free(idx);
	if (!ret && again && !by_hash_retry)
		return fetch_wants(c, w, 1);
	return ret;
}

/* --- the stage ----------------------------------------------------------------------------- */

static void emit(struct indexes_ctx *c, const struct wants *w)
{
	struct indexes *ix = c->out;
	size_t i;

	ix->n_releases = c->n;
	ix->releases = xcalloc(c->n + 1, sizeof(*ix->releases));
	for (i = 0; i < c->n; i++) {
		struct index_release *o = &ix->releases[i];
		struct rel *r = &c->rels[i];

		o->src = r->src;
		memcpy(o->inrelease_sha256, r->sha256, 65);
		o->date = r->info.date ? xstrdup(r->info.date) : NULL;
		o->valid_until = r->info.valid_until ? xstrdup(r->info.valid_until) : NULL;
		o->use = r->use;
		o->served_date = r->served_date ? xstrdup(r->served_date) : NULL;
		o->why = r->why ? xstrdup(r->why) : NULL;
	}
	ix->n_files = w->n;
	ix->files = xcalloc(w->n + 1, sizeof(*ix->files));
	for (i = 0; i < w->n; i++) {
		struct index_file *f = &ix->files[i];
		struct stat st;

		f->release = w->v[i].rel;
		f->component = xstrdup(w->v[i].comp);
		f->arch = xstrdup(w->v[i].arch);
		f->path = xstrdup(w->v[i].derived);
		f->url = xstrdup(w->v[i].url);
		f->size = stat(f->path, &st) ? 0 : (uint64_t)st.st_size;
		f->native_tools = w->v[i].native_tools;
	}
}

static void log_summary(const struct indexes_ctx *c, const struct wants *w)
{
	size_t i, j;

	for (i = 0; i < c->n; i++) {
		const struct rel *r = &c->rels[i];
		struct buf files = { 0 };

		if (r->use == INDEX_OMITTED)
			continue;
		for (j = 0; j < w->n; j++)
			if (w->v[j].rel == i)
				buf_addf(&files, " %s/%s %llu KiB%s;", w->v[j].comp, w->v[j].arch,
					 (unsigned long long)(c->out->files[j].size + 1023) / 1024,
					 w->v[j].reuse ? " (cached)" : "");
		log_info("indexes: %s %s: %s%s, dated %s%s%s;%s", r->src->uri, r->src->suite,
			 r->src->trusted ? "NOT verified (trusted)" : "signature good",
			 r->use == INDEX_STALE ? " (the last verified Release: the mirror is "
						 "mid-sync)" : "",
			 r->info.date ? r->info.date : "(no date)",
			 r->info.valid_until ? ", valid until " : "",
			 r->info.valid_until ? r->info.valid_until : "", files.p ? files.p : "");
		buf_release(&files);
	}
}

static int decompress_all(struct indexes_ctx *c, struct wants *w)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < w->n && !ret; i++)
		if (!w->v[i].reuse)
			ret = indexes_decompress_want(c, &w->v[i]);
	return ret;
}

/* One round: the signed files, then the indexes they name (not yet decompressed). */
static int fetch_round(struct indexes_ctx *c, struct wants *w)
{
	size_t i;
	int ret = fetch_signed_files(c);

	for (i = 0; i < c->n && !ret; i++)
		ret = indexes_verify_release(c, &c->rels[i]);
	for (i = 0; i < c->n && !ret; i++)
		ret = indexes_want_release_files(c, w, i);
	if (!ret)
		ret = fetch_wants(c, w, 0);
	return ret;
}

static int rels_init(struct indexes_ctx *c, const struct sources *s)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < s->n && !ret; i++)
		ret = rel_init(c, &c->rels[i], &s->v[i], i);
	return ret;
}

static void rels_reset(struct indexes_ctx *c, struct wants *w)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		rel_release(&c->rels[i]);
	indexes_wants_release(w);
	memset(w, 0, sizeof(*w));
}

/* Sleep `secs` seconds, or less when SIGINT or SIGTERM comes. */
static int midsync_wait(long secs)
{
	double until = log_now() + (double)secs;

	while (log_now() < until) {
		if (err_interrupted())
			return -MKI_E_INTERRUPTED;
		usleep(100 * 1000);
	}
	return 0;
}

/*
 * The rounds: while only bytes that do not match their Release failed (a mirror mid-sync: its
 * indexes land before or after its InRelease), wait and start again from a new InRelease, at
 * most INDEXES_RETRIES times (indexes.h); then indexes_stale_resolve() decides. The host's
 * indexes for native tools' twins are not worth a wait: without them the build emulates.
 */
static int process(struct indexes_ctx *c, const struct sources *s, struct wants *w)
{
	unsigned round, rounds = c->native_only ? 0 : INDEXES_RETRIES;
	int ret = 0;

	for (round = 0; !ret; round++) {
		c->round = round;
		ret = rels_init(c, s);
		if (!ret)
			ret = fetch_round(c, w);
		if (ret != -MKI_E_INTEGRITY || !indexes_midsync_count(w, SIZE_MAX))
			break;
		if (round == rounds) {
			c->round = round + 1;
			ret = indexes_stale_resolve(c, w);
			return ret ? ret : decompress_all(c, w);
		}
		indexes_midsync_retrying(c, w, round + 1, c->st->midsync_wait * (round + 1));
		ret = midsync_wait(c->st->midsync_wait * (round + 1));
		rels_reset(c, w);
	}
	if (!ret && round)
		log_info("indexes: consistent after %u retr%s", round, round > 1 ? "ies" : "y");
	return ret ? ret : decompress_all(c, w);
}

const char *indexes_native_arch(const struct recipe *r, const struct settings *st)
{
	struct strv archs = { 0 };
	const char *host = arch_host();
	int emulated = 0;
	size_t i;

	recipe_all_archs(r, &archs);
	for (i = 0; i < archs.n; i++) {
		const struct arch *a = arch_find(archs.v[i]);

		emulated |= a && !arch_runs_natively(a);
	}
	if (strv_contains(&archs, host) || st->no_native_tools)
		emulated = 0;
	strv_release(&archs);
	return emulated ? host : NULL;
}

/* Fetch, verify and emit the indexes of `s` as `c` (its options set) asks. */
static int run(struct indexes_ctx *c, const struct sources *s)
{
	struct wants w = { 0 };
	size_t i;
	int ret = 0;

	memset(c->out, 0, sizeof(*c->out));
	c->rels = xcalloc(s->n + 1, sizeof(*c->rels));
	ret = process(c, s, &w);
	if (!ret) {
		emit(c, &w);
		log_summary(c, &w);
		if (!c->st->offline)
			indexes_stale_remember(c, &w);
	}
	for (i = 0; i < s->n; i++)
		rel_release(&c->rels[i]);
	free(c->rels);
	indexes_wants_release(&w);
	return ret;
}

int indexes_fetch(struct indexes *out, const struct sources *s, const struct recipe *r,
		  const struct settings *st, fetch_items_fn *download)
{
	struct indexes_ctx c = { .st = st, .download = download, .out = out, .n = s->n,
				 .native_arch = indexes_native_arch(r, st) };

	indexes_stale_check_words(&st->allow_stale, s);
	return run(&c, s);
}

int indexes_fetch_twins(struct indexes *out, const struct sources *s, const struct settings *st,
			fetch_items_fn *download)
{
	struct indexes_ctx c = { .st = st, .download = download, .out = out, .n = s->n,
				 .native_arch = arch_host(), .native_only = 1 };

	return run(&c, s);
}

void indexes_release(struct indexes *ix)
{
	size_t i;

	for (i = 0; i < ix->n_releases; i++) {
		free(ix->releases[i].date);
		free(ix->releases[i].valid_until);
		free(ix->releases[i].served_date);
		free(ix->releases[i].why);
	}
	for (i = 0; i < ix->n_files; i++) {
		free(ix->files[i].component);
		free(ix->files[i].arch);
		free(ix->files[i].path);
		free(ix->files[i].url);
	}
	free(ix->releases);
	free(ix->files);
	memset(ix, 0, sizeof(*ix));
}
