/*
 * Cache expiry: `mkimage --cache-gc[=SIZE]` removes the least recently used objects and layers
 * (layer.h) until the cache fits SIZE, and never one that a running build is using.
 *
 * "Using" is explicit. Every build registers in the cache (users/XXXXXX, a file it holds
 * flock'ed for its whole life) and appends each object's SHA-256 to it before looking the object
 * up. The collector reads the registrations of live builds (a lock it cannot take), deletes those
 * of dead ones (a lock it can), and spares every object they name.
 *
 * gc.lock orders the two: a build registers under a shared lock, the collector scans and removes
 * under the exclusive one. An object registered after the scan is therefore looked up after the
 * removal and is simply downloaded again; one registered before it is never removed. Nothing waits
 * for long: the collector holds the lock for one scan, a build for one append.
 *
 * Layout added to cache.h's:
 *   gc.lock        the lock above (empty)
 *   users/XXXXXX   one registration per running build (its claimed SHA-256s, one per line)
 */
#ifndef MKI_CACHEGC_H
#define MKI_CACHEGC_H

#include <stddef.h>
#include <stdint.h>

/** One build's registration; opaque. */
struct cache_user;

/**
 * Register this process as a user of `cache_dir`. Returns 0 and sets `*out` (free with
 * cachegc_user_close), or a negative errno (-MKI_E_INTERRUPTED when a signal ends the wait for a
 * running collection).
 */
int cachegc_user_open(const char *cache_dir, struct cache_user **out);

/**
 * Claim object `sha256` (its objects/ and indexes/ files, or the layer of that key) before
 * looking it up, and mark it used now for the least-recently-used order. A NULL `u` (tools that
 * build no image) claims nothing.
 * Returns 0 or a negative errno.
 */
int cachegc_claim(struct cache_user *u, const char *sha256);

/** Unregister and free `u` (NULL is fine). */
void cachegc_user_close(struct cache_user *u);

/** What one collection found and did; sizes are disk usage in bytes. */
struct cache_gc_result {
	uint64_t bytes_before, bytes_after;
	size_t objects_before, objects_removed;
	size_t objects_in_use; /* spared because a running build claimed them */
	size_t objects_kept;   /* spared because a last verified Release names them */
	size_t builds;         /* running builds found registered */
	size_t leftovers;      /* temp files and lock files of dead processes removed */
};

/**
 * Remove least recently used objects (a download and its decompressed index count as one) and
 * layers of `cache_dir` until they use at most `limit` bytes, sparing those claimed by running
 * builds.
 * Repository state (releases/: the rollback guard, each source's last verified Release) is never
 * removed, nor the indexes a last verified Release names (releases/KEY/verified/indexes: what
 * --allow-stale builds from). Returns 0 (the result may
 * still be above `limit` when running builds hold more) or a negative errno.
 */
int cachegc_run(const char *cache_dir, uint64_t limit, struct cache_gc_result *res);
/**
 * --cache-gc: cachegc_run() on `cache_dir`, saying at info level what it found and removed and,
 * as a warning, when running builds hold more than `limit`. No cache there is nothing to do.
 * 0, or the negative code of a collection that failed (logged).
 */
int cachegc_expire(const char *cache_dir, uint64_t limit);

#endif
