/*
 * The lock file: a stable, diff-friendly text record of the exact package set of a recipe.
 *
 *   # mkimage lock file ...            comments and blank lines are ignored
 *   format: 1
 *   recipe: SHA256                     digest of the normalized recipe
 *   architectures: armhf armel         primary first
 *   source: URI SUITE sha256=HEX components=C,C keys=FPR,FPR [index=USE] date=DATE
 *                                      one per repository release: InRelease digest, components,
 *                                      primary-key fingerprints of its keyring (none: trusted),
 *                                      Date (components= and keys= absent in older locks);
 *                                      index=stale: built from the suite's last verified
 *                                      Release (its digest and Date), the mirror mid-sync;
 *                                      index=omitted: built without the suite (--allow-stale)
 *   package: NAME:ARCH=VERSION sha256=HEX size=BYTES [source=SRC]   sorted by NAME, then ARCH;
 *                                      source= when the source package is not NAME
 *   local: NAME:ARCH=VERSION sha256=HEX size=BYTES     a local .deb from the recipe
 *   field: KEY SHA256                  one per key of the normalized recipe (recipe_field_digests):
 *                                      --locked names the keys that changed (absent in older locks)
 *   twins: FROM hosts=H,H packages=N bytes=B     where native tools' twins came from (a build's
 *                                      lock only): "recipe" or "host" (its apt sources), the
 *                                      servers as host[:port], how many, how large
 *   twin: NAME:ARCH=VERSION sha256=HEX size=BYTES [source=SRC]   each twin, sorted
 *
 * The twins are a record of where native tools came from, not a pin: --locked picks them again.
 */
#ifndef MKI_LOCKFILE_H
#define MKI_LOCKFILE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/str.h"

#define LOCKFILE_FORMAT 1

struct lock_pkg {
	char *name, *arch, *version;
	char sha256[65];
	uint64_t size;
	int local;
	char *source; /* source package name, NULL when it is `name` */
};

struct lock_source {
	char *uri, *suite, *date;
	char sha256[65];
	struct strv components, keys; /* empty when the lock predates them / trusted source */
	char *index;                  /* "stale" or "omitted" (indexes.h); NULL: as served */
};

struct lock_twins {
	char *from;        /* "recipe" or "host"; NULL: no twins recorded */
	struct strv hosts; /* host[:port] the twins were downloaded from */
	uint64_t packages, bytes;
};

struct lockfile {
	char recipe[65];
	struct strv archs;
	struct strv fields; /* "KEY SHA256" (recipe_field_digests); empty in older locks */
	struct lock_twins twins_info;
	struct lock_pkg *twins;
	size_t n_twins, alloc_twins;
	struct lock_source *sources;
	size_t n_sources, alloc_sources;
	struct lock_pkg *pkgs;
	size_t n_pkgs, alloc_pkgs;
};

/**
 * 1 when `s` may be a field of a lock line: printable ASCII, and no space unless `spaces` (only a
 * source's date holds spaces). A newline or ESC in a field would forge a line of the lock or a
 * terminal command when it is shown: the writer refuses them, the reader rejects them.
 */
int lockfile_field_ok(const char *s, int spaces);
/** Write `lk` to `file` atomically (temp file in the same directory, fsync, rename); packages are
 * written sorted. 0 or a negative errno, logged with the path; -MKI_E_PARSE (logged, nothing
 * written) when a field fails lockfile_field_ok(): it came from a malformed index. */
int lockfile_write(struct lockfile *lk, const char *file);
/** Parse `file`; packages come out sorted by name, architecture, version. Errors are logged as
 * "FILE:LINE: what" and return -MKI_E_LOCK (-errno when the file cannot be read); a line holding
 * a control character (other than its final newline) is malformed. */
int lockfile_read(struct lockfile *lk, const char *file);
/** Free the contents of `lk`. */
void lockfile_release(struct lockfile *lk);

#endif
