/*
 * The multiarch lint's ABI check: a package whose control data names a library by the name it
 * had before Debian's 64-bit time_t transition, on an architecture where the plan holds the new
 * name, which does not provide the old one, and meets the dependency only through the old name
 * (the resolver's plan->abi_renames and their users).
 */
#ifndef MKI_ABILINT_H
#define MKI_ABILINT_H

#include <stddef.h>

#include "debian/plan.h"
#include "pkg.h"

/**
 * Warn once per package and old name for each of the `n` unpacked packages `pkgs` (their
 * control data and plan entries, borrowed) that `p` records as a user of a rename and whose
 * Pre-Depends or Depends name that old name. Returns the number of warnings.
 */
unsigned abilint_warn(const struct plan *p, const struct pkg *pkgs, size_t n);

#endif
