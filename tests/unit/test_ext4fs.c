/* The ext4 writer's bottom layer: sizing, identities, mke2fs in a sink, the finished superblock. */
#include "ext4_fixture.h"
#include "lib/err.h"

#define MIB (1ull << 20)

static struct ext4_fixture x;

START_TEST(arithmetic)
{
	ck_assert_uint_eq(ext4fs_div_up(0, BLOCK_SIZE), 0);
	ck_assert_uint_eq(ext4fs_div_up(1, BLOCK_SIZE), 1);
	ck_assert_uint_eq(ext4fs_div_up(BLOCK_SIZE, BLOCK_SIZE), 1);
	ck_assert_uint_eq(ext4fs_div_up(BLOCK_SIZE + 1, BLOCK_SIZE), 2);
	/* One block holds ".", "..", the dx root's room and 3996 bytes of entries. */
	ck_assert_int_eq(ext4fs_wants_htree(3996), 0);
	ck_assert_int_eq(ext4fs_wants_htree(3997), 1);
}
END_TEST

START_TEST(ids)
{
	static char good[] = "0a1b2c3d-0000-4000-8000-00112233aabb";
	static char longer[] = "0a1b2c3d-0000-4000-8000-00112233aabbc";
	static char underscore[] = "0a1b2c3d_0000-4000-8000-00112233aabb";
	struct recipe_image im = { 0 };

	ck_assert_int_eq(ext4fs_check_ids(&im), 0);
	im.uuid = good;
	ck_assert_int_eq(ext4fs_check_ids(&im), 0);
	im.hash_seed = longer;
	ck_assert_int_eq(ext4fs_check_ids(&im), -MKI_E_IMAGE);
	im.hash_seed = NULL;
	im.uuid = underscore;
	ck_assert_int_eq(ext4fs_check_ids(&im), -MKI_E_IMAGE);
}
END_TEST

/* What the fixture's tree needs: its inodes, its directories' entries, its data blocks. */
START_TEST(estimate)
{
	fx_setup(&x.f, "ext4fs", fx_ext4);
	fx_tree(&x.f);
	ext4fs_init(&x.w, &x.f.t, &x.f.p, NULL);
	ck_assert_int_eq(ext4fs_estimate(&x.w), 0);
	/* the reserved ones, then 11 entries of which one is a hard link */
	ck_assert_uint_eq(x.w.need_inodes, EXT2_GOOD_OLD_FIRST_INO + 1 + 10);
	ck_assert_uint_eq(x.w.dir_bytes[0], 2 * 12);           /* "etc", "var" */
	ck_assert_uint_eq(x.w.subdirs[0], 2);
	ck_assert_uint_eq(x.w.dir_bytes[ex_node(&x, "etc")], 4 * 12 + 16); /* "data2": 16 */
	/* data 3 + 2 (a hole stays one), directories 1 + 1 + 1 and the root's extra one */
	ck_assert_uint_eq(x.w.need_blocks, 3 + 2 + 4);
	ck_assert_uint_eq(ext4fs_first_blocks(&x.w), MIN_BLOCKS);
	x.f.im.size = 40 * MIB;
	ck_assert_uint_eq(ext4fs_first_blocks(&x.w), 40 * MIB / BLOCK_SIZE);
	ext4fs_release(&x.w);
}
END_TEST

START_TEST(create_fixed_size)
{
	static char label[] = "fixture";
	struct stat st;

	fx_setup(&x.f, "ext4fs", fx_ext4);
	x.f.im.size = 24 * MIB;
	x.f.im.label = label;
	ex_create(&x);
	ck_assert_uint_eq(x.w.blocks, 24 * MIB / BLOCK_SIZE);
	ck_assert_uint_eq(ext2fs_blocks_count(x.w.fs->super), 24 * MIB / BLOCK_SIZE);
	ck_assert_str_eq((char *)x.w.fs->super->s_volume_name, "fixture");
	ck_assert_uint_eq(x.w.fs->super->s_inode_size, INODE_SIZE);
	ck_assert(x.w.fs->super->s_flags & EXT2_FLAGS_SIGNED_HASH);
	ck_assert_int_eq(stat(x.k.tmp, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)(24 * MIB));
	ck_assert_int_eq(ext4fs_finish(&x.w), 0);
	ex_release(&x, 1);
	ck_assert_int_eq(fx_sh(xasprintf("e2fsck -fn '%s' >/dev/null 2>&1", x.f.out)), 0);
}
END_TEST

