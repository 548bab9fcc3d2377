/*
 * What a tree holds, counted against `staging-entries` and `staging-size` once scripts and hooks
 * have had it (the unpacker counts what packages declare; this counts what is there), with the
 * directories that hold most of it, so that a refusal says where to look.
 */
#ifndef MKI_TREESUM_H
#define MKI_TREESUM_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/runlimits.h"

struct treesum_group {
	char *dir;                /* tree path without the leading '/', "" for the root */
	uint64_t entries, bytes;
};

struct treesum {
	uint64_t entries, bytes;         /* counted so far */
	uint64_t max_entries, max_bytes; /* the limits in force */
	struct treesum_group *slots;     /* open addressing, TREESUM_SLOTS of them */
	size_t n_groups;
};

/** Start counting against `l`'s staging-entries and staging-size (NULL: the defaults). */
void treesum_init(struct treesum *t, const struct limits *l);

/**
 * Count `entries` and `bytes` for the tree path `rel` ("" is the root; no leading '/'), charged
 * to its directory cut to three components ("usr/share/doc/x/copyright" -> "usr/share/doc";
 * past 4096 such directories, to the first component, then to the root, so the memory stays
 * bounded whatever the tree). Returns treesum_over().
 */
int treesum_add(struct treesum *t, const char *rel, uint64_t entries, uint64_t bytes);

/** LIMIT_STAGING_ENTRIES or LIMIT_STAGING_SIZE when the counts are past it, else -1. */
int treesum_over(const struct treesum *t);

/**
 * Append to `out` the (at most) `n` directories holding the most entries (`by` is
 * LIMIT_STAGING_ENTRIES) or bytes (LIMIT_STAGING_SIZE), largest first, as
 * "'/var/tmp/x' (300000 entries), '/usr/share' (1.5 MiB)"; names escaped (they come from scripts).
 */
void treesum_top(const struct treesum *t, int by, size_t n, struct buf *out);

/** Free the contents of `t`. */
void treesum_release(struct treesum *t);

#endif
