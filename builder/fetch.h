/*
 * Fetch: parallel verified downloads (libcurl multi) into the content-addressed cache, for the
 * plan's .debs and for repository indexes.
 *
 * Transfers run `settings->jobs` at a time over kept-alive connections. Transient failures (HTTP
 * 5xx/408/429, connection reset, timeout, a stall below 1 byte/s for MKIMAGE_STALL_TIMEOUT seconds)
 * are retried with exponential backoff, resuming with a Range request when bytes already arrived
 * and the server honours ranges. Proxies come from the usual environment variables (http_proxy,
 * https_proxy, no_proxy), certificates from the system store. Verified files are fdatasync'ed by
 * worker threads while other transfers go on, then renamed into place.
 */
#ifndef MKI_FETCH_H
#define MKI_FETCH_H

#include <stdint.h>
#include <time.h>

#include "plan.h"
#include "settings.h"

struct fetch_stats {
	uint64_t bytes_downloaded;
	unsigned files_downloaded, files_cached;
};

/*
 * One download. With `sha256` set the bytes are hashed while streaming and the result is the cache
 * object (`path`). Without it (signed metadata such as InRelease, verified by the caller) the file
 * goes to `dest` through a temp file and rename.
 */
struct fetch_item {
	const char *url;      /* borrowed */
	const char *what;     /* for messages, e.g. "hello_1.0_armhf.deb"; borrowed */
	uint64_t size;        /* expected size; 0: unknown (then at most the 'release-size' limit) */
	const char *sha256;   /* expected SHA-256, or NULL */
	const char *dest;     /* without sha256: the final path; borrowed */
	time_t if_modified;   /* without sha256: conditional GET when > 0 */
	int missing_ok;       /* a 404/410 is a result (-MKI_E_NOTFOUND), not a logged error */

	/* results */
	int result;           /* 0 or a negative code; logged unless missing_ok and 404 */
	int not_modified;     /* conditional GET answered 304: dest untouched */
	int from_cache;       /* already in the cache: nothing downloaded */
	time_t filetime;      /* the server's Last-Modified, or 0 */
	char *path;           /* with sha256: the cache object (new string, caller frees) */
};

/**
 * Download every item, `settings->jobs` at a time; `step` names the progress line. Items whose
 * object is already cached are not downloaded. With settings->offline a cache miss fails with
 * -MKI_E_OFFLINE (items without sha256 fail the same way). Every item's result is set; returns 0
 * when all succeeded (a missing_ok item's 404 counts as success: check its result), else the
 * first failure's code (each failure logged once).
 */
int fetch_items(struct fetch_item *items, size_t n, const struct settings *st, const char *step,
		struct fetch_stats *stats);

/**
 * Make every plan entry with a url available locally: sets entry->path to the verified cache
 * object. Entries that already have a path (local .debs) are left alone. A .deb whose index
 * declares it larger than the 'deb-size' limit is refused before anything is downloaded
 * (-MKI_E_LIMIT_PKG).
 */
int fetch_plan(struct plan *p, const struct settings *st, struct fetch_stats *stats);

#endif
