/*
 * The block map beside a disk image (NAME.bmap), in bmap-tools' format 2.0: which 4 KiB blocks
 * of the image hold data, each range with its SHA-256, so that `bmaptool copy` writes only those
 * to the card or eMMC and checks what it wrote. The image writers leave holes where nothing was
 * written; the map is what SEEK_DATA/SEEK_HOLE report, less the extents allocated but never
 * written (fallocate, libext2fs's zeroing: they read as zeros, and SEEK_DATA's answer for them
 * depends on the page cache), so the same image file on any Linux file system that reports holes
 * (ext4, xfs, btrfs, tmpfs) gives the same map, byte for byte. A flashed device keeps what it
 * held in every block not mapped: zeros it must read are written as data, never punched or
 * fallocated.
 */
#ifndef MKI_BMAP_H
#define MKI_BMAP_H

#include "lib/sparsehash.h"

/* bmap-tools' block size on every common file system; the map's unit whatever the host's is. */
#define BMAP_BLOCK_SIZE SPARSEHASH_BLOCK

/**
 * Write the block map of the finished image file `image` to `bmap_path`: through a temporary
 * file beside it (fsync, rename), removed on failure. The ranges and their sums are `known`'s
 * map (borrowed; from sparsehash_file() with want_map over the image's bytes, when whoever wrote
 * the image hashed it already: its data is not read again), else computed now from the image
 * (which SIGINT/SIGTERM interrupt). Returns 0; -MKI_E_IMAGE, logged, when the image cannot be
 * read (missing, not a regular file, empty, changed while read, not the size `known` hashed) or
 * the map cannot be written; -MKI_E_INTERRUPTED when interrupted (nothing written).
 */
int bmap_write(const char *image, const char *bmap_path, const struct sparsehash *known);

#endif
