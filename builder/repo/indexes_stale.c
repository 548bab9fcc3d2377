/*
 * Indexes, a mirror mid-sync: a mirror updates its indexes and its InRelease one after the other,
 * so for a while (minutes, sometimes hours) an index does not match the InRelease that names it.
 * indexes.c retries within a bound; this file says what did not match, and, when --allow-stale
 * names the suite, builds as apt does: from the last Release of that suite whose indexes verified
 * (kept under CACHE/releases/KEY/verified/ by every good build) while it still verifies and is
 * valid, or without an -updates/-security suite none was kept for. Never silently: one warning
 * each, and the report and the lock record it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "indexes_ctx.h"
#include "lib/err.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "store/cache.h"

#define RECORD_MAX (64u << 20) /* a keys list or a signed Release: the release-size bound */

int indexes_suite_is_update(const char *suite)
{
	return str_ends_with(suite, "-updates") || str_ends_with(suite, "-security") ||
	       str_ends_with(suite, "/updates");
}

static int names(const char *word, size_t n, const char *suite)
{
	if (n == strlen(suite) && !strncmp(word, suite, n))
		return 1;
	return n == 7 && !strncmp(word, "updates", 7) && indexes_suite_is_update(suite);
}

int indexes_stale_allowed(const struct strv *allow, const char *suite)
{
	const char *p, *comma;
	size_t i;

	for (i = 0; i < allow->n; i++)
		for (p = allow->v[i]; p; p = comma ? comma + 1 : NULL) {
			comma = strchr(p, ',');
			if (names(p, comma ? (size_t)(comma - p) : strlen(p), suite))
				return 1;
		}
	return 0;
}

/* A word that names no source's suite is a typo the user would otherwise never learn of. */
static void check_word(const char *word, size_t n, const struct sources *s)
{
	size_t i;

	if (!n || (n == 7 && !strncmp(word, "updates", 7)))
		return;
	for (i = 0; i < s->n; i++)
		if (names(word, n, s->v[i].suite))
			return;
	log_warn("--allow-stale names '%.*s', which is none of the sources' suites (nor "
		 "'updates'): it changes nothing", (int)n, word);
}

void indexes_stale_check_words(const struct strv *allow, const struct sources *s)
{
	const char *p, *comma;
	size_t i;

	for (i = 0; i < allow->n; i++)
		for (p = allow->v[i]; p; p = comma ? comma + 1 : NULL) {
			comma = strchr(p, ',');
			check_word(p, comma ? (size_t)(comma - p) : strlen(p), s);
		}
}

static int mismatched(const struct want *x)
{
	return x->item.result == -MKI_E_INTEGRITY && x->item.mismatch[0];
}

size_t indexes_midsync_count(const struct wants *w, size_t ri)
{
	size_t i, n = 0;

	for (i = 0; i < w->n; i++)
		n += mismatched(&w->v[i]) && (ri == SIZE_MAX || w->v[i].rel == ri);
	return n;
}

/* "'main/binary-armhf/Packages.xz' has 1 bytes, the index says 2 (by-hash has no copy)" */
static char *describe(const struct wants *w, size_t ri)
{
	const struct want *first = NULL;
	size_t i;
	int more = 0;

	for (i = 0; i < w->n; i++)
		if (w->v[i].rel == ri && mismatched(&w->v[i])) {
			more |= first != NULL;
			first = first ? first : &w->v[i];
		}
	if (!first)
		return xstrdup("(nothing)");
	return xasprintf("'%s' from '%s' %s%s%s", first->file->path, first->url,
			 first->item.mismatch,
			 first->by_hash_missing ? " and by-hash has no copy of it" : "",
			 more ? ", and more indexes of the suite do not match either" : "");
}

void indexes_midsync_retrying(const struct indexes_ctx *c, const struct wants *w, unsigned round,
			      long wait)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		char *name, *what;

		if (!indexes_midsync_count(w, i))
			continue;
		name = rel_name(&c->rels[i]);
		what = describe(w, i);
		log_warn("%s: %s, against its Release dated %s: the mirror looks mid-sync; "
			 "fetching the Release and the index again in %ld s (retry %u of %d)", name,
			 what, c->rels[i].info.date ? c->rels[i].info.date : "(no date)", wait, round,
			 INDEXES_RETRIES);
		free(what);
		free(name);
	}
}

/* The ways out, for an error that ends the build. */
static void log_midsync_error(const struct rel *r, const char *name, const char *what,
			      int retries, long waited)
{
	log_error("%s (%s) looks mid-sync, or its file was tampered with: %s, against its Release "
		  "dated %s; still so after %d retries over %ld s; nothing was cached. Wait and build "
		  "again; or use another mirror (--source, or the recipe's sources); or build with "
		  "the last verified index of the suite while its Release is valid: "
		  "--allow-stale=%s", name, r->src->origin, what,
		  r->info.date ? r->info.date : "(no date)", retries, waited, r->src->suite);
}

