/*
 * Image formats behind one interface: the table, and writing into a region of a larger file
 * filled with a pattern - nothing outside the region changes, the region holds the same image
 * a whole file gets, and an image larger than its region fails cleanly.
 */
#include <check.h>
#include <errno.h>

#include "image/format.h"
#include "image/sink.h"
#include "image_fixture.h"
#include "lib/err.h"

#define MIB (1ull << 20)
#define PAT 0xa5

static struct fixture fx;
static char ext4[] = "ext4", tar[] = "tar";

START_TEST(table)
{
	struct buf known = { 0 };

	ck_assert_str_eq(format_find("ext4")->name, "ext4");
	ck_assert_int_eq(format_find("ext4")->labelled, 1);
	ck_assert_int_eq(format_find("tar")->labelled, 0);
	ck_assert_ptr_null(format_find("zip"));
	ck_assert_ptr_null(format_find("EXT4"));
	ck_assert_ptr_eq(format_find(NULL), format_find("ext4"));
	ck_assert_int_eq(format_recipe_check("ext4", &known), 1);
	ck_assert_int_eq(format_recipe_check("tar", &known), 0);
	ck_assert_int_eq(format_recipe_check("squashfs", &known), 0);
	ck_assert_int_eq(format_recipe_check("erofs", &known), -ENOENT);
	ck_assert_str_eq(known.p, "\"ext4\", \"tar\" or \"squashfs\"");
	buf_release(&known);
	ck_assert_ptr_null(format_find("vfat")); /* a partition's filesystem, no image format */
	ck_assert_str_eq(format_partition(PART_FS_VFAT)->name, "vfat");
	ck_assert_ptr_eq(format_partition(PART_FS_EXT4), format_find("ext4"));
	ck_assert_ptr_null(format_partition(PART_FS_NONE));
}
END_TEST

/*
 * Write `format` (image.size `size`) into [off, off + len) of a 64 MiB pattern file; returns the
 * writer's result.
 */
static int write_region(char *format, uint64_t size, uint64_t off, uint64_t len, int *fd)
{
	char *disk;
	struct sink k;
	int ret;

	fx_setup(&fx, "format", format);
	fx.im.size = size;
	disk = xasprintf("%s/disk", fx.top);
	*fd = fx_pattern_file(disk, 64 * MIB, PAT);
	sink_init_region(&k, *fd, off, len, "disk");
	ret = format_write(format_find(format), &fx.st, &fx.p, &k);
	ck_assert_int_eq(sink_commit(&k), 0);
	sink_release(&k);
	free(disk);
	return ret;
}

START_TEST(ext4_in_region)
{
	char *part;
	int fd;

	ck_assert_int_eq(write_region(ext4, 16 * MIB, MIB, 20 * MIB, &fd), 0);
	ck_assert_msg(fx_all(fd, 0, MIB, PAT), "bytes before the region changed");
	ck_assert_msg(fx_all(fd, 21 * MIB, 64 * MIB, PAT), "bytes after the region changed");
	part = xasprintf("%s/part", fx.top);
	fx_extract(fd, MIB, 16 * MIB, part);
	ck_assert_int_eq(fx_sh(xasprintf("e2fsck -fn '%s' >/dev/null 2>&1", part)), 0);
	/* The same filesystem, byte for byte, as a whole file gets. */
	ck_assert_int_eq(image_write(&fx.st, &fx.p), 0);
	ck_assert_msg(fx_same(part, fx.out), "the region differs from the whole-file image");
	close(fd);
	free(part);
}
END_TEST

START_TEST(ext4_larger_than_region)
{
	int fd;

	ck_assert_int_eq(write_region(ext4, 16 * MIB, MIB, 12 * MIB, &fd), -MKI_E_NOSPACE);
	ck_assert_msg(fx_all(fd, 0, 64 * MIB, PAT), "a refused image wrote to the file");
	close(fd);
}
END_TEST

START_TEST(tar_in_region)
{
	struct stat st;
	char *part;
	int fd;

	ck_assert_int_eq(write_region(tar, 0, 3 * MIB, MIB, &fd), 0);
	ck_assert_msg(fx_all(fd, 0, 3 * MIB, PAT), "bytes before the region changed");
	ck_assert_msg(fx_all(fd, 4 * MIB, 64 * MIB, PAT), "bytes after the region changed");
	ck_assert_int_eq(image_write(&fx.st, &fx.p), 0);
	ck_assert_int_eq(stat(fx.out, &st), 0);
	part = xasprintf("%s/part", fx.top);
	fx_extract(fd, 3 * MIB, (uint64_t)st.st_size, part);
	ck_assert_msg(fx_same(part, fx.out), "the region differs from the whole-file archive");
	ck_assert_int_eq(fx_sh(xasprintf("tar -tf '%s' >/dev/null 2>&1", part)), 0);
	ck_assert_int_eq(fx_sh(xasprintf("tar -tf '%s' | grep -qx './var/sparse'", part)), 0);
	close(fd);
	free(part);
}
END_TEST

START_TEST(tar_larger_than_region)
{
	int fd;

	ck_assert_int_eq(write_region(tar, 0, MIB, 8192, &fd), -MKI_E_NOSPACE);
	ck_assert_msg(fx_all(fd, 0, MIB, PAT), "bytes before the region changed");
	ck_assert_msg(fx_all(fd, MIB + 8192, 64 * MIB, PAT), "bytes after the region changed");
	close(fd);
}
END_TEST

/* Estimates: ext4's is its fixed size; tar's is at least what it writes, and near it. */
START_TEST(estimates)
{
	struct stat st;
	uint64_t bytes = 0;

	fx_setup(&fx, "format", ext4);
	fx.im.size = 24 * MIB;
	ck_assert_int_eq(format_estimate(format_find("ext4"), &fx.st, &fx.p, &bytes), 0);
	ck_assert_uint_eq(bytes, 24 * MIB);
	fx.im.size = 0;
	ck_assert_int_eq(format_estimate(format_find("ext4"), &fx.st, &fx.p, &bytes), 0);
	ck_assert_uint_ge(bytes, 16 * MIB);
	fx.im.format = tar;
	ck_assert_int_eq(format_estimate(format_find("tar"), &fx.st, &fx.p, &bytes), 0);
	ck_assert_int_eq(image_write(&fx.st, &fx.p), 0);
	ck_assert_int_eq(stat(fx.out, &st), 0);
	ck_assert_uint_ge(bytes, (uint64_t)st.st_size);
	ck_assert_uint_le(bytes, 3 * (uint64_t)st.st_size);
}
END_TEST

static void teardown(void)
{
	fx_teardown(&fx);
}

Suite *format_suite(void)
{
	Suite *s = suite_create("format");
	TCase *tc = tcase_create("format");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, table);
	tcase_add_test(tc, ext4_in_region);
	tcase_add_test(tc, ext4_larger_than_region);
	tcase_add_test(tc, tar_in_region);
	tcase_add_test(tc, tar_larger_than_region);
	tcase_add_test(tc, estimates);
	suite_add_tcase(s, tc);
	return s;
}
