/* FAT geometry and the reserved region (learned from Microsoft's specification and mkfs.fat). */
#include "fatfs.h"

#include <errno.h>
#include <string.h>

#define SECS_TRACK 32u          /* any MiB-aligned size is whole tracks: mtools checks it */
#define HEADS 64u
#define MEDIA 0xf8u
#define MAX_CLUST_12 4084u      /* the specification: fewer than 4085 clusters is FAT12 */
#define MIN_CLUST_16 4087u      /* mkfs.fat's margin above 4085, against off-by-one readers */
#define MAX_CLUST_16 65524u     /* fewer than 65525 is FAT16 */
#define MIN_CLUST_32 65525u
#define MAX_CLUST_32 0x0ffffff5u
#define ROOT_MIN 512u

static uint32_t div_up(uint64_t a, uint64_t b)
{
	return (uint32_t)((a + b - 1) / b);
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

/*
 * FAT12/16/32 with `spc`: every structure aligned to the cluster (as mkfs.fat does beyond
 * 4 MiB), the FATs sized for the clusters the rest could hold, then the clusters recounted
 * around them. 0 when the count fits `bits`, else -ENOSPC.
 */
static int try_layout(struct fatfs *g, int bits, uint32_t spc, uint32_t root_entries)
{
	uint32_t align = g->sectors > 8192 ? spc : 1, avail, upper, min, max;

	g->bits = bits;
	g->spc = spc;
	g->cluster_bytes = spc * FATFS_SECTOR;
	g->reserved = align_up(bits == 32 ? 32 : 1, align);
	g->root_sectors = bits == 32 ? 0 : align_up(div_up(root_entries * 32ull, FATFS_SECTOR), align);
	g->root_entries = g->root_sectors * (FATFS_SECTOR / 32);
	if (g->reserved + g->root_sectors >= g->sectors)
		return -ENOSPC;
	avail = g->sectors - g->reserved - g->root_sectors;
	upper = avail / spc;
	g->fat_sectors = align_up(div_up(((uint64_t)upper + 2) * (uint32_t)bits, 8 * FATFS_SECTOR),
				  align);
	if (2ull * g->fat_sectors >= avail)
		return -ENOSPC;
	g->clusters = (avail - 2 * g->fat_sectors) / spc;
	g->data_start = g->reserved + 2 * g->fat_sectors + g->root_sectors;
	min = bits == 12 ? 1 : bits == 16 ? MIN_CLUST_16 : MIN_CLUST_32;
	max = bits == 12 ? MAX_CLUST_12 : bits == 16 ? MAX_CLUST_16 : MAX_CLUST_32;
	return g->clusters >= min && g->clusters <= max ? 0 : -ENOSPC;
}

/* mkfs.fat's FAT32 cluster sizes, Microsoft's format table: 4 KiB up to 8 GiB, then doubling. */
static uint32_t fat32_spc(uint64_t sectors)
{
	return sectors > 64ull << 20 ? 64 : sectors > 32ull << 20 ? 32 :
	       sectors > 16ull << 20 ? 16 : sectors > 260ull * 2048 ? 8 : 1;
}

int fatfs_geometry(struct fatfs *g, uint64_t bytes, uint32_t root_entries)
{
	uint32_t spc;

	memset(g, 0, sizeof(*g));
	if (bytes > FATFS_MAX_BYTES)
		return -EFBIG;
	g->sectors = (uint32_t)(bytes / FATFS_SECTOR / SECS_TRACK * SECS_TRACK);
	if (bytes >= FATFS_FAT32_FROM)
		return try_layout(g, 32, fat32_spc(g->sectors), 0);
	if (root_entries < ROOT_MIN)
		root_entries = ROOT_MIN;
	if (align_up(root_entries, 16) > 65520)
		return -E2BIG;
	/*
	 * Hard disks start at 2 KiB clusters and double until FAT16 or FAT12 can count them;
	 * FAT16 first, as mkfs.fat prefers the type with more clusters when both fit.
	 */
	for (spc = 4; spc <= 128; spc *= 2)
		if (!try_layout(g, 16, spc, root_entries) || !try_layout(g, 12, spc, root_entries))
			return 0;
	return -ENOSPC;
}

const char *fatfs_name(const struct fatfs *g)
{
	return g->bits == 12 ? "FAT12" : g->bits == 16 ? "FAT16" : "FAT32";
}

/* The extended BPB (drive, signature, id, label, type) at `p`, and a boot stub that halts. */
static void ext_bpb(const struct fatfs *g, uint8_t *p, const uint8_t label[11], uint32_t id)
{
	static const uint8_t halt[] = { 0xfa, 0xf4, 0xeb, 0xfd }; /* cli; hlt; jmp hlt */

	p[0] = 0x80;
	p[2] = 0x29;
	fatfs_put32(p + 3, id);
	memcpy(p + 7, label, 11);
	memcpy(p + 18, g->bits == 12 ? "FAT12   " : g->bits == 16 ? "FAT16   " : "FAT32   ", 8);
	memcpy(p + 26, halt, sizeof(halt));
}

void fatfs_boot_sector(const struct fatfs *g, uint8_t out[FATFS_SECTOR], const uint8_t label[11],
		       uint32_t volume_id, uint32_t hidden)
{
	int fat32 = g->bits == 32;

	memset(out, 0, FATFS_SECTOR);
	out[0] = 0xeb;
	out[1] = fat32 ? 0x58 : 0x3c; /* to the boot stub after the BPB */
	out[2] = 0x90;
	memcpy(out + 3, "MKIMAGE ", 8);
	fatfs_put16(out + 11, FATFS_SECTOR);
	out[13] = (uint8_t)g->spc;
	fatfs_put16(out + 14, g->reserved);
	out[16] = 2;
	fatfs_put16(out + 17, g->root_entries);
	fatfs_put16(out + 19, !fat32 && g->sectors < 0x10000 ? g->sectors : 0);
	out[21] = MEDIA;
	fatfs_put16(out + 22, fat32 ? 0 : g->fat_sectors);
	fatfs_put16(out + 24, SECS_TRACK);
	fatfs_put16(out + 26, HEADS);
	fatfs_put32(out + 28, hidden);
	fatfs_put32(out + 32, fat32 || g->sectors >= 0x10000 ? g->sectors : 0);
	if (fat32) {
		fatfs_put32(out + 36, g->fat_sectors);
		fatfs_put32(out + 44, 2); /* the root directory's first cluster */
		fatfs_put16(out + 48, 1); /* FSInfo */
		fatfs_put16(out + 50, FATFS_BACKUP_BOOT);
		ext_bpb(g, out + 64, label, volume_id);
	} else {
		ext_bpb(g, out + 36, label, volume_id);
	}
	out[510] = 0x55;
	out[511] = 0xaa;
}

void fatfs_fsinfo(uint8_t out[FATFS_SECTOR], uint32_t free, uint32_t next)
{
	memset(out, 0, FATFS_SECTOR);
	fatfs_put32(out, 0x41615252);
	fatfs_put32(out + 484, 0x61417272);
	fatfs_put32(out + 488, free);
	fatfs_put32(out + 492, next);
	fatfs_put32(out + 508, 0xaa550000);
}

size_t fatfs_fat_bytes(const struct fatfs *g, uint32_t last)
{
	uint64_t bytes = ((uint64_t)last + 1) * (uint32_t)g->bits / 8 + 1;

	return (size_t)div_up(bytes, FATFS_SECTOR) * FATFS_SECTOR;
}

void fatfs_fat_set(const struct fatfs *g, uint8_t *fat, uint32_t cluster, uint32_t value)
{
	uint8_t *p;

	if (g->bits == 32) {
		fatfs_put32(fat + cluster * 4ull, value & 0x0fffffff);
	} else if (g->bits == 16) {
		fatfs_put16(fat + cluster * 2ull, value);
	} else {
		/* Two 12-bit entries share three bytes: an odd one takes the high 12 bits. */
		p = fat + cluster + cluster / 2;
		if (cluster & 1) {
			p[0] = (uint8_t)((p[0] & 0x0f) | (value << 4));
			p[1] = (uint8_t)(value >> 4);
		} else {
			p[0] = (uint8_t)value;
			p[1] = (uint8_t)((p[1] & 0xf0) | ((value >> 8) & 0x0f));
		}
	}
}

uint32_t fatfs_eoc(const struct fatfs *g)
{
	return g->bits == 12 ? 0xfff : g->bits == 16 ? 0xffff : 0x0fffffff;
}

uint32_t fatfs_media_entry(const struct fatfs *g)
{
	return (fatfs_eoc(g) & ~0xffu) | MEDIA;
}

uint64_t fatfs_cluster_offset(const struct fatfs *g, uint32_t c)
{
	return ((uint64_t)g->data_start + (uint64_t)(c - 2) * g->spc) * FATFS_SECTOR;
}
