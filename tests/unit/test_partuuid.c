/*
 * Disk identifiers: version 4 UUIDs from the recipe name and epoch, the same every time, other
 * for another name, epoch or use; MBR PARTUUIDs count table entries only.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "recipe/partuuid.h"

static char spl[] = "spl", boot[] = "boot", root[] = "root";
static struct recipe_partition parts[3] = {
	{ .name = spl, .table_entry = 0 },
	{ .name = boot, .table_entry = 1 },
	{ .name = root, .table_entry = 1 },
};

static void fill(struct recipe *r, char *name, int table)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->disk.table = table;
	r->disk.partitions = parts;
	r->disk.n_partitions = 3;
}

START_TEST(derived)
{
	static char n1[] = "arm-board", n2[] = "arm-board-ab";
	struct recipe r, o;
	char a[37], b[37], c[37];

	fill(&r, n1, DISK_GPT);
	fill(&o, n2, DISK_GPT);
	partuuid_partition(&r, 1700000000, 2, a);
	partuuid_partition(&r, 1700000000, 2, b);
	ck_assert_str_eq(a, b);
	ck_assert_uint_eq(strlen(a), 36);
	ck_assert_int_eq(a[14], '4');
	ck_assert(strchr("89ab", a[19]));
	partuuid_partition(&r, 1700000001, 2, c);
	ck_assert_str_ne(a, c);
	partuuid_partition(&o, 1700000000, 2, c);
	ck_assert_str_ne(a, c);
	partuuid_partition(&r, 1700000000, 1, c);
	ck_assert_str_ne(a, c);
	partuuid_disk(&r, 1700000000, c);
	ck_assert_str_ne(a, c);
	ck_assert_uint_ne(partuuid_u32(&r, 1, "fat:boot"), partuuid_u32(&r, 1, "fat:esp"));
}
END_TEST

/* A verity salt and UUID: the same every time, other for another partition, name or epoch. */
START_TEST(verity)
{
	static char n1[] = "arm-board", n2[] = "arm-board-ab";
	uint8_t s1[32], u1[16], s2[32], u2[16];
	struct recipe r, o;

	fill(&r, n1, DISK_GPT);
	fill(&o, n2, DISK_GPT);
	partuuid_verity(&r, 1700000000, "root", s1, u1);
	partuuid_verity(&r, 1700000000, "root", s2, u2);
	ck_assert_mem_eq(s1, s2, 32);
	ck_assert_mem_eq(u1, u2, 16);
	ck_assert_uint_eq(u1[6] >> 4, 4);
	ck_assert_uint_eq(u1[8] >> 6, 2);
	ck_assert_mem_ne(s1, u1, 16);
	partuuid_verity(&r, 1700000000, "root_b", s2, u2);
	ck_assert_mem_ne(s1, s2, 32);
	ck_assert_mem_ne(u1, u2, 16);
	partuuid_verity(&r, 1700000001, "root", s2, u2);
	ck_assert_mem_ne(s1, s2, 32);
	partuuid_verity(&o, 1700000000, "root", s2, u2);
	ck_assert_mem_ne(s1, s2, 32);
}
END_TEST

START_TEST(mbr)
{
	static char n1[] = "arm-board";
	struct recipe r;
	char id[37], p[37], want[40];

	fill(&r, n1, DISK_MBR);
	partuuid_disk(&r, 5, id);
	ck_assert_uint_eq(strlen(id), 8);
	partuuid_partition(&r, 5, 2, p);
	snprintf(want, sizeof(want), "%s-02", id); /* spl is outside the table */
	ck_assert_str_eq(p, want);
}
END_TEST

Suite *partuuid_suite(void)
{
	Suite *s = suite_create("partuuid");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, derived);
	tcase_add_test(tc, verity);
	tcase_add_test(tc, mbr);
	suite_add_tcase(s, tc);
	return s;
}
