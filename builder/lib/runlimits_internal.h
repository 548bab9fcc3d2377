/* Limits: functions exported only for the unit tests (and test drivers); not part of the contract. */
#ifndef MKI_RUNLIMITS_INTERNAL_H
#define MKI_RUNLIMITS_INTERNAL_H

#include "runlimits.h"

/** The limit called `name`, or -1. */
int runlimits_find(const char *name);

/** The limit's name as --limit takes it ("deb-data"). */
const char *runlimits_name(enum limit_id id);

/** Parse VALUE for limit `id` into `*out` (>= 1). 0 or -MKI_E_USAGE; nothing logged. */
int runlimits_parse_value(enum limit_id id, const char *s, uint64_t *out);

#endif
