/*
 * The ext4 format: an empty filesystem from mke2fs with fixed options (clean environment, no
 * host config, lazy init on zeroed space), populated in-process with libext2fs in sorted path
 * order (ext4dir.h, ext4file.h, ext4inode.h over ext4fs.h), finished, in a sink (sink.h).
 */
#ifndef MKI_EXT4W_H
#define MKI_EXT4W_H

#include <stdint.h>

#include "imgtree.h"
#include "sink.h"

/** The filesystem size first tried for `t`, in bytes (image.size, or auto's first guess). */
int ext4w_estimate(const struct imgtree *t, const struct image_params *p, uint64_t *bytes);
/** Write the filesystem of `t` into `k` (begun here; committed or dropped by its owner). */
int ext4w_write(const struct imgtree *t, const struct image_params *p, struct sink *k);
/**
 * The bytes of the ext4 filesystem just written at `offset` of `fd` (the file `file`), from its
 * superblock: an "auto" size is settled by the writer, which grows it until the tree fits.
 * 0, or a logged -MKI_E_IMAGE.
 */
int ext4w_size_back(int fd, uint64_t offset, const char *file, uint64_t *bytes);

#endif
