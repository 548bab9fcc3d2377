/* Imgtree: functions exported only for the unit tests (and test drivers); not part of the contract. */
#ifndef MKI_IMGTREE_INTERNAL_H
#define MKI_IMGTREE_INTERNAL_H

#include "imgtree.h"

/** Index of `path` or -1. */
long imgtree_find(const struct imgtree *t, const char *path);

#endif
