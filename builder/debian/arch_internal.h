/* Arch: functions exported only for the unit tests (and test drivers); not part of the contract. */
#ifndef MKI_ARCH_INTERNAL_H
#define MKI_ARCH_INTERNAL_H

#include "arch.h"

/** Look up by multiarch triplet; NULL if unknown. */
const struct arch *arch_by_triplet(const char *triplet);

#endif
