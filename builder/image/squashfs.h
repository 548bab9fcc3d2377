/*
 * The squashfs format (libsquashfs): a read-only image of the view, every entry as the ext4
 * image has it (owners, modes, mtimes, xattrs, hard links, devices, sparse files), blocks of
 * 128 KiB compressed as the recipe says, padded to a multiple of 4096 bytes (what dm-verity
 * hashes). Byte-reproducible for any number of worker threads.
 */
#ifndef MKI_SQUASHFS_H
#define MKI_SQUASHFS_H

#include <stdint.h>

#include "imgtree.h"
#include "params.h"
#include "sink.h"

/** Bytes the image of `t` takes at most (every block stored uncompressed), rounded to 4096. */
int squashfs_estimate(const struct imgtree *t, const struct image_params *p, uint64_t *bytes);
/**
 * Write the image of `t` into `k` (begun here, committed by its owner), compressed as
 * p->im->compression says, with as many worker threads as the process may run on. 0, a logged
 * -MKI_E_NOSPACE when it outgrows a region, or another logged negative code.
 */
int squashfs_write(const struct imgtree *t, const struct image_params *p, struct sink *k);
/** squashfs_write with `threads` worker threads (libsquashfs runs at least one); same bytes. */
int squashfs_write_threads(const struct imgtree *t, const struct image_params *p, struct sink *k,
			   unsigned threads);
/**
 * The bytes of the squashfs image whose superblock is `sb` (its first 96 bytes): bytes_used
 * padded to 4096. -EINVAL when `sb` is not a squashfs superblock.
 */
int squashfs_size(const uint8_t *sb, uint64_t *bytes);
/**
 * The bytes of the squashfs just written at `offset` of `fd` (the file `file`): squashfs_size of
 * its superblock. 0, or a logged -MKI_E_IMAGE.
 */
int squashfs_size_back(int fd, uint64_t offset, const char *file, uint64_t *bytes);

#endif
