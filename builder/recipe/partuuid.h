/*
 * The identifiers of a disk and its partitions: the disk GUID (or MBR id), each partition's
 * unique GUID (what root=PARTUUID= names) and 32-bit ids such as a FAT volume id. They derive
 * from the recipe's name and SOURCE_DATE_EPOCH, as systemd-repart derives them from its seed:
 * the boot configuration written into the tree and the table written later agree, and two
 * builds of one recipe give the same disk.
 */
#ifndef MKI_PARTUUID_H
#define MKI_PARTUUID_H

#include <stddef.h>
#include <stdint.h>

#include "recipe.h"

/** A version 4 UUID for `what` ("disk", "partition:root", ...), as lower-case text. */
void partuuid_derive(const struct recipe *r, int64_t sde, const char *what, char out[37]);
/** 32 bits for `what` ("mbr", "fat:boot", ...). */
uint32_t partuuid_u32(const struct recipe *r, int64_t sde, const char *what);
/** The disk's GUID; on MBR its id as 8 hex digits. */
void partuuid_disk(const struct recipe *r, int64_t sde, char out[37]);
/**
 * What PARTUUID= names for partition `i` of r->disk (in_table only): its unique GUID on GPT,
 * "DISKID-NN" on MBR (NN its number in the table, as the kernel names it).
 */
void partuuid_partition(const struct recipe *r, int64_t sde, size_t i, char out[37]);
/**
 * The dm-verity salt and superblock UUID of the hash tree of partition `name` (the data
 * partition's): the root hash of the same bytes is then the same in every build.
 */
void partuuid_verity(const struct recipe *r, int64_t sde, const char *name, uint8_t salt[32],
		     uint8_t uuid[16]);

#endif
