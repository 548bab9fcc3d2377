/*
 * Where native tools' twins come from (accel.h): the recipe's own repositories when they carry
 * the host's architecture (as Debian's archive does), else the host's own apt sources - a company
 * mirror often carries only the archs it ships. Twins only make configuring faster, and
 * emulation is exact: whatever goes wrong with the host's sources costs speed, never the build.
 * Part of the pipeline's wiring: it runs the sources and indexes stages for the host's architecture.
 */
#ifndef MKI_TWINSRC_H
#define MKI_TWINSRC_H

#include "debian/pkgindex.h"
#include "debian/plan.h"
#include "indexes.h"
#include "lib/settings.h"
#include "recipe/recipe.h"
#include "store/fetch_item.h"

/**
 * accel_select()'s signature (configure/accel.h): choose the twins of `p` from the Packages
 * indexes `v`. The fetch stage passes it in, since the repo family does not call into configure.
 */
typedef int twinsrc_pick_fn(const struct pkgindex *v, size_t n, const struct plan *p,
			    struct plan *twins, const char *from);

/**
 * The twins of plan `p`, chosen by `pick` (accel_select): from `ix` when it has
 * host-architecture files, else (unless st->no_host_twins or the recipe's host_twins = false)
 * from the host's apt sources under
 * st->apt_root, loaded for the host's architecture alone and verified with their own keys as
 * every index is. Nothing is selected
 * when no architecture is emulated or native tools are off. Host sources that are unreachable,
 * unsigned, refused or without the plan's versions are one warning and no twins (offline and not
 * cached: one info line). `twins` belongs to the caller (plan_release). Returns 0, or a negative
 * code when `ix` cannot be read or on -MKI_E_INTERRUPTED.
 */
int twinsrc_select(struct plan *twins, const struct indexes *ix, const struct plan *p,
		   const struct recipe *r, const struct settings *st, fetch_items_fn *download,
		   twinsrc_pick_fn *pick);

/**
 * Where twinsrc_select() takes the twins from for indexes `ix`: "recipe" when they carry the
 * host's architecture, else "host" (its apt sources): the lock's and the report's record.
 */
const char *twinsrc_origin(const struct indexes *ix);

#endif
