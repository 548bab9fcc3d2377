/* Tar output: the image's tree as a pax archive, with the same determinism rules as ext4. */
#ifndef MKI_TAROUT_H
#define MKI_TAROUT_H

#include <stdint.h>

#include "imgtree.h"
#include "sink.h"

/** An upper bound of the archive's size for `t`, in bytes (sparse files count whole). */
int tarout_estimate(const struct imgtree *t, const struct image_params *p, uint64_t *bytes);
/**
 * Write `t` (borrowed) as a pax tar archive into `k` (begun here; committed or dropped by its
 * owner); in a region, the archive must fit its length.
 * Entries in sorted path order, numeric owners only, mtimes clamped, no atime/ctime, xattrs as
 * pax SCHILY.xattr records; a hard-link group's data goes with its sorted-first name and the
 * other names are hard links to it. Returns 0, -MKI_E_IMAGE (logged), -MKI_E_NOSPACE (logged)
 * when the archive outgrows its region, or a negative errno.
 */
int tarout_write(const struct imgtree *t, const struct image_params *p, struct sink *k);

/**
 * Unpack the tar archive `tar` (one tarout_write made) as the directory `dir`, which must not
 * exist: into DIR.tmp-PID, renamed when whole, removed on failure. Owners are whoever runs
 * mkimage; modes (less the set-user-id and set-group-id bits) and times as archived; no name
 * climbs out of the directory. 0, -MKI_E_IMAGE
 * (logged) or -MKI_E_INTERRUPTED.
 */
int tarout_extract(const char *tar, const char *dir);

#endif
