/*
 * The ext4 writer's regular files: one extent per data range of the source (holes stay holes),
 * the bytes copied by the kernel or, where it cannot, by hand, and the file linked by name.
 */
#include "ext4_fixture.h"
#include "image/ext4dir.h"
#include "image/ext4file.h"
#include "image/ext4inode.h"

static struct ext4_fixture x;

static void setup(void)
{
	fx_setup(&x.f, "ext4file", fx_ext4);
	ex_create(&x);
	ck_assert_int_eq(ext4dir_add(&x.w, ex_node(&x, "etc")), 0);
	ck_assert_int_eq(ext4dir_add(&x.w, ex_node(&x, "var")), 0);
}

static void teardown(void)
{
	ex_release(&x, 0);
	fx_teardown(&x.f);
}

/* The extents of `ino` as "LBLK+LEN ..." (leaves only). */
static void extents(ext2_ino_t ino, struct ext2_inode_large *in, char *buf, size_t n)
{
	ext2_extent_handle_t h;
	struct ext2fs_extent e;
	size_t used = 0;
	errcode_t err;

	buf[0] = 0;
	ck_assert_int_eq(ext2fs_extent_open2(x.w.fs, ino, (struct ext2_inode *)in, &h), 0);
	for (err = ext2fs_extent_get(h, EXT2_EXTENT_ROOT, &e); !err;
	     err = ext2fs_extent_get(h, EXT2_EXTENT_NEXT_LEAF, &e))
		if (e.e_flags & EXT2_EXTENT_FLAGS_LEAF)
			used += (size_t)snprintf(buf + used, n - used, "%s%llu+%u", used ? " " : "",
						 (unsigned long long)e.e_lblk, e.e_len);
	ext2fs_extent_free(h);
}

/* `len` bytes at `off` of the file `ino`, read back from the sink through the filesystem. */
static void read_back(ext2_ino_t ino, uint64_t off, char *buf, unsigned len)
{
	ext2_file_t f;
	unsigned got = 0;

	ck_assert_int_eq(ext2fs_file_open(x.w.fs, ino, 0, &f), 0);
	ck_assert_int_eq(ext2fs_file_llseek(f, off, EXT2_SEEK_SET, NULL), 0);
	ck_assert_int_eq(ext2fs_file_read(f, buf, len, &got), 0);
	ck_assert_uint_eq(got, len);
	ext2fs_file_close(f);
}

static void check_data(void)
{
	struct ext2_inode_large in;
	char ext[128], buf[10000], want[10000];
	ext2_ino_t ino;

	ino = ex_inode(&x, "etc/data", &in);
	ck_assert_uint_eq(EXT2_I_SIZE(&in), 10000);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFREG | 0640);
	ck_assert(in.i_flags & EXT4_EXTENTS_FL);
	extents(ino, &in, ext, sizeof(ext));
	ck_assert_str_eq(ext, "0+3");
	ext2fs_flush(x.w.fs); /* the data went to the sink directly; metadata is cached */
	read_back(ino, 0, buf, sizeof(buf));
	memset(want, 'd', sizeof(want));
	ck_assert_int_eq(memcmp(buf, want, sizeof(buf)), 0);
	ino = ex_inode(&x, "var/sparse", &in);
	extents(ino, &in, ext, sizeof(ext));
	ck_assert_str_eq(ext, "0+1 4+1");
	read_back(ino, 4 * BLOCK_SIZE, buf, 100);
	memset(want, 'b', 100);
	ck_assert_int_eq(memcmp(buf, want, 100), 0);
	read_back(ino, BLOCK_SIZE, buf, 100); /* a hole reads as zeros */
	memset(want, 0, 100);
	ck_assert_int_eq(memcmp(buf, want, 100), 0);
}

START_TEST(extents_and_data)
{
	ext2_ino_t found = 0;

	ck_assert_int_eq(ext4file_add(&x.w, ex_node(&x, "etc/data")), 0);
	ck_assert_int_eq(ext4file_add(&x.w, ex_node(&x, "var/sparse")), 0);
	check_data();
	ck_assert_int_eq(ext2fs_lookup(x.w.fs, x.w.ino[ex_node(&x, "var")], "sparse", 6, NULL,
				       &found), 0);
	ck_assert_uint_eq(found, x.w.ino[ex_node(&x, "var/sparse")]);
}
END_TEST

/* Where copy_file_range() cannot work, the bytes go through user space: the same result. */
START_TEST(copied_by_hand)
{
	x.w.kernel_copy = 0;
	ck_assert_int_eq(ext4file_add(&x.w, ex_node(&x, "etc/data")), 0);
	ck_assert_int_eq(ext4file_add(&x.w, ex_node(&x, "var/sparse")), 0);
	ck_assert_int_eq(x.w.kernel_copy, 0);
	check_data();
}
END_TEST

/* A file the manifest lists that the tree lacks is refused with a message, not invented. */
START_TEST(missing_source)
{
	char *path = xasprintf("%s/etc/data", x.f.st.root);

	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_lt(ext4file_add(&x.w, ex_node(&x, "etc/data")), 0);
	free(path);
}
END_TEST

Suite *ext4file_suite(void)
{
	Suite *s = suite_create("ext4file");
	TCase *tc = tcase_create("ext4file");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, extents_and_data);
	tcase_add_test(tc, copied_by_hand);
	tcase_add_test(tc, missing_source);
	suite_add_tcase(s, tc);
	return s;
}