/* The signed files of the last verified Release of `r`, if one was kept. */
static int find_record(struct rel *r)
{
	char *in = xasprintf("%s/verified/InRelease", r->cache_dir);
	char *rel = xasprintf("%s/verified/Release", r->cache_dir);
	char *gpg = xasprintf("%s/verified/Release.gpg", r->cache_dir);

	free(r->signed_path);
	free(r->sig_path);
	r->signed_path = r->sig_path = NULL;
	r->inrelease = !access(in, R_OK);
	if (r->inrelease) {
		r->signed_path = in;
		in = NULL;
	} else if (!access(rel, R_OK) && (r->src->trusted || !access(gpg, R_OK))) {
		r->signed_path = rel;
		r->sig_path = r->src->trusted ? NULL : gpg;
		rel = NULL;
		gpg = r->src->trusted ? gpg : NULL;
	}
	free(in);
	free(rel);
	free(gpg);
	return r->signed_path != NULL;
}

/* An -updates or -security suite none was kept for: built without it, as apt on a new machine. */
static int omit(struct indexes_ctx *c, struct wants *w, size_t ri, const char *name)
{
	struct rel *r = &c->rels[ri];

	indexes_wants_drop(w, ri);
	r->use = INDEX_OMITTED;
	log_warn_instead("the other suites alone (built WITHOUT it, as apt does; its updates are "
			 "not in the image; --allow-stale)", "%s looks mid-sync (%s) and no "
			 "verified Release of it is kept in the cache", name, r->why);
	return 0;
}

/* Every index the last verified Release names must still be in the cache, verified then. */
static int check_cached(const struct indexes_ctx *c, const struct wants *w, size_t ri,
			const char *name)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->v[i].rel == ri && !w->v[i].reuse)
			return log_errno(-MKI_E_INTEGRITY, "%s looks mid-sync, and the last verified "
					 "index '%s' of its Release dated %s is no longer in the "
					 "cache '%s' (removed, or never fetched for this "
					 "architecture): wait and build again, or use another mirror",
					 name, w->v[i].file->path, c->rels[ri].info.date,
					 c->st->cache_dir);
	return 0;
}

/* Switch release `ri` to its last verified Release: checked again (gpgv, Valid-Until) first. */
static int stand_in(struct indexes_ctx *c, struct wants *w, size_t ri, const char *name)
{
	struct rel *r = &c->rels[ri];
	char *used;
	int ret;

	indexes_wants_drop(w, ri);
	buf_release(&r->text);
	indexes_info_release(&r->info);
	r->stale = 1;
	r->fresh = 0;
	ret = indexes_verify_release(c, r);
	if (!ret)
		ret = indexes_want_release_files(c, w, ri);
	if (!ret)
		ret = check_cached(c, w, ri, name);
	if (ret)
		return ret;
	r->use = INDEX_STALE;
	used = xasprintf("its last verified Release, dated %s%s%s, and its indexes (--allow-stale)",
			 r->info.date ? r->info.date : "(no date)",
			 r->info.valid_until ? ", valid until " : "",
			 r->info.valid_until ? r->info.valid_until : "");
	log_warn_instead(used, "%s looks mid-sync (%s, against its Release dated %s)", name, r->why,
			 r->served_date ? r->served_date : "(no date)");
	free(used);
	return 0;
}

static int resolve_one(struct indexes_ctx *c, struct wants *w, size_t ri)
{
	struct rel *r = &c->rels[ri];
	char *name = rel_name(r);
	int ret = 0, retries = c->native_only ? 0 : INDEXES_RETRIES;

	r->why = describe(w, ri);
	r->served_date = r->info.date ? xstrdup(r->info.date) : NULL;
	if (!indexes_stale_allowed(&c->st->allow_stale, r->src->suite)) {
		/* the waits were W, 2W, 3W (indexes.c) */
		log_midsync_error(r, name, r->why, retries,
				  c->st->midsync_wait * retries * (retries + 1) / 2);
		ret = -MKI_E_INTEGRITY;
	} else if (find_record(r)) {
		ret = stand_in(c, w, ri, name);
	} else if (indexes_suite_is_update(r->src->suite)) {
		ret = omit(c, w, ri, name);
	} else {
		ret = log_errno(-MKI_E_INTEGRITY, "%s (%s) looks mid-sync (%s) and no verified "
				"Release of it is kept in the cache; --allow-stale leaves out only "
				"an -updates or -security suite, never a base one: wait and build "
				"again, or use another mirror (--source, or the recipe's sources)",
				name, r->src->origin, r->why);
	}
	free(name);
	return ret;
}

