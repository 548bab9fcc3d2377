/* Sources: the recipe's apt sources, the host's apt configuration, or --source overrides. */
#ifndef MKI_SOURCES_H
#define MKI_SOURCES_H

#include <stddef.h>

#include "lib/settings.h"
#include "lib/str.h"
#include "recipe/recipe.h"

struct source {
	char *uri;              /* no trailing '/' */
	char *suite;
	struct strv components;
	struct strv archs;      /* the recipe architectures fetched from this source */
	char *keyring;          /* absolute path of a binary keyring; NULL only when trusted */
	int trusted;
	int from_host;          /* an architecture its Release lacks is skipped with a warning, as apt
				   does (the host's sources were not written for this recipe) */
	char *origin;           /* for messages: "recipes/x.cfg:12", "/etc/apt/sources.list:3", "--source" */
};

struct sources {
	struct source *v;
	size_t n;
};

/**
 * Build the source list: --source overrides (st->sources) if any, else the recipe's sources, with
 * "host" entries expanded from the apt root st->apt_root (sources.list, sources.list.d/ *.list
 * one-line and *.sources deb822). Host suites named after the host's codename (from os-release
 * beside the apt root, e.g. /etc/os-release), like "bookworm-updates", are rewritten to the
 * recipe's suite.
 * Armored keyrings (and inline Signed-By keys) are converted to binary keyrings in st->work_dir.
 * Logs "WHERE: what is wrong" and returns -MKI_E_SOURCE on malformed input.
 */
int sources_load(struct sources *out, const struct recipe *r, const struct settings *st);
/**
 * The host's own apt sources for `arch` alone, from where native tools' twins may come (accel.h):
 * as a recipe's "host" entry in the recipe's suite, but only entries with a key (trusted=yes ones
 * are left out, said at info level). An apt root offering none gives an empty list, not an error.
 */
int sources_load_twins(struct sources *out, const struct recipe *r, const struct settings *st,
		       const char *arch);
void sources_release(struct sources *s);

#endif
