/*
 * The arithmetic of a disk's layout (recipe section `disk`): where each partition starts and
 * how long it is, the disk's size, the GPT entry array's length, and every overlap refused.
 * Pure: the writer (disk.h) hands in what each partition's contents need, partition by
 * partition in disk order, since an ext4 filesystem of size "auto" learns its size only when
 * written. Every message names the partition and the sizes.
 */
#ifndef MKI_DISKLAYOUT_H
#define MKI_DISKLAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/runlimits.h"
#include "recipe/recipe.h"

#define DISKLAYOUT_MIB (1024 * 1024ull)
#define DISKLAYOUT_SECTOR 512u
#define DISKLAYOUT_GPT_ENTRIES 128u    /* the entry array's usual length: 16 KiB */
#define DISKLAYOUT_GPT_ENTRY_SIZE 128u

struct disklayout_part {
	uint64_t offset; /* first byte */
	uint64_t size;   /* bytes */
};

/** `bytes` rounded up to a whole MiB. */
uint64_t disklayout_align(uint64_t bytes);
/**
 * Where in-table partitions may end: a fixed disk's size less the backup GPT's last MiB (the
 * whole disk on MBR); 0 when the disk's size is auto (no bound but `limit`).
 */
uint64_t disklayout_usable_end(const struct recipe_disk *d);
/**
 * Place partition `i` of `d`: after `cursor` (the end of the one before; 0 for the first, which
 * starts at 1 MiB), 1 MiB aligned, or at its fixed offset; its size fixed, the rest of the disk
 * (grow), or `need` - what its contents take - rounded up to 1 MiB (at least its min_size, at
 * least 1 MiB; a region outside the table takes `need` exactly). Returns 0, or logs and returns
 * -MKI_E_NOSPACE when `need` exceeds a fixed size or the partition ends past the disk's size.
 */
int disklayout_place(const struct recipe_disk *d, size_t i, uint64_t cursor, uint64_t need,
		     struct disklayout_part *out);
/**
 * The GPT entry array's length: 128, or fewer so that it ends before a region outside the table
 * that starts below it (Allwinner's SPL at 8 KiB). 0 when even the table's own entries do not
 * fit there (disklayout_finish says so).
 */
uint32_t disklayout_gpt_entries(const struct recipe_disk *d, const struct disklayout_part *v);
/**
 * With every partition placed (`v`, one per partition of `d`): the disk's size (fixed, or the
 * partitions' end rounded to 1 MiB plus the backup GPT's MiB), checked against `lim`'s disk-size
 * (-MKI_E_HOOK, the limits' exit status, logged naming the limit), and no region
 * overlapping another, the table or the backup table (-MKI_E_IMAGE, logged).
 */
int disklayout_finish(const struct recipe_disk *d, const struct disklayout_part *v,
		      const struct limits *lim, uint64_t *disk_size);

#endif
