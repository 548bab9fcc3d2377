/*
 * A FAT filesystem's geometry and its reserved region: FAT12, FAT16 or FAT32 chosen from the
 * cluster count as Microsoft's FAT specification defines it, with the cluster size mkfs.fat
 * picks for the size; 512-byte sectors, two FATs, the boot sector, FAT32's FSInfo and backup
 * boot sector, and the FAT entries. Bytes out only: the caller writes them.
 */
#ifndef MKI_FATFS_H
#define MKI_FATFS_H

#include <stddef.h>
#include <stdint.h>

#define FATFS_SECTOR 512u
#define FATFS_MAX_BYTES (0xffffffffull / 32 * 32 * FATFS_SECTOR) /* 32-bit sector count */
#define FATFS_FAT32_FROM ((uint64_t)512 << 20) /* mkfs.fat's size for FAT32, and so ours */
#define FATFS_BACKUP_BOOT 6     /* FAT32: the backup boot sector, then the backup FSInfo */

struct fatfs {
	int bits;               /* 12, 16 or 32 */
	uint32_t sectors;       /* in the filesystem (the size rounded down to 16 KiB) */
	uint32_t spc;           /* sectors per cluster */
	uint32_t reserved;      /* sectors before the first FAT */
	uint32_t fat_sectors;   /* of each of the two FATs */
	uint32_t root_entries;  /* FAT12/16: the fixed root directory's entries; FAT32: 0 */
	uint32_t root_sectors;
	uint32_t data_start;    /* first sector of cluster 2 */
	uint32_t clusters;      /* data clusters: 2 .. clusters + 1 */
	uint32_t cluster_bytes;
};

/**
 * The geometry of a filesystem of `bytes` whose root directory needs `root_entries` entries
 * (FAT12/16 keep at least 512). Returns 0, -ENOSPC (too small for any FAT), -EFBIG (beyond
 * FATFS_MAX_BYTES) or -E2BIG (a FAT12/16 root of more than 65520 entries). Not logged.
 */
int fatfs_geometry(struct fatfs *g, uint64_t bytes, uint32_t root_entries);
/** "FAT12", "FAT16" or "FAT32". */
const char *fatfs_name(const struct fatfs *g);
/**
 * The boot sector: `label` the 11 bytes of the volume label (space-padded, "NO NAME    " for
 * none), `hidden` the sectors before the filesystem on its disk.
 */
void fatfs_boot_sector(const struct fatfs *g, uint8_t out[FATFS_SECTOR], const uint8_t label[11],
		       uint32_t volume_id, uint32_t hidden);
/** FAT32's FSInfo sector: `free` clusters, the next free one `next`. */
void fatfs_fsinfo(uint8_t out[FATFS_SECTOR], uint32_t free, uint32_t next);
/** Bytes of a FAT holding entries 0 .. `last`, rounded up to whole sectors. */
size_t fatfs_fat_bytes(const struct fatfs *g, uint32_t last);
/** Set entry `cluster` of the FAT `fat` (fatfs_fat_bytes long) to `value`. */
void fatfs_fat_set(const struct fatfs *g, uint8_t *fat, uint32_t cluster, uint32_t value);
/** The value that ends a chain (and entry 1's), and entry 0's (the media byte). */
uint32_t fatfs_eoc(const struct fatfs *g);
uint32_t fatfs_media_entry(const struct fatfs *g);
/** Byte offset of cluster `c` (>= 2) from the filesystem's start. */
uint64_t fatfs_cluster_offset(const struct fatfs *g, uint32_t c);

/* FAT's on-disk fields are little-endian, at any alignment. */
static inline void fatfs_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void fatfs_put32(uint8_t *p, uint32_t v)
{
	fatfs_put16(p, v);
	fatfs_put16(p + 2, v >> 16);
}

#endif
