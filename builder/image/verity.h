/*
 * dm-verity hash trees (the kernel's Documentation/admin-guide/device-mapper/verity.rst), as
 * `veritysetup format` writes them with 4096-byte data and hash blocks and sha256: a version 1
 * superblock in the first hash block, then the tree's levels from the top down, each digest
 * sha256(salt || block), 128 to a hash block. Written from data already on disk (a partition
 * of the disk's temporary) into a sink of its own; byte for byte what veritysetup writes for
 * the same salt and UUID, so the root hash is reproducible.
 */
#ifndef MKI_VERITY_H
#define MKI_VERITY_H

#include <stdint.h>

#include "sink.h"

#define VERITY_BLOCK 4096u

struct verity_params {
	uint8_t salt[32];
	uint8_t uuid[16];  /* the superblock's UUID (veritysetup --uuid) */
	const char *name;  /* the data partition's name, for messages */
	unsigned threads;  /* workers hashing the data (0: one per CPU) */
	int no_superblock; /* the tree alone, as RAUC's verity bundles append it (`uuid` unused) */
};

/**
 * The bytes of the hash device for `data_bytes` of data (rounded up to whole blocks): the
 * superblock's block and every level of the tree.
 */
uint64_t verity_hash_size(uint64_t data_bytes);
/** verity_hash_size, or without `superblock` the tree's bytes alone (vp->no_superblock). */
uint64_t verity_tree_size(uint64_t data_bytes, int superblock);
/**
 * Hash `data_bytes` of `data_fd` from `data_off` (a whole, non-zero number of 4096-byte blocks)
 * and write the superblock and tree at the start of `hash` (which must hold verity_hash_size
 * bytes; holes in the data read as zeros); the root hash in lowercase hex into `root_hex`.
 * Returns 0, or -MKI_E_IMAGE (data not a whole number of blocks, a short or failed read or
 * write), -MKI_E_INTERRUPTED; logged naming vp->name.
 */
int verity_write(int data_fd, uint64_t data_off, uint64_t data_bytes,
		 const struct verity_params *vp, struct sink *hash, char root_hex[65]);

#endif
