/*
 * The ext4 writer's directories: a small one stays linear, a large one is an htree that
 * e2fsck accepts and whose names all resolve; lost+found is mke2fs's and must stay a directory.
 */
#include "ext4_fixture.h"
#include "image/ext4dir.h"
#include "image/ext4inode.h"
#include "lib/err.h"

#define MANY 300

static struct ext4_fixture x;

static void teardown(void)
{
	ex_release(&x, 0);
	fx_teardown(&x.f);
}

START_TEST(linear)
{
	struct ext2_inode_large in;
	ext2_ino_t found = 0;

	fx_setup(&x.f, "ext4dir", fx_ext4);
	ex_create(&x);
	ck_assert_int_eq(ext4dir_add(&x.w, ex_node(&x, "etc")), 0);
	ex_inode(&x, "etc", &in);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFDIR | 0755);
	ck_assert_uint_eq(inode_uid(in), 7);
	ck_assert_uint_eq(in.i_links_count, 2);
	ck_assert(!(in.i_flags & EXT2_INDEX_FL));
	ck_assert_uint_eq(EXT2_I_SIZE(&in), BLOCK_SIZE);
	ck_assert_int_eq(ext2fs_lookup(x.w.fs, EXT2_ROOT_INO, "etc", 3, NULL, &found), 0);
	ck_assert_uint_eq(found, x.w.ino[ex_node(&x, "etc")]);
}
END_TEST

/* 300 long names: more than a block of entries, so an htree; finished, e2fsck finds it clean. */
START_TEST(htree)
{
	struct ext2_inode_large in;
	ext2_ino_t found;
	char name[80];
	size_t i;

	fx_setup(&x.f, "ext4dir", fx_ext4);
	fx_add(&x.f, "many", MF_DIR, 0755, 0);
	for (i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "many/a-rather-long-file-name-to-fill-blocks-%04zu",
			 i);
		fx_add(&x.f, name, MF_FIFO, 0644, 0);
	}
	manifest_sort(&x.f.st.manifest);
	ex_create(&x);
	ck_assert_int_eq(ext4fs_wants_htree(x.w.dir_bytes[ex_node(&x, "many")]), 1);
	for (i = 1; i < x.f.t.n; i++) /* the directories and FIFOs: all the test needs */
		if (x.f.t.v[i].e->type == MF_DIR || x.f.t.v[i].e->type == MF_FIFO)
			ck_assert_int_eq(x.f.t.v[i].e->type == MF_DIR ? ext4dir_add(&x.w, i)
				       : ext4inode_add_special(&x.w, i), 0);
	ex_inode(&x, "many", &in);
	ck_assert(in.i_flags & EXT2_INDEX_FL);
	ck_assert_uint_gt(EXT2_I_SIZE(&in), 2 * BLOCK_SIZE);
	for (i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "a-rather-long-file-name-to-fill-blocks-%04zu", i);
		found = 0;
		ck_assert_int_eq(ext2fs_lookup(x.w.fs, x.w.ino[ex_node(&x, "many")], name,
					       (int)strlen(name), NULL, &found), 0);
		ck_assert_uint_ne(found, 0);
	}
	ck_assert_int_eq(ext4dir_finish(&x.w), 0);
	ck_assert_int_eq(ext4fs_finish(&x.w), 0);
	ck_assert_int_eq(sink_commit(&x.k), 0);
	ck_assert_int_eq(fx_sh(xasprintf("e2fsck -fn '%s' >/dev/null 2>&1", x.f.out)), 0);
}
END_TEST

START_TEST(lost_found)
{
	size_t i;

	fx_setup(&x.f, "ext4dir", fx_ext4);
	fx_add(&x.f, "lost+found", MF_DIR, 0700, 0)->uid = 3;
	manifest_sort(&x.f.st.manifest);
	ex_create(&x);
	i = ex_node(&x, "lost+found");
	ck_assert_int_eq(ext4inode_is_lost_found(&x.w, i), 1);
	ck_assert_int_eq(ext4dir_reuse_lost_found(&x.w, i), 0);
	ck_assert_uint_eq(x.w.ino[i], EXT2_FIRST_INO(x.w.fs->super)); /* mke2fs's */
	x.f.st.manifest.v[0]->type = MF_DIR; /* unchanged root */
	manifest_get(&x.f.st.manifest, "lost+found")->type = MF_FIFO;
	ck_assert_int_eq(ext4dir_reuse_lost_found(&x.w, i), -MKI_E_IMAGE);
}
END_TEST

Suite *ext4dir_suite(void)
{
	Suite *s = suite_create("ext4dir");
	TCase *tc = tcase_create("ext4dir");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, linear);
	tcase_add_test(tc, htree);
	tcase_add_test(tc, lost_found);
	suite_add_tcase(s, tc);
	return s;
}
