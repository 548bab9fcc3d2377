/*
 * The multiarch lint's ABI check: a package whose control data names a library by the name it
 * had before Debian's 64-bit time_t transition, on an architecture where the plan holds the new
 * name and the new name does not provide the old one (the resolver's plan->abi_renames).
 */
#ifndef MKI_ABILINT_H
#define MKI_ABILINT_H

#include <stddef.h>

#include "debian/plan.h"
#include "pkg.h"

/**
 * Warn once per package and old name for each of the `n` unpacked packages `pkgs` (their
 * control data and plan entries, borrowed) whose Pre-Depends or Depends, in any alternative,
 * name an old library name `p` records for the package's architecture (the primary one for
 * Architecture: all). Returns the number of warnings.
 */
unsigned abilint_warn(const struct plan *p, const struct pkg *pkgs, size_t n);

#endif
