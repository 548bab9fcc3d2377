/*
 * FAT geometry: the type follows the cluster count, the cluster size is mkfs.fat's for the
 * size, structures are aligned to clusters; the boot sector, FSInfo and FAT entries are laid
 * out as the specification says.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "image/fatfs.h"

#define MIB (1ull << 20)

static uint32_t le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return le16(p) | le16(p + 2) << 16;
}

/* The type and cluster size mkfs.fat 4.2 picks for these sizes (checked with `file`). */
START_TEST(types_and_cluster_sizes_as_mkfs_fat)
{
	static const struct { uint64_t mib; int bits; uint32_t spc; } want[] = {
		{ 1, 12, 4 }, { 8, 12, 4 }, { 16, 16, 4 }, { 100, 16, 4 }, { 128, 16, 4 },
		{ 256, 16, 8 }, { 300, 16, 16 }, { 511, 16, 16 }, { 512, 32, 8 }, { 600, 32, 8 },
		{ 9000, 32, 16 }, { 20000, 32, 32 }, { 40000, 32, 64 },
	};
	struct fatfs g;
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(*want); i++) {
		ck_assert_int_eq(fatfs_geometry(&g, want[i].mib * MIB, 3), 0);
		ck_assert_msg(g.bits == want[i].bits && g.spc == want[i].spc,
			      "%llu MiB: FAT%d, %u sectors/cluster", (unsigned long long)want[i].mib,
			      g.bits, g.spc);
		/* the specification's rule: the count alone says the type */
		ck_assert_int_eq(g.bits, g.clusters < 4085 ? 12 : g.clusters < 65525 ? 16 : 32);
		ck_assert_uint_le((uint64_t)g.data_start + (uint64_t)g.clusters * g.spc, g.sectors);
		ck_assert_uint_ge(g.fat_sectors * 512ull * 8 / (uint32_t)g.bits, g.clusters + 2);
	}
}
END_TEST

START_TEST(structures_aligned_to_clusters)
{
	struct fatfs g;

	ck_assert_int_eq(fatfs_geometry(&g, 100 * MIB, 0), 0);
	ck_assert_uint_eq(g.root_entries, 512);
	ck_assert_uint_eq(g.data_start % g.spc, 0);
	ck_assert_uint_eq(fatfs_cluster_offset(&g, 2), g.data_start * 512ull);
	ck_assert_uint_eq(fatfs_cluster_offset(&g, 3), (g.data_start + g.spc) * 512ull);
	ck_assert_int_eq(fatfs_geometry(&g, 600 * MIB, 0), 0);
	ck_assert_uint_eq(g.reserved, 32);
	ck_assert_uint_eq(g.root_entries, 0);
	ck_assert_uint_eq(g.data_start % g.spc, 0);
	/* a size that is not whole 16 KiB is rounded down */
	ck_assert_int_eq(fatfs_geometry(&g, 100 * MIB + 5000, 0), 0);
	ck_assert_uint_eq(g.sectors, 100 * 2048);
}
END_TEST

START_TEST(a_large_root_grows_its_area)
{
	struct fatfs g;

	ck_assert_int_eq(fatfs_geometry(&g, 16 * MIB, 2000), 0);
	ck_assert_uint_ge(g.root_entries, 2000);
	ck_assert_int_eq(fatfs_geometry(&g, 16 * MIB, 70000), -E2BIG);
	ck_assert_int_eq(fatfs_geometry(&g, 600 * MIB, 70000), 0); /* FAT32: a chain */
}
END_TEST

START_TEST(sizes_fat_cannot_have)
{
	struct fatfs g;

	ck_assert_int_eq(fatfs_geometry(&g, 16384, 0), -ENOSPC);
	ck_assert_int_eq(fatfs_geometry(&g, 0, 0), -ENOSPC);
	ck_assert_int_eq(fatfs_geometry(&g, FATFS_MAX_BYTES + 16384, 0), -EFBIG);
	ck_assert_int_eq(fatfs_geometry(&g, FATFS_MAX_BYTES, 0), 0);
	ck_assert_int_eq(g.bits, 32);
}
END_TEST