START_TEST(too_small)
{
	fx_setup(&x.f, "ext4fs", fx_ext4);
	x.f.im.size = 4 * MIB;
	fx_tree(&x.f);
	sink_init_file(&x.k, x.f.out);
	ext4fs_init(&x.w, &x.f.t, &x.f.p, &x.k);
	ck_assert_int_eq(ext4fs_estimate(&x.w), 0);
	ck_assert_int_eq(ext4fs_create(&x.w), -MKI_E_NOSPACE);
	ex_release(&x, 0);
}
END_TEST

/* The finished superblock says the epoch, whatever the clock. */
START_TEST(finish_stamps)
{
	ext2_filsys fs = NULL;

	fx_setup(&x.f, "ext4fs", fx_ext4);
	ex_create(&x);
	ck_assert_int_eq(ext4fs_finish(&x.w), 0);
	ck_assert_ptr_null(x.w.fs);
	ex_release(&x, 1);
	ck_assert_int_eq(ext2fs_open(x.f.out, 0, 0, 0, unix_io_manager, &fs), 0);
	ck_assert_uint_eq(fs->super->s_mkfs_time, FX_SDE);
	ck_assert_uint_eq(fs->super->s_lastcheck, FX_SDE);
	ck_assert_uint_eq(fs->super->s_mtime, 0);
	ck_assert_uint_eq(fs->super->s_wtime, FX_SDE);
	ext2fs_close_free(&fs);
}
END_TEST

/* In a region: mke2fs and libext2fs at its offset, nothing before it touched. */
START_TEST(create_in_region)
{
	struct ext2_super_block sb;
	char *disk;
	int fd;

	fx_setup(&x.f, "ext4fs", fx_ext4);
	fx_tree(&x.f);
	disk = xasprintf("%s/disk", x.f.top);
	fd = fx_pattern_file(disk, 24 * MIB, 'p');
	sink_init_region(&x.k, fd, 2 * MIB, 20 * MIB, "disk");
	ext4fs_init(&x.w, &x.f.t, &x.f.p, &x.k);
	ck_assert_int_eq(ext4fs_estimate(&x.w), 0);
	ck_assert_int_eq(ext4fs_create(&x.w), 0);
	ck_assert_int_eq(ext4fs_finish(&x.w), 0);
	ck_assert_int_eq(fx_all(fd, 0, 2 * MIB, 'p'), 1);
	ck_assert_int_eq(fx_all(fd, 2 * MIB + 16 * MIB, 24 * MIB, 'p'), 1);
	ck_assert_int_eq(pread(fd, &sb, sizeof(sb), 2 * MIB + 1024), (ssize_t)sizeof(sb));
	ck_assert_uint_eq(sb.s_magic, EXT2_SUPER_MAGIC);
	ck_assert_uint_eq(sb.s_blocks_count, MIN_BLOCKS);
	ex_release(&x, 1);
	close(fd);
	free(disk);
}
END_TEST

static void teardown(void)
{
	fx_teardown(&x.f);
}

Suite *ext4fs_suite(void)
{
	Suite *s = suite_create("ext4fs");
	TCase *tc = tcase_create("ext4fs");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, arithmetic);
	tcase_add_test(tc, ids);
	tcase_add_test(tc, estimate);
	tcase_add_test(tc, create_fixed_size);
	tcase_add_test(tc, too_small);
	tcase_add_test(tc, finish_stamps);
	tcase_add_test(tc, create_in_region);
	suite_add_tcase(s, tc);
	return s;
}
