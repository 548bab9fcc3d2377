/* Tar output: the image's tree as a pax archive, with the same determinism rules as ext4. */
#ifndef MKI_TAROUT_H
#define MKI_TAROUT_H

#include "imgtree.h"

/**
 * Write `t` (borrowed) as a pax tar archive to p->output (temp name beside it, then rename).
 * Entries in sorted path order, numeric owners only, mtimes clamped, no atime/ctime, xattrs as
 * pax SCHILY.xattr records; a hard-link group's data goes with its sorted-first name and the
 * other names are hard links to it. Returns 0, -MKI_E_IMAGE (logged) or a negative errno.
 */
int tarout_write(const struct imgtree *t, const struct image_params *p);

#endif