START_TEST(boot_sectors)
{
	uint8_t bs[FATFS_SECTOR];
	struct fatfs g;

	ck_assert_int_eq(fatfs_geometry(&g, 100 * MIB, 0), 0);
	fatfs_boot_sector(&g, bs, (const uint8_t *)"ESP        ", 0xdeadbeef, 2048);
	ck_assert_uint_eq(bs[0], 0xeb);
	ck_assert_uint_eq(le16(bs + 11), 512);
	ck_assert_uint_eq(bs[13], g.spc);
	ck_assert_uint_eq(bs[16], 2);
	ck_assert_uint_eq(le16(bs + 17), 512);
	ck_assert_uint_eq(le16(bs + 19), 0);                /* more than 65535 sectors */
	ck_assert_uint_eq(le32(bs + 32), g.sectors);
	ck_assert_uint_eq(le16(bs + 22), g.fat_sectors);
	ck_assert_uint_eq(le32(bs + 28), 2048);
	ck_assert_uint_eq(le32(bs + 39), 0xdeadbeef);
	ck_assert_int_eq(memcmp(bs + 43, "ESP        FAT16   ", 19), 0);
	ck_assert_uint_eq(le16(bs + 510), 0xaa55);
	ck_assert_int_eq(fatfs_geometry(&g, 600 * MIB, 0), 0);
	fatfs_boot_sector(&g, bs, (const uint8_t *)"NO NAME    ", 1, 0);
	ck_assert_uint_eq(le16(bs + 17), 0);
	ck_assert_uint_eq(le16(bs + 22), 0);
	ck_assert_uint_eq(le32(bs + 36), g.fat_sectors);
	ck_assert_uint_eq(le32(bs + 44), 2);
	ck_assert_uint_eq(le16(bs + 48), 1);
	ck_assert_uint_eq(le16(bs + 50), FATFS_BACKUP_BOOT);
	ck_assert_int_eq(memcmp(bs + 71, "NO NAME    FAT32   ", 19), 0);
	fatfs_fsinfo(bs, 100, 7);
	ck_assert_uint_eq(le32(bs), 0x41615252);
	ck_assert_uint_eq(le32(bs + 484), 0x61417272);
	ck_assert_uint_eq(le32(bs + 488), 100);
	ck_assert_uint_eq(le32(bs + 492), 7);
	ck_assert_uint_eq(le32(bs + 508), 0xaa550000);
}
END_TEST

START_TEST(fat12_entries_share_bytes)
{
	uint8_t fat[512] = { 0 };
	struct fatfs g;

	ck_assert_int_eq(fatfs_geometry(&g, 1 * MIB, 0), 0);
	ck_assert_int_eq(g.bits, 12);
	ck_assert_uint_eq(fatfs_fat_bytes(&g, 2), 512);
	fatfs_fat_set(&g, fat, 0, fatfs_media_entry(&g));
	fatfs_fat_set(&g, fat, 1, fatfs_eoc(&g));
	fatfs_fat_set(&g, fat, 2, 0x003);
	fatfs_fat_set(&g, fat, 3, 0xabc);
	ck_assert_uint_eq(fat[0], 0xf8);
	ck_assert_uint_eq(fat[1], 0xff);
	ck_assert_uint_eq(fat[2], 0xff);
	ck_assert_uint_eq(fat[3], 0x03);
	ck_assert_uint_eq(fat[4], 0xc0);
	ck_assert_uint_eq(fat[5], 0xab);
	ck_assert_int_eq(fatfs_geometry(&g, 600 * MIB, 0), 0);
	fatfs_fat_set(&g, fat, 5, 0xffffffff);
	ck_assert_uint_eq(le32(fat + 20), 0x0fffffff);
	ck_assert_uint_eq(fatfs_media_entry(&g), 0x0ffffff8);
	ck_assert_uint_eq(fatfs_fat_bytes(&g, 128), 1024);
}
END_TEST

Suite *fatfs_suite(void)
{
	Suite *s = suite_create("fatfs");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, types_and_cluster_sizes_as_mkfs_fat);
	tcase_add_test(tc, structures_aligned_to_clusters);
	tcase_add_test(tc, a_large_root_grows_its_area);
	tcase_add_test(tc, sizes_fat_cannot_have);
	tcase_add_test(tc, boot_sectors);
	tcase_add_test(tc, fat12_entries_share_bytes);
	suite_add_tcase(s, tc);
	return s;
}