int indexes_stale_resolve(struct indexes_ctx *c, struct wants *w)
{
	size_t i;
	int ret = 0, r;

	/* Each suite's verdict, so that one run names every suite that is mid-sync. */
	for (i = 0; i < c->n; i++)
		if (indexes_midsync_count(w, i) && (r = resolve_one(c, w, i)) && !ret)
			ret = r;
	return ret;
}

/* --- the record ---------------------------------------------------------------------------- */

static int copy_file(const char *from, const char *to)
{
	struct buf b = { 0 };
	int ret = readfile_read(from, RECORD_MAX, &b, NULL);

	if (!ret)
		ret = cache_store(to, b.p ? b.p : "", b.len, 0);
	buf_release(&b);
	return ret;
}

/*
 * The keys list: "release SHA" (the signed file's), then the SHA-256 of each index, one a line.
 * The same Release kept again adds its keys (another recipe's architectures).
 */
static void keys_list(const struct rel *r, const struct wants *w, size_t ri, struct buf *out,
		      int *same)
{
	char *path = xasprintf("%s/verified/indexes", r->cache_dir), *head;
	struct buf old = { 0 };
	size_t i;

	head = xasprintf("release %s\n", r->sha256);
	*same = !readfile_read(path, RECORD_MAX, &old, NULL) && old.p &&
		str_starts_with(old.p, head);
	buf_adds(out, *same ? old.p : head);
	for (i = 0; i < w->n; i++)
		if (w->v[i].rel == ri && !(*same && strstr(old.p, w->v[i].file->sha256)))
			buf_addf(out, "%s\n", w->v[i].file->sha256);
	buf_release(&old);
	free(head);
	free(path);
}

static int remember_one(const struct rel *r, const struct wants *w, size_t ri)
{
	char *keys = xasprintf("%s/verified/indexes", r->cache_dir), *dst = NULL;
	static const char *const names[] = { "InRelease", "Release", "Release.gpg" };
	struct buf list = { 0 };
	int same, ret, k;

	keys_list(r, w, ri, &list, &same);
	/* The keys first: the expiry then never removes what a kept Release names. */
	ret = cache_store(keys, list.p, list.len, 0);
	for (k = 0; k < 3 && !ret && !same; k++) {
		const char *from = !k ? (r->inrelease ? r->signed_path : NULL)
				      : k == 1 ? (r->inrelease ? NULL : r->signed_path) : r->sig_path;

		dst = xasprintf("%s/verified/%s", r->cache_dir, names[k]);
		if (from)
			ret = copy_file(from, dst);
		else if (unlink(dst) && errno != ENOENT)
			ret = -errno;
		free(dst);
	}
	if (ret)
		log_warn("cannot keep the verified Release of '%s' suite '%s' in the cache (%s): "
			 "--allow-stale cannot fall back to it", r->src->uri, r->src->suite,
			 err_text(ret));
	buf_release(&list);
	free(keys);
	return ret;
}

void indexes_stale_remember(const struct indexes_ctx *c, const struct wants *w)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->rels[i].use == INDEX_CURRENT)
			remember_one(&c->rels[i], w, i);
}

/* --- the report ---------------------------------------------------------------------------- */

static void json_field(struct buf *b, const char *key, const char *v, int first)
{
	buf_adds(b, first ? "" : ", ");
	json_key(b, key);
	if (v)
		json_str(b, v);
	else
		buf_adds(b, "null");
}

void indexes_report_json(const struct indexes *ix, struct buf *out)
{
	size_t i, n = 0;

	for (i = 0; i < ix->n_releases; i++) {
		const struct index_release *r = &ix->releases[i];

		if (r->use == INDEX_CURRENT)
			continue;
		buf_adds(out, n++ ? ",\n    { " : "  \"indexes\": [\n    { ");
		json_field(out, "uri", r->src->uri, 1);
		json_field(out, "suite", r->src->suite, 0);
		json_field(out, "used", r->use == INDEX_STALE ? "last-verified" : "omitted", 0);
		json_field(out, "release_date", r->use == INDEX_STALE ? r->date : NULL, 0);
		json_field(out, "valid_until", r->use == INDEX_STALE ? r->valid_until : NULL, 0);
		json_field(out, "served_date", r->served_date, 0);
		json_field(out, "why", r->why, 0);
		buf_adds(out, " }");
	}
	if (n)
		buf_adds(out, "\n  ]");
}
