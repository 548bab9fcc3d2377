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

#include "lib/settings.h"
#include "recipe/recipe.h"
#include "sources.h"
#include "store/fetch_item.h"

struct index_release {
	const struct source *src; /* borrowed from the sources list */
	char inrelease_sha256[65];/* of the signed file as fetched (InRelease, or Release) */
	char *date;               /* Date: of the Release */
	char *valid_until;        /* NULL if none */
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

/**
 * Fetch and verify every source's indexes. Errors are logged with the URL and what to do:
 * -MKI_E_SIGNATURE (unsigned, unknown key, bad signature), -MKI_E_EXPIRED (past Valid-Until and
 * not st->ignore_valid_until), -MKI_E_SOURCE (suite, component or architecture not in the
 * Release), -MKI_E_PARSE (malformed Release), -MKI_E_INTEGRITY, -MKI_E_NETWORK, -MKI_E_NOTFOUND,
 * -MKI_E_OFFLINE (st->offline and not cached). `out` belongs to the caller (indexes_release).
 * Every download goes through `download` (the pipeline's fetch stage passes fetch_items): the stage never calls the
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

/** Parse an RFC 2822 date of a Release file ("Sat, 10 Jun 2023 08:46:48 UTC") into `*t`. */
int indexes_parse_date(const char *s, int64_t *t);
/**
 * The newest signed Release Date of `ix` (0 without one): every timestamp's source when
 * SOURCE_DATE_EPOCH is not set, so the same indexes (the same lock) give the same image.
 */
int64_t indexes_newest_date(const struct indexes *ix);

#endif
