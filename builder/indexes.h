/* Indexes: InRelease verified with gpgv, Packages files verified against it and decompressed. */
#ifndef MKI_INDEXES_H
#define MKI_INDEXES_H

#include <stddef.h>

#include "recipe.h"
#include "settings.h"
#include "sources.h"

struct index_release {
	const struct source *src; /* borrowed from the sources list */
	char inrelease_sha256[65];
	char *date;               /* Date: of the Release */
	char *valid_until;        /* NULL if none */
};

struct index_file {
	size_t release;  /* index into releases */
	char *component;
	char *arch;      /* a recipe architecture, or "all" */
	char *path;      /* verified, decompressed Packages file (in the cache) */
};

struct indexes {
	struct index_release *releases;
	size_t n_releases;
	struct index_file *files;
	size_t n_files;
};

/** Fetch and verify every source's indexes. Errors are logged with the URL and what to do. */
int indexes_fetch(struct indexes *out, const struct sources *s, const struct recipe *r,
		  const struct settings *st);
void indexes_release(struct indexes *ix);

#endif
