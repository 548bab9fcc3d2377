/*
 * A RAUC update bundle in RAUC's `verity` format, written without `rauc bundle`: a squashfs
 * holding the manifest `manifest.raucm` (without the verity fields) and the slot image (with a
 * verified root, its children's too: the hash tree, the boot partition); the dm-verity hash
 * tree of that squashfs right after it (no superblock, sha256, 4096-byte blocks, as RAUC's
 * verity_hash.c lays it out); the CMS signature holding the manifest with the tree's root hash,
 * salt and size (raucsign.h); the signature's size as 8 bytes big-endian. The salt derives from
 * the slot images' sha256s and the epoch, the squashfs is byte-reproducible and the signature
 * has no signing time: the same build gives the same bytes.
 */
#ifndef MKI_RAUC_H
#define MKI_RAUC_H

#include <stdint.h>

#include "recipe/recipe.h"

/* The slot class the manifest's image targets: what the device's system.conf calls it. */
#define RAUC_SLOT_CLASS "rootfs"
#define RAUC_MAX_IMAGES 4

struct rauc_params {
	const struct recipe_update *u; /* compatible, version, the keys (borrowed) */
	const char *dir;               /* a directory holding the slot image, and nothing else */
	const char *image;             /* the slot image's name in `dir`: "rootfs.ext4" */
	const char *output;            /* NAME.raucb, written atomically; with u->sign_offline,
					  NAME.raucb.unsigned: the payload and its tree alone */
	const char *manifest;          /* u->sign_offline: NAME.raucb.manifest, what to sign */
	int64_t source_date_epoch;     /* every timestamp (>= 0) */
	/*
	 * More slot images in `dir`, for child slots of the root's (a verified root's hash tree
	 * and boot partition): their slot classes and names, RAUC_MAX_IMAGES - 1 at most; the
	 * first image is `image`, for RAUC_SLOT_CLASS.
	 */
	const char *const *child_class;
	const char *const *child_image;
	size_t n_children;
};

struct rauc_bundle {
	char sha256[65];               /* of the whole bundle */
	uint64_t bytes;
	char verity_hash[65];          /* the payload's dm-verity root hash */
	uint64_t payload_bytes;        /* the squashfs, padded to 4096 */
	uint64_t tree_bytes;           /* its hash tree */
	uint64_t signature_bytes;      /* the CMS */
};

/**
 * Write the bundle of p->dir/p->image to p->output (p->dir gains manifest.raucm); with
 * p->u->sign_offline, the bundle less its signature and size to p->output and the manifest
 * the signature must hold to p->manifest (mkimage(7), Updates: the offline signing). 0, or a
 * logged -MKI_E_RECIPE (the keys: raucsign.h), -MKI_E_IMAGE, -MKI_E_INTERRUPTED; nothing is
 * left at the output on failure, and an older bundle there stays as it was.
 */
int rauc_write(const struct rauc_params *p, struct rauc_bundle *out);

#endif
