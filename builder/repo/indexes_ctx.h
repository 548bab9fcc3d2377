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
};

struct indexes_ctx {
	const struct settings *st;
	fetch_items_fn *download; /* fetch_items, from the pipeline (stage_fetch.c) */
	const char *native_arch; /* the host's arch, fetched for native tools (accel.h); or NULL */
	int native_only;         /* indexes_fetch_twins(): native_arch's files alone */
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

/** Free every want of `w`. */
void indexes_wants_release(struct wants *w);

/* ---- indexes_decompress.c ----------------------------------------------------------------- */

/**
 * Decompress the download of `x` into the cache at x->derived, bounded by the plain file's
 * declared size, the 'index-unpacked' and 'xz-memory' limits, and checked against the plain
 * file's signed SHA-256. Errors logged: -MKI_E_LIMIT_REPO, -MKI_E_INTEGRITY, -MKI_E_PARSE, errno.
 */
int indexes_decompress_want(const struct indexes_ctx *c, struct want *x);

#endif
