/*
 * Safety limits on what a repository or a package may make us download, hold, decompress or
 * unpack. Every limit has a default generous for real Debian archives (see mkimage(7), LIMITS)
 * and can be changed at run time with `--limit NAME=VALUE`.
 *
 * A hit limit is a refusal, never a truncation: the stage logs what, where, the limit's name and
 * value and how to raise it, and returns -MKI_E_LIMIT_REPO (index data, exit 3) or
 * -MKI_E_LIMIT_PKG (a package, exit 6).
 *
 * The file is runlimits.h, not limits.h, so that it never shadows the system <limits.h>; the
 * module's names stay limits_* and struct limits.
 */
#ifndef MKI_RUNLIMITS_H
#define MKI_RUNLIMITS_H

#include <stdint.h>

#include "str.h"

enum limit_id {
	LIMIT_RELEASE_SIZE,   /* InRelease / Release / Release.gpg: any download of unknown size */
	LIMIT_INDEX_SIZE,     /* one Packages file as downloaded (its Release-declared size) */
	LIMIT_INDEX_UNPACKED, /* one Packages file decompressed */
	LIMIT_LINE,           /* one line of a Packages, Release or control file */
	LIMIT_STANZA,         /* one stanza */
	LIMIT_FIELDS,         /* fields in one stanza */
	LIMIT_RELATIONS,      /* entries of one relationship field (Depends, Provides...) */
	LIMIT_DEB_SIZE,       /* one .deb as its index declares it */
	LIMIT_DEB_CONTROL,    /* all control.tar members of one .deb */
	LIMIT_DEB_DATA,       /* bytes unpacked from one .deb's data.tar */
	LIMIT_DEB_ENTRIES,    /* entries in one .deb's data.tar */
	LIMIT_STAGING_SIZE,   /* bytes unpacked, then allocated in the tree after scripts */
	LIMIT_STAGING_ENTRIES,/* entries unpacked, then in the tree after scripts */
	LIMIT_BOOT_SIZE,      /* boot files exported beside the image, holes included */
	LIMIT_XZ_MEMORY,      /* memory of one xz or lzma decoder (its dictionary) */
	LIMIT_PROCESSES,      /* processes one build step (script, hook) may run at once */
	LIMIT_MEMORY,         /* memory one build step holds: resident, tmpfs, SysV shm */
	LIMIT_DISK_SIZE,      /* a whole disk image (recipe section `disk`), holes included */
	LIMIT_LOG_SIZE,       /* the build log NAME.log (then it says so and stops) */
	LIMIT_N
};

/* A value of 0 (a zero-initialised struct) stands for the default: see runlimits_get(). */
struct limits {
	uint64_t v[LIMIT_N];
};

/** Every limit at its default. */
void runlimits_init(struct limits *l);

/** The value in force: `l->v[id]`, or the default when `l` is NULL or the value is 0. */
uint64_t runlimits_get(const struct limits *l, enum limit_id id);

/**
 * Apply one `--limit NAME=VALUE`. Sizes take a plain number of bytes or a K, M, G or T suffix
 * (powers of 1024, optionally followed by "B" or "iB"); counts take a plain number. Returns 0, or
 * -MKI_E_USAGE after logging what is wrong (an unknown name gets a "did you mean").
 */
int runlimits_set(struct limits *l, const char *spec);

/**
 * A size as --limit takes it (a number of bytes >= 1, or with a K, M, G or T suffix), for other
 * settings given in the same units. 0 or -MKI_E_USAGE; nothing logged.
 */
int runlimits_parse_size(const char *s, uint64_t *out);

/** Append the --help lines (one per limit: name, default, what it bounds) to `out`. */
void runlimits_help(struct buf *out);

/** Text small enough to live on the stack, returned by value (usable from any thread). */
struct limit_text {
	char s[160];
};

/** `v` as --limit would take it for `id`: "64M", "1G", "1536K", "12345" (bytes), "10000". */
struct limit_text runlimits_format(enum limit_id id, uint64_t v);

/**
 * The end of a refusal message: "limit 'deb-data' is 32G; raise it with --limit deb-data=SIZE
 * if the source is trusted", with the value in force for `l`.
 */
struct limit_text runlimits_hint(const struct limits *l, enum limit_id id);

#endif
