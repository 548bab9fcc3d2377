#include <check.h>
#include <string.h>

#include "image/disklayout.h"
#include "lib/err.h"

#define MIB DISKLAYOUT_MIB

static struct recipe_partition parts[4];
static struct recipe_disk disk;

static void setup(int table, uint64_t size, size_t n)
{
	static char names[4][2] = { "a", "b", "c", "d" };
	size_t i;

	memset(parts, 0, sizeof(parts));
	memset(&disk, 0, sizeof(disk));
	for (i = 0; i < n; i++) {
		parts[i].name = names[i];
		parts[i].table_entry = 1;
	}
	disk.table = table;
	disk.size = size;
	disk.partitions = parts;
	disk.n_partitions = n;
}

START_TEST(auto_sizes_align)
{
	struct disklayout_part v[3];
	struct limits lim;
	uint64_t size;

	runlimits_init(&lim);
	setup(DISK_GPT, 0, 3);
	parts[1].min_size = 64 * MIB;
	ck_assert_int_eq(disklayout_place(&disk, 0, 0, 1, &v[0]), 0);
	ck_assert_uint_eq(v[0].offset, MIB);  /* the first at 1 MiB */
	ck_assert_uint_eq(v[0].size, MIB);    /* a byte rounds up to 1 MiB */
	ck_assert_int_eq(disklayout_place(&disk, 1, v[0].offset + v[0].size, 3 * MIB + 1, &v[1]), 0);
	ck_assert_uint_eq(v[1].offset, 2 * MIB);
	ck_assert_uint_eq(v[1].size, 64 * MIB); /* min_size wins */
	ck_assert_int_eq(disklayout_place(&disk, 2, 66 * MIB + 5, 0, &v[2]), 0);
	ck_assert_uint_eq(v[2].offset, 67 * MIB); /* aligned up after the one before */
	ck_assert_uint_eq(v[2].size, MIB);        /* empty: 1 MiB */
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), 0);
	ck_assert_uint_eq(size, 69 * MIB);        /* the end plus the backup GPT's MiB */
	disk.table = DISK_MBR;
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), 0);
	ck_assert_uint_eq(size, 68 * MIB);
}
END_TEST

START_TEST(grow_and_fixed)
{
	struct disklayout_part v[2];

	setup(DISK_GPT, 100 * MIB, 2);
	parts[0].size = 10 * MIB;
	parts[1].grow = 1;
	ck_assert_int_eq(disklayout_place(&disk, 0, 0, 10 * MIB, &v[0]), 0);
	ck_assert_int_eq(disklayout_place(&disk, 0, 0, 10 * MIB + 1, &v[0]), -MKI_E_NOSPACE);
	ck_assert_int_eq(disklayout_place(&disk, 0, 0, 0, &v[0]), 0);
	ck_assert_int_eq(disklayout_place(&disk, 1, 11 * MIB, 5 * MIB, &v[1]), 0);
	ck_assert_uint_eq(v[1].offset, 11 * MIB);
	ck_assert_uint_eq(v[1].size, 88 * MIB); /* to the disk's end less the backup's MiB */
	ck_assert_int_eq(disklayout_place(&disk, 1, 11 * MIB, 89 * MIB, &v[1]), -MKI_E_NOSPACE);
	disk.table = DISK_MBR;
	ck_assert_int_eq(disklayout_place(&disk, 1, 11 * MIB, 0, &v[1]), 0);
	ck_assert_uint_eq(v[1].size, 89 * MIB);
	parts[1].grow = 0;
	parts[1].size = 90 * MIB; /* past a fixed disk */
	ck_assert_int_eq(disklayout_place(&disk, 1, 11 * MIB, 0, &v[1]), -MKI_E_NOSPACE);
}
END_TEST

START_TEST(raw_region_shortens_gpt)
{
	struct disklayout_part v[2];
	struct limits lim;
	uint64_t size;

	runlimits_init(&lim);
	setup(DISK_GPT, 0, 2);
	parts[0].table_entry = 0;
	parts[0].offset = 8192;
	ck_assert_int_eq(disklayout_place(&disk, 0, 0, 20000, &v[0]), 0);
	ck_assert_uint_eq(v[0].size, 20000); /* outside the table: exactly its bytes */
	ck_assert_int_eq(disklayout_place(&disk, 1, v[0].offset + v[0].size, 5 * MIB, &v[1]), 0);
	ck_assert_uint_eq(v[1].offset, MIB);
	ck_assert_uint_eq(disklayout_gpt_entries(&disk, v), (8192 - 1024) / 128);
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), 0);
	v[0].offset = 1024 + 128; /* room for one entry: the table has one */
	ck_assert_uint_eq(disklayout_gpt_entries(&disk, v), 1);
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), -MKI_E_IMAGE); /* overlaps 'b' */
	v[0].offset = 512;
	ck_assert_uint_eq(disklayout_gpt_entries(&disk, v), 0);
	v[0].size = 100;
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), -MKI_E_IMAGE);
	disk.table = DISK_MBR; /* MBR: only the first sector is the table's */
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), 0);
	v[0].offset = 0;
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), -MKI_E_IMAGE);
}
END_TEST

START_TEST(overlap_and_limit)
{
	struct disklayout_part v[2] = { { MIB, 4 * MIB }, { 4 * MIB, MIB } };
	struct limits lim;
	uint64_t size;

	runlimits_init(&lim);
	setup(DISK_GPT, 0, 2);
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), -MKI_E_IMAGE);
	v[1].offset = 5 * MIB;
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), 0);
	ck_assert_int_eq(runlimits_set(&lim, "disk-size=6M"), 0);
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), -MKI_E_HOOK);
	ck_assert_int_eq(runlimits_set(&lim, "disk-size=7M"), 0);
	ck_assert_int_eq(disklayout_finish(&disk, v, &lim, &size), 0);
}
END_TEST

Suite *disklayout_suite(void)
{
	Suite *s = suite_create("disklayout");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, auto_sizes_align);
	tcase_add_test(tc, grow_and_fixed);
	tcase_add_test(tc, raw_region_shortens_gpt);
	tcase_add_test(tc, overlap_and_limit);
	suite_add_tcase(s, tc);
	return s;
}
