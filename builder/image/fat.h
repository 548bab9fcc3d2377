/*
 * The FAT format (ESP, boot partitions): a subtree of the image's tree as a FAT12, FAT16 or
 * FAT32 filesystem (fatfs.h) with long names (fatdir.h), written into a sink - a whole file
 * or a disk's partition - without mounts, loop devices or mkfs.fat. Same tree and parameters,
 * same bytes: every timestamp comes from the tree's clamped mtimes or its epoch, the volume id
 * from the caller, the short names from the sorted names.
 *
 * What FAT cannot hold is an error naming the path (-MKI_E_IMAGE): a symlink, device, FIFO or
 * socket, a name with a character FAT refuses or two names equal ignoring case. Hard links
 * become copies; owners, modes and xattrs are dropped.
 */
#ifndef MKI_FAT_H
#define MKI_FAT_H

#include <stdint.h>

#include "imgtree.h"
#include "params.h"
#include "sink.h"

struct fat_params {
	const char *subtree; /* "" the whole tree, or a directory ("boot/efi"): its contents
				become the filesystem's root */
	const char *label;   /* volume label, up to 11 characters (stored upper-case); NULL or ""
				for none */
	uint32_t volume_id;  /* the caller derives it reproducibly */
	uint64_t size;       /* bytes; 0: the estimate (contents + a small margin, whole MiB) */
};

/**
 * The size fat_write would give the filesystem: fp->size, or the smallest whole number of MiB
 * that holds the subtree with a margin. Checks the subtree as fat_write does (logged errors:
 * -MKI_E_IMAGE, a negative errno).
 */
int fat_estimate(const struct imgtree *t, const struct fat_params *fp, uint64_t *bytes);
/**
 * Write the filesystem of fp->subtree into `k` (begun here; committed or dropped by its owner).
 * A sink region's offset becomes the boot sector's hidden sectors. Returns 0, a logged
 * -MKI_E_IMAGE, -MKI_E_NOSPACE (the tree does not fit fp->size: the message says the size it
 * needs), -MKI_E_INTERRUPTED or a negative errno.
 */
int fat_write(const struct imgtree *t, const struct fat_params *fp, struct sink *k);
/**
 * fat_estimate and fat_write behind format.h's interface, for a partition: the whole tree `t`
 * (the disk writer's view of the partition), labelled p->im->label, sized p->im->size (0: the
 * estimate), numbered p->volume_id.
 */
int fat_format_estimate(const struct imgtree *t, const struct image_params *p, uint64_t *bytes);
int fat_format_write(const struct imgtree *t, const struct image_params *p, struct sink *k);

#endif
