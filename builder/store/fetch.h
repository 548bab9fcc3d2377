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

#include "debian/plan.h"
#include "fetch_item.h"
#include "lib/settings.h"

/**
 * Download every item, `settings->jobs` at a time; `step` names the progress line. Items whose
 * object is already cached are not downloaded. With settings->offline a cache miss fails with
 * -MKI_E_OFFLINE (items without sha256 fail the same way). Every item's result is set; returns 0
 * when all succeeded (a missing_ok item's 404 counts as success: check its result), else the
 * first failure's code. Each failure is logged once, except a missing_ok item's 404 and a
 * mismatch_ok item's wrong bytes (-MKI_E_INTEGRITY, said in its `mismatch`): those the caller
 * reads per item. Bytes that do not match never enter the cache.
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
