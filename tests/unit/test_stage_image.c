/* The image stages (pipeline/stage_image.c): a disk's other outputs named, the root hash file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/x.h"
#include "pipeline_fixture.h"
#include "pipeline/stage.h"

static char out_img[] = "out/x.img", root_out[] = "elsewhere/root.ext4";

/* A disk with a block map, a zstd copy and its squashfs root beside it: named from the output. */
START_TEST(disk_outputs_beside_the_disk)
{
	struct recipe_partition parts[2] = { { .contents = PART_ROOT, .format = PART_FS_SQUASHFS } };
	struct build_opts o = { .output = out_img };
	struct recipe r = { 0 };
	struct build b = { .work_lock = -1 };

	o.st.source_date_epoch = 1700000000;
	r.disk = (struct recipe_disk){ .set = 1, .bmap = 1, .compress = DISK_COMPRESS_ZSTD,
				       .root_image = 1, .partitions = parts, .n_partitions = 1 };
	ck_assert_int_eq(stage_image_setup(&o, &r, &b), 0);
	ck_assert_str_eq(b.bmap, "out/x.img.bmap");
	ck_assert_str_eq(b.compressed, "out/x.img.zst");
	ck_assert_str_eq(b.root_image, "out/x.squashfs");
	ck_assert_ptr_eq(b.ip.im, &r.image);
	ck_assert_str_eq(b.ip.output, "out/x.img");
	ck_assert_int_eq(b.ip.source_date_epoch, 1700000000);
	build_release(&b);
}
END_TEST

/* image.output names the root's file; xz is .xz; without bmap, no block map. */
START_TEST(disk_outputs_as_asked)
{
	struct recipe_partition parts[1] = { { .contents = PART_ROOT, .format = PART_FS_EXT4 } };
	struct build_opts o = { .output = out_img };
	struct recipe r = { 0 };
	struct build b = { .work_lock = -1 };

	r.image.output = root_out;
	r.disk = (struct recipe_disk){ .set = 1, .compress = DISK_COMPRESS_XZ, .root_image = 1,
				       .partitions = parts, .n_partitions = 1 };
	ck_assert_int_eq(stage_image_setup(&o, &r, &b), 0);
	ck_assert_ptr_null(b.bmap);
	ck_assert_str_eq(b.compressed, "out/x.img.xz");
	ck_assert_str_eq(b.root_image, "elsewhere/root.ext4");
	build_release(&b);
}
END_TEST

/* An image without a disk section has none of a disk's outputs. */
START_TEST(image_has_no_disk_outputs)
{
	struct build_opts o = { .output = out_img };
	struct recipe r = { 0 };
	struct build b = { .work_lock = -1 };

	ck_assert_int_eq(stage_image_setup(&o, &r, &b), 0);
	ck_assert_ptr_null(b.bmap);
	ck_assert_ptr_null(b.compressed);
	ck_assert_ptr_null(b.root_image);
	build_release(&b);
}
END_TEST

/* NAME.roothash beside the disk: the hex root hash and a newline; nothing without a verity root. */
START_TEST(root_hash_file)
{
	struct build_opts o = { 0 };
	struct recipe r = { 0 };
	struct build b = { .work_lock = -1 };
	struct buf text = { 0 };
	struct stat st;
	char *path;

	o.output = xasprintf("%s/x.img", dir);
	path = xasprintf("%s/x.roothash", dir);
	ck_assert_int_eq(stage_image_extras(&o, &r, &b), 0);
	ck_assert_int_ne(stat(path, &st), 0);
	memset(b.root_hash, 'a', 64);
	b.root_hash[64] = '\0';
	ck_assert_int_eq(stage_image_extras(&o, &r, &b), 0);
	ck_assert_int_eq(readfile_read(path, 1024, &text, NULL), 0);
	ck_assert_uint_eq(text.len, 65);
	ck_assert_int_eq(memcmp(text.p, b.root_hash, 64), 0);
	ck_assert_int_eq(text.p[64], '\n');
	buf_release(&text);
	free(path);
	free(o.output);
	build_release(&b);
}
END_TEST

Suite *stage_image_suite(void)
{
	Suite *s = suite_create("stage_image");
	TCase *tc = tcase_create("stage_image");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, disk_outputs_beside_the_disk);
	tcase_add_test(tc, disk_outputs_as_asked);
	tcase_add_test(tc, image_has_no_disk_outputs);
	tcase_add_test(tc, root_hash_file);
	suite_add_tcase(s, tc);
	return s;
}
