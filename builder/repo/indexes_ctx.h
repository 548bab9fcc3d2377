/*
 * The indexes stage's shared state, internal to the indexes modules: indexes.c downloads the
 * signed files and drives the stage, indexes_parse.c reads a Release, indexes_verify.c checks it
 * (gpgv, dates, suite, rollback), indexes_select.c chooses the Packages files it declares and
 * indexes_decompress.c turns each download into the verified plain file in the cache.
 */
#ifndef MKI_INDEXES_CTX_H
#define MKI_INDEXES_CTX_H

#include <stdint.h>
#include <time.h>

#include "indexes.h"
#include "lib/str.h"
#include "store/fetch_item.h"

struct rel_entry {
	char *path;
	uint64_t size;
	char sha256[65];
};

struct release_info {
	char *date, *valid_until, *suite, *codename;
	struct strv archs, comps;
	int by_hash, no_all;
	struct rel_entry *v;
	size_t n, alloc;
};

/* Per-source working state. */
struct rel {
	const struct source *src;
	char *base;             /* URI/dists/SUITE */
	char *cache_dir;        /* CACHE/releases/KEY */
	char *work;             /* WORK/release-N */
	int inrelease;          /* signed file is InRelease (else Release + Release.gpg) */
	int fresh;              /* downloaded now (store in the cache once verified) */
	time_t filetime;
	char *signed_path, *sig_path; /* the files gpgv checks */
	struct buf text;        /* the signed Release text */
	struct release_info info;
	char sha256[65];
	int stale;              /* signed_path is the last verified Release (indexes_stale.c) */
	enum index_use use;
	char *served_date;      /* not INDEX_CURRENT: the Date of the Release served now */
	char *why;              /* not INDEX_CURRENT: the index that did not match */
};

struct indexes_ctx {
	const struct settings *st;
	fetch_items_fn *download; /* fetch_items, from the pipeline (stage_fetch.c) */
	const char *native_arch; /* the host's arch, fetched for native tools (accel.h); or NULL */
	int native_only;         /* indexes_fetch_twins(): native_arch's files alone */
	unsigned round;          /* 0, or a retry's (a mirror mid-sync): said once is enough */
	struct rel *rels;
	size_t n;
	struct indexes *out;
};

struct want {
	size_t rel;
	char *comp, *arch, *url, *derived;
	const struct rel_entry *file, *plain;
	int reuse;
	int native_tools;
	int by_hash_missing;    /* by-hash answered 404: the plain name was tried */
	struct fetch_item item;
};

struct wants {
	struct want *v;
	size_t n, alloc;
};

/* "'URI' suite 'SUITE'" for messages; a new string. */
static inline char *rel_name(const struct rel *r)
{
	return xasprintf("'%s' suite '%s'", r->src->uri, r->src->suite);
}

/* ---- indexes_parse.c: the text of a Release (pure) ---------------------------------------- */

/**
 * The signed text of a clearsigned message, dash-escaping undone. Refuses (returns -MKI_E_PARSE)
 * anything outside one BEGIN PGP SIGNED MESSAGE ... END PGP SIGNATURE block except whitespace.
 */
int indexes_signed_text(const char *msg, size_t len, struct buf *out);

/**
 * Parse the signed text of a Release (one deb822 stanza) into `ri`: the fields the stage reads
 * and the SHA256 list. 0 or -MKI_E_PARSE with `*bad_line` the 1-based line at fault.
 */
int indexes_parse_release(const char *text, struct release_info *ri, int *bad_line);

/** The SHA256 entry of `path` ("main/binary-armhf/Packages.xz"), or NULL. */
const struct rel_entry *indexes_rel_find(const struct release_info *ri, const char *path);

/** Free the contents of `ri` and zero it. */
void indexes_info_release(struct release_info *ri);

/* ---- indexes_verify.c --------------------------------------------------------------------- */

/**
 * Check the signed file of `r` (gpgv against the source's keyring unless trusted), parse it into
 * r->text and r->info, refuse an expired, foreign-suite or rolled-back Release, set r->sha256,
 * and keep a fresh one in the cache. Errors logged: -MKI_E_SIGNATURE, -MKI_E_EXPIRED,
 * -MKI_E_PARSE, -MKI_E_LIMIT_REPO, or a negative errno.
 */
int indexes_verify_release(struct indexes_ctx *c, struct rel *r);

/* ---- indexes_select.c --------------------------------------------------------------------- */

/**
 * Append to `w` the Packages files of release `ri` the source asks for (its components and
 * architectures, "all", the host's for native tools), refusing what the Release does not offer
 * (-MKI_E_SOURCE) or declares too large (-MKI_E_LIMIT_REPO), logged.
 */
int indexes_want_release_files(struct indexes_ctx *c, struct wants *w, size_t ri);

/** Free the wants of release `ri` and take them out of `w`, the others kept in order. */
void indexes_wants_drop(struct wants *w, size_t ri);

/** Free every want of `w`. */
void indexes_wants_release(struct wants *w);

/* ---- indexes_stale.c: a mirror mid-sync ---------------------------------------------------- */

/** How many of release `ri`'s wants (all releases: SIZE_MAX) got bytes that did not match. */
size_t indexes_midsync_count(const struct wants *w, size_t ri);

/**
 * Say (warning) that the wants of `w` do not match their Release and that round `round`
 * (1-based) of INDEXES_RETRIES follows after `wait` seconds.
 */
void indexes_midsync_retrying(const struct indexes_ctx *c, const struct wants *w, unsigned round,
			      long wait);

/**
 * After the retries: each release with mismatched wants either stands in from its last verified
 * Release (its wants replaced by that Release's, all already in the cache), is left out, or is
 * an error, as indexes_fetch() says. Errors logged: -MKI_E_INTEGRITY (mid-sync, not allowed),
 * -MKI_E_EXPIRED, -MKI_E_SIGNATURE, -MKI_E_NOTFOUND (no verified index kept for a base suite).
 */
int indexes_stale_resolve(struct indexes_ctx *c, struct wants *w);

/**
 * Keep, for each release used as served (INDEX_CURRENT), its signed files and the keys of its
 * indexes under CACHE/releases/KEY/verified/: the last verified Release --allow-stale falls back
 * to, its indexes spared by the cache's expiry (cachegc.h). A failure is a warning: the build
 * itself is fine.
 */
void indexes_stale_remember(const struct indexes_ctx *c, const struct wants *w);

/* ---- indexes_decompress.c ----------------------------------------------------------------- */

/**
 * Decompress the download of `x` into the cache at x->derived, bounded by the plain file's
 * declared size, the 'index-unpacked' and 'xz-memory' limits, and checked against the plain
 * file's signed SHA-256. Errors logged: -MKI_E_LIMIT_REPO, -MKI_E_INTEGRITY, -MKI_E_PARSE, errno.
 */
int indexes_decompress_want(const struct indexes_ctx *c, struct want *x);

#endif
