/*
 * Resolve, order: the install order of a plan. Pure (no libsolv, no I/O), so it is tested on
 * plans built by hand (tests/unit/test_resolve_order.c).
 */
#ifndef MKI_RESOLVE_ORDER_H
#define MKI_RESOLVE_ORDER_H

#include "debian/plan.h"

/**
 * Put `pl` in install order and renumber every entry's depends. Reads each entry's name, arch,
 * essential, pre_depended, depends and n_pre_depends (the first n_pre_depends depends are
 * Pre-Depends). Dependencies come first: the components of the depends graph in topological
 * order, ties broken by the smallest (tier, name, arch), tier 0 being Essential packages,
 * Pre-Depends targets and everything they depend on; inside a dependency cycle a member whose
 * Pre-Depends are all placed goes first, then the one with the fewest unplaced dependencies.
 */
void resolve_order(struct plan *pl);

#endif
