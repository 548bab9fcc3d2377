/* Fetch: parallel verified downloads of the plan's .debs into the content-addressed cache. */
#ifndef MKI_FETCH_H
#define MKI_FETCH_H

#include <stdint.h>

#include "plan.h"
#include "settings.h"

struct fetch_stats {
	uint64_t bytes_downloaded;
	unsigned files_downloaded, files_cached;
};

/**
 * Make every plan entry with a url available locally: sets entry->path to the verified cache
 * object. Entries that already have a path (local .debs) are left alone.
 */
int fetch_plan(struct plan *p, const struct settings *st, struct fetch_stats *stats);

#endif
