/* Sources: the recipe's apt sources, the host's apt configuration, or --source overrides. */
#ifndef MKI_SOURCES_H
#define MKI_SOURCES_H

#include <stddef.h>

#include "recipe.h"
#include "settings.h"
#include "str.h"

struct source {
	char *uri;              /* no trailing '/' */
	char *suite;
	struct strv components;
	struct strv archs;      /* the recipe architectures fetched from this source */
	char *keyring;          /* absolute path; NULL only when trusted */
	int trusted;
	char *origin;           /* for messages: "recipes/x.cfg:12", "/etc/apt/sources.list:3", "--source" */
};

struct sources {
	struct source *v;
	size_t n;
};

/**
 * Build the source list: --source overrides (st->sources) if any, else the recipe's sources, with
 * "host" entries expanded from /etc/apt (sources.list, sources.list.d/ *.list and *.sources).
 * Logs and returns -MKI_E_SOURCE on malformed input.
 */
int sources_load(struct sources *out, const struct recipe *r, const struct settings *st);
void sources_release(struct sources *s);

#endif
