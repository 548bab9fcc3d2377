/*
 * One download request and its result: the type shared by the stages that need files (indexes)
 * and the fetch stage that gets them (fetch.h), so that a stage asks for downloads through a
 * function the pipeline hands it instead of calling the fetch stage itself.
 */
#ifndef MKI_FETCH_ITEM_H
#define MKI_FETCH_ITEM_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct settings;

#define FETCH_MAX_HOSTS 16

struct fetch_stats {
	uint64_t bytes_downloaded;
	unsigned files_downloaded, files_cached;
	/* the servers a transfer was started to, "host[:port]" (url_host), first seen first */
	char hosts[FETCH_MAX_HOSTS][256];
	unsigned n_hosts, hosts_left_out; /* beyond FETCH_MAX_HOSTS: counted only */
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
	int mismatch_ok;      /* with size/sha256: bytes that do not match are a result
				 (-MKI_E_INTEGRITY, `mismatch` says how), not a logged error: the
				 caller retries (a mirror mid-sync) or logs it with more context */

	/* results */
	int result;           /* 0 or a negative code; logged unless missing_ok and 404 */
	int not_modified;     /* conditional GET answered 304: dest untouched */
	int from_cache;       /* already in the cache: nothing downloaded */
	time_t filetime;      /* the server's Last-Modified, or 0 */
	char *path;           /* with sha256: the cache object (new string, caller frees) */
	char mismatch[192];   /* -MKI_E_INTEGRITY: "has N bytes, the index says M" or the hashes;
				 nothing of it was cached */
};

/** How a stage downloads: fetch_items() (fetch.h) has this type; see its contract there. */
typedef int fetch_items_fn(struct fetch_item *items, size_t n, const struct settings *st,
			   const char *step, struct fetch_stats *stats);

#endif
