/*
 * Indexes: each source's InRelease (or Release + Release.gpg) verified with gpgv against that
 * source's keyring only, then its Packages files checked against the signed SHA-256 and size and
 * decompressed (libarchive) into the cache. Verified indexes are reused while their hash is
 * unchanged; InRelease is fetched with a conditional GET.
 */
#ifndef MKI_INDEXES_H
#define MKI_INDEXES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/settings.h"
#include "recipe/recipe.h"
#include "sources.h"
#include "store/fetch_item.h"

/*
 * What a suite's indexes are when its mirror is mid-sync (an index that does not match the
 * Release just fetched, still so after the retries) and --allow-stale names the suite.
 */
enum index_use {
	INDEX_CURRENT, /* the Release the mirror serves now: the normal case */
	INDEX_STALE,   /* the last verified Release of the suite and its indexes, still valid */
	INDEX_OMITTED, /* an -updates or -security suite left out (no verified Release kept):
			  no index_file refers to it */
};

struct index_release {
	const struct source *src; /* borrowed from the sources list */
	char inrelease_sha256[65];/* of the signed file as fetched (InRelease, or Release) */
	char *date;               /* Date: of the Release */
	char *valid_until;        /* NULL if none */
	enum index_use use;
	char *served_date;        /* not INDEX_CURRENT: the Date of the Release served now */
	char *why;                /* not INDEX_CURRENT: which index did not match, how */
};

/*
 * One verified Packages file. Its "Filename:" values are relative to releases[release].src->uri:
 * build download URLs with url_join(src->uri, filename), which percent-encodes as apt does.
 */
struct index_file {
	size_t release;  /* index into releases */
	char *component;
	char *arch;      /* a recipe architecture, or "all" */
	char *path;      /* verified, decompressed Packages file (in the cache) */
	char *url;       /* the file it came from (for messages) */
	uint64_t size;   /* of the decompressed file */
	int native_tools;/* the host's arch, only for native tools (accel.h); not for resolving */
};

struct indexes {
	struct index_release *releases;
	size_t n_releases;
	struct index_file *files;
	size_t n_files;
};

/*
 * A mirror mid-sync: an index whose bytes do not match the Release just fetched (by-hash tried
 * first when the Release offers it) is fetched again with a new Release after a wait, at most
 * INDEXES_RETRIES times, waiting settings->midsync_wait seconds, then twice, then three times
 * that (10 s by default: 60 s of waiting in all).
 */
#define INDEXES_RETRIES 3

/**
 * Fetch and verify every source's indexes. Errors are logged with the URL and what to do:
 * -MKI_E_SIGNATURE (unsigned, unknown key, bad signature), -MKI_E_EXPIRED (past Valid-Until and
 * not st->ignore_valid_until), -MKI_E_SOURCE (suite, component or architecture not in the
 * Release), -MKI_E_PARSE (malformed Release), -MKI_E_INTEGRITY, -MKI_E_NETWORK, -MKI_E_NOTFOUND,
 * -MKI_E_OFFLINE (st->offline and not cached). A mirror still mid-sync after the retries is
 * -MKI_E_INTEGRITY, naming the suite, its sources line and the ways out, unless st->allow_stale
 * names the suite (indexes_stale_allowed()): then the suite's last verified Release and indexes
 * stand in when that Release still verifies and is valid (INDEX_STALE), else an -updates or
 * -security suite is left out when no verified Release of it was kept (INDEX_OMITTED); each
 * with one warning. `out` belongs to the caller (indexes_release).
 * Every download goes through `download` (the pipeline's fetch stage passes fetch_items): the
 * stage never calls the
 * fetch stage itself.
 */
int indexes_fetch(struct indexes *out, const struct sources *s, const struct recipe *r,
		  const struct settings *st, fetch_items_fn *download);
/**
 * The indexes of the host's architecture alone, every file marked native_tools: where native
 * tools' twins may come from when the recipe's repositories lack that architecture (accel.h).
 * Verified exactly as indexes_fetch() verifies; a Release without the host's architecture
 * gives no file. Offline, a Packages file not in the cache is left out (said at info level).
 */
int indexes_fetch_twins(struct indexes *out, const struct sources *s, const struct settings *st,
			fetch_items_fn *download);
/**
 * The host's architecture when some recipe architecture is emulated, the host's is not one of
 * them and native tools are on: its index names the host builds of the plan's programs
 * (accel.h), never given to the resolver. Otherwise NULL.
 */
const char *indexes_native_arch(const struct recipe *r, const struct settings *st);
void indexes_release(struct indexes *ix);

/**
 * 1 when `allow` (--allow-stale's arguments, each a comma-separated list) names `suite`: the
 * suite itself, or "updates" for an -updates or -security suite (indexes_suite_is_update()).
 */
int indexes_stale_allowed(const struct strv *allow, const char *suite);
/** Warn of each word of `allow` that names none of the suites of `s` (a typo changes nothing). */
void indexes_stale_check_words(const struct strv *allow, const struct sources *s);
/** 1 for a suite of updates apt may do without: "*-updates", "*-security", "*\/updates". */
int indexes_suite_is_update(const char *suite);
/**
 * The report's "indexes" member into `out` (nothing when every suite is INDEX_CURRENT): each
 * suite that stood in or was left out, with the Release used and why.
 */
void indexes_report_json(const struct indexes *ix, struct buf *out);

/** Parse an RFC 2822 date of a Release file ("Sat, 10 Jun 2023 08:46:48 UTC") into `*t`. */
int indexes_parse_date(const char *s, int64_t *t);
/**
 * The newest signed Release Date of `ix` (0 without one): every timestamp's source when
 * SOURCE_DATE_EPOCH is not set, so the same indexes (the same lock) give the same image.
 */
int64_t indexes_newest_date(const struct indexes *ix);

#endif
