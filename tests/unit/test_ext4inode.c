/*
 * The ext4 writer's inodes: metadata from the manifest (times past 2038 too), device numbers
 * in both encodings, FIFOs, sockets, symlinks, hard links, xattrs, mke2fs's own inodes.
 */
#include "ext4_fixture.h"
#include "image/ext4dir.h"
#include "image/ext4inode.h"
#include "lib/err.h"

static struct ext4_fixture x;

/* The fixture's filesystem with its two directories in place. */
static void setup(void)
{
	fx_setup(&x.f, "ext4inode", fx_ext4);
	manifest_set_xattr(manifest_get(&x.f.st.manifest, ""), "user.root", "r", 1);
	ex_create(&x);
	ck_assert_int_eq(ext4dir_add(&x.w, ex_node(&x, "etc")), 0);
	ck_assert_int_eq(ext4dir_add(&x.w, ex_node(&x, "var")), 0);
}

static void teardown(void)
{
	ex_release(&x, 0);
	fx_teardown(&x.f);
}

START_TEST(meta)
{
	union ext4inode_buf u;

	memset(&u, 0, sizeof(u));
	ext4inode_apply_meta(&u.in, &x.f.t.v[ex_node(&x, "etc")], FX_SDE);
	ck_assert_uint_eq(u.in.i_mode, LINUX_S_IFDIR | 0755);
	ck_assert_uint_eq(inode_uid(u.in), 7);
	ck_assert_uint_eq(u.in.i_mtime, 50);
	ck_assert_uint_eq(u.in.i_atime, FX_SDE);
	ck_assert_uint_eq(u.in.i_crtime, FX_SDE);
	ck_assert_uint_eq(u.in.i_links_count, 0); /* a directory's count is the directory code's */
	ext4inode_apply_meta(&u.in, &x.f.t.v[ex_node(&x, "etc/data")], FX_SDE);
	ck_assert_uint_eq(u.in.i_mode, LINUX_S_IFREG | 0640);
	ck_assert_uint_eq(inode_uid(u.in), 1000);
	ck_assert_uint_eq(u.in.i_links_count, 2);
	ext4inode_apply_meta(&u.in, &x.f.t.v[ex_node(&x, "var/sparse")], FX_SDE);
	ck_assert_uint_eq(u.in.i_mtime, FX_SDE); /* clamped */
}
END_TEST

/* Times past 2038 carry their high bits in the extra field's epoch bits. */
START_TEST(times_past_2038)
{
	union ext4inode_buf u;
	int64_t t = (1ll << 32) + 5;

	memset(&u, 0, sizeof(u));
	ext4inode_apply_meta(&u.in, &x.f.t.v[0], t);
	ck_assert_uint_eq(u.in.i_ctime, 5);
	ck_assert_uint_eq(u.in.i_ctime_extra & 3, 1);
	ck_assert_uint_eq(u.in.i_mtime_extra & 3, 0);
}
END_TEST

START_TEST(devices_fifos_sockets)
{
	struct ext2_inode_large in;
	size_t i;

	for (i = 0; i < x.f.t.n; i++)
		if (strchr("cbps", x.f.t.v[i].e->type))
			ck_assert_int_eq(ext4inode_add_special(&x.w, i), 0);
	ex_inode(&x, "var/null", &in);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFCHR | 0666);
	ck_assert_uint_eq(in.i_block[0], 1 * 256 + 3); /* old encoding: both fit a byte */
	ex_inode(&x, "var/big", &in);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFBLK | 0660);
	ck_assert_uint_eq(in.i_block[0], 0);
	ck_assert_uint_eq(in.i_block[1], (70000 & 0xff) | (259 << 8) | ((70000 & ~0xffu) << 12));
	ex_inode(&x, "etc/fifo", &in);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFIFO | 0600);
	ex_inode(&x, "etc/sock", &in);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFSOCK | 0600);
	ck_assert_uint_eq(in.i_links_count, 1);
}
END_TEST

START_TEST(symlink_and_hardlink)
{
	struct ext2_inode_large in;
	ext2_ino_t found = 0;

	ck_assert_int_eq(ext4inode_add_symlink(&x.w, ex_node(&x, "etc/link")), 0);
	ex_inode(&x, "etc/link", &in);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFLNK | 0777);
	ck_assert_int_eq(memcmp(in.i_block, "data", 4), 0);
	/* a hard link names the inode of its first name: here the symlink's node stands in */
	x.f.t.v[ex_node(&x, "etc/data2")].link = ex_node(&x, "etc/link");
	ck_assert_int_eq(ext4inode_add_hardlink(&x.w, ex_node(&x, "etc/data2")), 0);
	ck_assert_int_eq(ext2fs_lookup(x.w.fs, x.w.ino[ex_node(&x, "etc")], "data2", 5, NULL,
				       &found), 0);
	ck_assert_uint_eq(found, x.w.ino[ex_node(&x, "etc/link")]);
}
END_TEST

START_TEST(xattrs)
{
	struct ext2_xattr_handle *h = NULL;
	void *value = NULL;
	size_t len = 0;

	ck_assert_int_eq(ext4inode_set_xattrs(&x.w, 0), 0);
	ck_assert_int_eq(ext2fs_xattrs_open(x.w.fs, EXT2_ROOT_INO, &h), 0);
	ck_assert_int_eq(ext2fs_xattrs_read(h), 0);
	ck_assert_int_eq(ext2fs_xattr_get(h, "user.root", &value, &len), 0);
	ck_assert_uint_eq(len, 1);
	ck_assert_int_eq(memcmp(value, "r", 1), 0);
	ext2fs_free_mem(&value);
	ext2fs_xattrs_close(&h);
}
END_TEST

/* mke2fs's inodes in use get the epoch; those never used stay all zero. */
START_TEST(reserved_inodes)
{
	union ext4inode_buf u;

	ck_assert_int_eq(ext4inode_stamp_reserved(&x.w), 0);
	ck_assert_int_eq(ext4inode_read(&x.w, EXT2_JOURNAL_INO, &u.in, "journal"), 0);
	ck_assert_uint_eq(u.in.i_mtime, FX_SDE);
	ck_assert_uint_eq(u.in.i_atime, FX_SDE);
	ck_assert_int_eq(ext4inode_read(&x.w, EXT2_FIRST_INO(x.w.fs->super), &u.in, "lf"), 0);
	ck_assert_uint_eq(u.in.i_mtime, FX_SDE);
	ck_assert_int_eq(ext4inode_read(&x.w, EXT2_BOOT_LOADER_INO, &u.in, "boot"), 0);
	ck_assert_uint_eq(u.in.i_mtime, 0);
	ck_assert_int_eq(ext4inode_is_lost_found(&x.w, 0), 0);
}
END_TEST

Suite *ext4inode_suite(void)
{
	Suite *s = suite_create("ext4inode");
	TCase *tc = tcase_create("ext4inode");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, meta);
	tcase_add_test(tc, times_past_2038);
	tcase_add_test(tc, devices_fifos_sockets);
	tcase_add_test(tc, symlink_and_hardlink);
	tcase_add_test(tc, xattrs);
	tcase_add_test(tc, reserved_inodes);
	suite_add_tcase(s, tc);
	return s;
}
