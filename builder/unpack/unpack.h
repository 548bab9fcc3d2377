/* Unpack: verified .debs -> staging tree in canonical multiarch paths + manifest + dpkg database. */
#ifndef MKI_UNPACK_H
#define MKI_UNPACK_H

#include "debian/plan.h"
#include "lib/settings.h"
#include "recipe/recipe.h"
#include "tree/staging.h"

/**
 * Unpack every plan entry (entry->path: a local .deb), in plan order, into a new tree
 * <st->work_dir>/root, as dpkg would (merged-/usr links first when r->merged_usr), write the dpkg
 * database with every package "install ok unpacked", and save the manifest and the multiarch
 * lint beside the tree. The recipe's path filters (pathfilter.h) leave entries out of the tree
 * and the manifest but not out of the package's .list, as dpkg does; they are written to
 * PATHFILTER_DPKG_CFG and what they left out is counted in out->filtered. Decompression runs on
 * up to st->jobs worker threads (at most one per CPU); the result does not depend on thread
 * timing.
 *
 * Ownership and modes from the tar headers are applied where the kernel allows and always
 * recorded in the manifest. Returns 0, -MKI_E_PACKAGE (bad or hostile .deb), -MKI_E_CONFLICT
 * (file clash between packages), -MKI_E_LIMIT_PKG (a --limit hit; a .deb refused for its own
 * limits leaves the cache), -MKI_E_INTERRUPTED or a negative errno; every
 * error is logged once with the package and path. `out` is filled on success and on failure
 * (release it with staging_release(), staging.h).
 */
int unpack_plan(struct staging *out, const struct plan *p, const struct recipe *r,
		const struct settings *st);

#endif
