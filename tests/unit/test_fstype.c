/* The filesystems' table (recipe/fstype.c): names both ways, what each may hold, fstab's pass. */
#include <check.h>
#include <errno.h>

#include "recipe/fstype.h"

START_TEST(names_both_ways)
{
	enum partition_format f = PART_FS_NONE, g;

	for (f = PART_FS_NONE; f <= PART_FS_SQUASHFS; f++) {
		ck_assert_int_eq(fstype_find(fstype_get(f)->name, &g), 0);
		ck_assert_int_eq(g, f);
	}
	ck_assert_str_eq(fstype_get(PART_FS_VFAT)->name, "vfat");
	ck_assert_int_eq(fstype_find("btrfs", &g), -ENOENT);
	ck_assert_int_eq(fstype_find("EXT4", &g), -ENOENT);
}
END_TEST

START_TEST(what_each_holds)
{
	const struct fstype *none = fstype_get(PART_FS_NONE), *ext4 = fstype_get(PART_FS_EXT4),
			    *vfat = fstype_get(PART_FS_VFAT), *sq = fstype_get(PART_FS_SQUASHFS);

	ck_assert(!none->tree && ext4->tree && vfat->tree && sq->tree);
	/* the root needs owners and modes; verity a filesystem nothing writes to */
	ck_assert(ext4->posix && !vfat->posix && sq->posix);
	ck_assert(!ext4->read_only && !vfat->read_only && sq->read_only);
	ck_assert(sq->compressed && !ext4->compressed);
	ck_assert_uint_eq(ext4->label_max, 16);
	ck_assert_uint_eq(vfat->label_max, 11);
	ck_assert_uint_eq(sq->label_max, 0);
	ck_assert_ptr_nonnull(vfat->label_bad);
	ck_assert_ptr_null(ext4->label_bad);
	ck_assert_ptr_eq(fstype_get((enum partition_format)99), none);
}
END_TEST

START_TEST(fstab_fields)
{
	ck_assert_str_eq(fstype_get(PART_FS_EXT4)->fstab_root, "errors=remount-ro");
	ck_assert_int_eq(fstype_pass(PART_FS_EXT4, 1), 1);
	ck_assert_int_eq(fstype_pass(PART_FS_EXT4, 0), 2);
	ck_assert_int_eq(fstype_pass(PART_FS_VFAT, 0), 2);
	ck_assert_int_eq(fstype_pass(PART_FS_SQUASHFS, 1), 0);
	ck_assert_int_eq(fstype_pass(PART_FS_SQUASHFS, 0), 0);
	ck_assert_str_eq(fstype_get(PART_FS_VFAT)->fstab, "umask=0077");
	ck_assert_str_eq(fstype_get(PART_FS_SQUASHFS)->fstab_root, "ro");
}
END_TEST

START_TEST(names_as_messages_list_them)
{
	struct buf b = { 0 };

	fstype_list(&b, 1);
	ck_assert_str_eq(b.p, "\"ext4\", \"vfat\", \"squashfs\" or \"none\"");
	buf_release(&b);
	fstype_list(&b, 0);
	ck_assert_str_eq(b.p, "\"ext4\", \"vfat\" or \"squashfs\"");
	buf_release(&b);
}
END_TEST

Suite *fstype_suite(void)
{
	Suite *s = suite_create("fstype");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, names_both_ways);
	tcase_add_test(tc, what_each_holds);
	tcase_add_test(tc, fstab_fields);
	tcase_add_test(tc, names_as_messages_list_them);
	suite_add_tcase(s, tc);
	return s;
}
