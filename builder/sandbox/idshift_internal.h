/* idshift: functions exported only for the unit tests; not part of the contract. */
#ifndef MKI_IDSHIFT_INTERNAL_H
#define MKI_IDSHIFT_INTERNAL_H

#include "idshift.h"

/** idshift_tree_uid() and idshift_inside_uid() for a given state; `gid`: the gid range. */
unsigned long idshift_shift_to_tree(const struct sandbox_info *si, unsigned long id, int gid);
long idshift_shift_to_inside(const struct sandbox_info *si, unsigned long id, int gid);

#endif
