/*
 * The disk writer (recipe section `disk`): every partition written straight into its region of
 * one sparse temporary file beside the output (ext4 by the ext4 format's writer, vfat by the FAT
 * writer, a file copied raw with its holes, a dm-verity hash tree (verity.h) hashed from its data
 * partition's bytes already written, an empty partition left zero), the partition table
 * last (parttable.h), then fsync and rename. Layout arithmetic in disklayout.h.
 */
#ifndef MKI_DISK_H
#define MKI_DISK_H

#include "lib/runlimits.h"
#include "lib/sparsehash.h"
#include "lib/str.h"
#include "params.h"
#include "recipe/recipe.h"
#include "tree/staging.h"

struct disk_params {
	const struct recipe *r;
	const struct image_params *ip; /* the root's: image section, seed, epoch (never -1) */
	const char *output;            /* the disk's final path */
	const char *root_output;       /* root_image: the root partition's bytes here; or NULL */
	const char *slot_output;       /* the same for an update bundle's slot image (unreported);
					  a verified root: its squashfs alone, not the whole slot */
	const char *bmap;              /* what the report names as the bmap, or NULL */
	const char *compressed;        /* what the report names as the compressed disk, or NULL */
	const struct limits *lim;      /* disk-size */
	char *root_hash;               /* 65 bytes or NULL: the root's dm-verity root hash, or "" */
	/*
	 * A verified root's boot entry carries its root hash: the tree path the entry lives under
	 * ("boot/extlinux"), or NULL. The partition holding it is placed in its turn and written
	 * last, after entry(entry_ctx, ROOTHASH) has written the entry into the stage.
	 */
	const char *entry_path;
	int (*entry)(void *entry_ctx, const char *roothash);
	void *entry_ctx;
	/*
	 * Or NULL. Receives the whole disk's sha256 (->whole) and, with `bmap`, its block map
	 * (->map, freed by sparsehash_release), from the pass that hashes the partitions: the
	 * disk's data is read once for all of them, its holes never.
	 */
	struct sparsehash *digests;
	const char *slot_hash_output;  /* or NULL: a verified root's hash tree, for the bundle */
	const char *slot_boot_output;  /* or NULL: the root slot's boot partition, for the bundle */
};

/**
 * Check, before configuring, that every `contents = "file:/..."` of `r`'s disk is a regular file
 * of the tree `s` (borrowed). 0, or -MKI_E_IMAGE logged naming the file and the partition.
 */
int disk_check_files(const struct staging *s, const struct recipe *r);

/**
 * Write the disk of dp->r from `s` (borrowed) at dp->output, and the root partition's bytes at
 * dp->root_output when set; append the report's "disk" member to `report` (a JSON object member,
 * ending with ",\n"). Nothing is left at either path on failure or interruption (a file that was
 * there stays as it was). dp->root_hash, when set, receives the root hash of the root partition's
 * dm-verity tree, or else of the first partition hashed into a "root-verity" partition, or "".
 * Returns 0, -MKI_E_NOSPACE (a tree larger than its partition, the
 * partitions beyond the disk's size), -MKI_E_HOOK (beyond --limit disk-size), -MKI_E_IMAGE,
 * -MKI_E_INTERRUPTED; every failure logged.
 */
int disk_write(const struct staging *s, const struct disk_params *dp, struct buf *report);

#endif
