/* Resolve: verified indexes + the recipe's request -> the ordered plan (libsolv, multiarch). */
#ifndef MKI_RESOLVE_H
#define MKI_RESOLVE_H

#include "debian/plan.h"
#include "lib/settings.h"
#include "recipe/recipe.h"
#include "repo/indexes.h"

/** Choose the package set. -MKI_E_RESOLVE with the reasons logged in the user's package names. */
int resolve_plan(struct plan *out, const struct recipe *r, const struct indexes *ix,
		 const struct settings *st);

/**
 * Write the lock file for `p` (atomically), with the recipe's per-key digests; with `twins`
 * (NULL or empty: none) a record of where native tools came from, `twins_from` being "recipe"
 * or "host" (lockfile.h).
 */
int resolve_write_lock(const struct plan *p, const struct recipe *r, const struct indexes *ix,
		       const struct plan *twins, const char *twins_from, const char *file);

#endif
