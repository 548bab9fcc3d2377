/*
 * The partition table of a disk image, written with libfdisk (util-linux) onto the image file
 * itself: GPT or MBR, every identifier given (disk GUID or MBR id, partition GUIDs), so the same
 * table gives the same bytes - libfdisk's random ids never survive. Only this module includes
 * libfdisk.
 */
#ifndef MKI_PARTTABLE_H
#define MKI_PARTTABLE_H

#include <stddef.h>
#include <stdint.h>

struct parttable_entry {
	const char *name;      /* GPT partition name */
	const char *type_guid; /* GPT: the type GUID */
	unsigned mbr_type;     /* MBR: the system id */
	const char *uuid;      /* GPT: the partition's unique GUID */
	uint64_t offset, size; /* bytes, multiples of 512 */
	int legacy_boot;       /* GPT attribute 2; MBR: the active flag */
	int read_only;         /* GPT attribute 60 */
};

struct parttable {
	int mbr;                  /* 0: GPT, 1: MBR */
	const char *disk_id;      /* GPT: the disk GUID; MBR: the id as 8 hex digits */
	uint32_t gpt_entries;     /* the GPT entry array's length (128 unless shortened) */
	const struct parttable_entry *v;
	size_t n;
};

/**
 * Write table `t` onto `fd` (borrowed, read-write, the disk's full size already), which
 * messages call `name`. The partitions' contents are never touched: only the table's sectors
 * (and on GPT the backup at the end). Returns 0 or -MKI_E_IMAGE, logged with libfdisk's reason.
 */
int parttable_write(int fd, const char *name, const struct parttable *t);

#endif
