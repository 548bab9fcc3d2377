/*
 * The board profiles (recipe/board.c): every row holds together (loaders in disk order, in
 * slots that do not overlap, on sector boundaries, a package, a console, a default table it
 * accepts; or a firmware's FAT partition on an MBR); names, suggestions and the size rounding.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/board.h"

#define MIB (1024 * 1024ull)

START_TEST(rows_hold_together)
{
	size_t i, j;

	ck_assert_uint_ge(board_count(), 5);
	for (i = 0; i < board_count(); i++) {
		const struct board *b = board_at(i);
		uint64_t end = 0;

		ck_assert_ptr_eq(board_get(b->name), b);
		ck_assert_ptr_nonnull(b->soc);
		ck_assert_ptr_nonnull(b->rule);
		ck_assert_ptr_nonnull(b->console);
		ck_assert_ptr_nonnull(b->package);
		ck_assert(b->tables & (1u << b->table));
		for (j = 0; j < BOARD_LOADERS && b->loaders[j].name; j++) {
			const struct board_loader *l = &b->loaders[j];

			ck_assert_uint_eq(l->offset % 512, 0);
			ck_assert_uint_gt(l->slot, 0);
			ck_assert_uint_ge(l->offset, end); /* disk order, no overlap */
			ck_assert(!strncmp(l->path, "usr/lib/", 8));
			end = l->offset + l->slot;
		}
		ck_assert(b->not_yet || j > 0 || b->fat.dir);
		if (!b->fat.dir)
			continue;
		/* a firmware reading a FAT partition: no loader outside the table, an MBR */
		ck_assert_uint_eq(j, 0);
		ck_assert_uint_eq(b->tables, BOARD_MBR);
		ck_assert(b->fat.files[0] && b->fat.config && b->fat.cmdline && b->fat.defaults &&
			  b->fat.extra);
		for (j = 0; j < BOARD_FAT_FILES && b->fat.files[j] &&
		     strcmp(b->fat.files[j], b->fat.cmdline); j++)
			;
		ck_assert(j < BOARD_FAT_FILES && b->fat.files[j]); /* cmdline.txt is read there */
	}
	ck_assert_ptr_null(board_at(board_count()));
	ck_assert_ptr_null(board_get("orangepi"));
	ck_assert_ptr_null(board_get(NULL));
}
END_TEST

START_TEST(names_and_suggestions)
{
	struct buf b = { 0 };

	ck_assert_str_eq(board_suggest("orangepi-pc2"), "orangepi-pc");
	ck_assert_str_eq(board_suggest("orangepi"), "orangepi-pc");
	ck_assert_str_eq(board_suggest("beaglebone"), "beaglebone-black");
	ck_assert_str_eq(board_suggest("cubieboard3"), "cubieboard2");
	ck_assert_ptr_null(board_suggest("x86"));
	board_list(&b);
	ck_assert(strstr(b.p, "\"orangepi-pc\", "));
	ck_assert(strstr(b.p, " or \""));
	buf_release(&b);
}
END_TEST

START_TEST(size_rounding)
{
	ck_assert_uint_eq(board_round_size(BOARD_ROUND_POW2, 1), MIB);
	ck_assert_uint_eq(board_round_size(BOARD_ROUND_POW2, 1024 * MIB), 1024 * MIB);
	ck_assert_uint_eq(board_round_size(BOARD_ROUND_POW2, 1024 * MIB + 1), 2048 * MIB);
	ck_assert_uint_eq(board_round_size(BOARD_ROUND_POW2, 700 * MIB), 1024 * MIB);
	ck_assert_uint_eq(board_round_size(BOARD_ROUND_MIB, 700 * MIB + 1), 701 * MIB);
}
END_TEST

Suite *board_suite(void)
{
	Suite *s = suite_create("board");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, rows_hold_together);
	tcase_add_test(tc, names_and_suggestions);
	tcase_add_test(tc, size_rounding);
	suite_add_tcase(s, tc);
	return s;
}
