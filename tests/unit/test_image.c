/*
 * The ext4 writer through its API: a small staging tree and manifest become an image, read back
 * with libext2fs: inode order, types, owners, modes, times, link counts, extents and holes.
 */
#include <check.h>
#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2fs.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image.h"
#include "lib/log.h"
#include "lib/manifest.h"
#include "lib/str.h"

#define SDE 1000
#define BS 4096

static char top[64], out[128];
static struct staging st;
static struct recipe_image im;
static ext2_filsys fs;

static struct manifest_entry *add(const char *path, char type, uint32_t mode, uint64_t size)
{
	struct manifest_entry *e = manifest_add(&st.manifest, path);

	e->type = type;
	e->mode = mode;
	e->size = size;
	e->mtime = 50;
	return e;
}

/* `len` bytes of `c` at `off` in the staging file `rel` (created, holes elsewhere). */
static void put(const char *rel, off_t off, size_t len, char c)
{
	char *path = xasprintf("%s/%s", st.root, rel), *data = xmalloc(len);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	ck_assert_int_ge(fd, 0);
	memset(data, c, len);
	ck_assert_int_eq(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
	free(data);
	free(path);
}

static void mkd(const char *rel)
{
	char *path = xasprintf("%s/%s", st.root, rel);

	ck_assert_int_eq(mkdir(path, 0755), 0);
	free(path);
}

static void setup(void)
{
	struct image_params p = { .im = &im, .output = out, .source_date_epoch = SDE };
	struct manifest_entry *e;

	snprintf(top, sizeof(top), "/var/tmp/mki-unit-image-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(out, sizeof(out), "%s/out.ext4", top);
	memset(p.seed, '7', 64);
	log_set_level(LOG_ERROR); /* no progress lines */
	manifest_init(&st.manifest);
	st.root = xasprintf("%s/root", top);
	ck_assert_int_eq(mkdir(st.root, 0755), 0);
	mkd("etc");
	mkd("var");
	put("etc/data", 0, 10000, 'd');
	put("var/sparse", 0, BS, 'a');
	put("var/sparse", 4 * BS, 100, 'b');
	add("", MF_DIR, 0755, 0);
	add("etc", MF_DIR, 0755, 0);
	e = add("etc/data", MF_REG, 0640, 10000);
	e->uid = 1000;
	e->gid = 100;
	add("etc/data2", MF_HARDLINK, 0640, 0)->target = xstrdup("etc/data");
	add("etc/link", MF_SYMLINK, 0777, 0)->target = xstrdup("data");
	add("var", MF_DIR, 0755, 0);
	add("var/sparse", MF_REG, 0644, 4 * BS + 100)->mtime = SDE + 500; /* clamped */
	manifest_sort(&st.manifest);
	ck_assert_int_eq(image_write(&st, &p), 0);
	ck_assert_int_eq(ext2fs_open(out, 0, 0, 0, unix_io_manager, &fs), 0);
}

static void teardown(void)
{
	char *cmd = xasprintf("rm -rf '%s'", top);

	ext2fs_close_free(&fs);
	staging_release(&st);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

static ext2_ino_t inode_of(const char *path, struct ext2_inode_large *in)
{
	ext2_ino_t ino = 0;

	ck_assert_msg(!ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &ino), "%s", path);
	ck_assert_int_eq(ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)in, sizeof(*in)), 0);
	return ino;
}

/* The extents of `ino` as "LBLK+LEN ..." (leaves only). */
static void extents(ext2_ino_t ino, struct ext2_inode_large *in, char *buf, size_t n)
{
	ext2_extent_handle_t h;
	struct ext2fs_extent x;
	size_t used = 0;
	errcode_t err;

	buf[0] = 0;
	ck_assert_int_eq(ext2fs_extent_open2(fs, ino, (struct ext2_inode *)in, &h), 0);
	for (err = ext2fs_extent_get(h, EXT2_EXTENT_ROOT, &x); !err;
	     err = ext2fs_extent_get(h, EXT2_EXTENT_NEXT_LEAF, &x))
		if (x.e_flags & EXT2_EXTENT_FLAGS_LEAF)
			used += (size_t)snprintf(buf + used, n - used, "%s%llu+%u", used ? " " : "",
						 (unsigned long long)x.e_lblk, x.e_len);
	ext2fs_extent_free(h);
}

/* Inodes are handed out in sorted path order, after the reserved ones and lost+found. */
START_TEST(inodes_in_path_order)
{
	static const char *const order[] = { "etc", "etc/data", "etc/link", "var", "var/sparse" };
	struct ext2_inode_large in;
	ext2_ino_t prev = EXT2_FIRST_INO(fs->super), ino;
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		ino = inode_of(order[i], &in);
		ck_assert_msg(ino > prev, "'%s' is inode %u, after %u", order[i], ino, prev);
		prev = ino;
	}
	ck_assert_uint_eq(inode_of("etc/data2", &in), inode_of("etc/data", &in));
}
END_TEST

START_TEST(inode_metadata)
{
	struct ext2_inode_large in;

	inode_of("etc/data", &in);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFREG | 0640);
	ck_assert_uint_eq(inode_uid(in), 1000);
	ck_assert_uint_eq(inode_gid(in), 100);
	ck_assert_uint_eq(EXT2_I_SIZE(&in), 10000);
	ck_assert_uint_eq(in.i_links_count, 2);
	ck_assert_uint_eq(in.i_mtime, 50);
	ck_assert_uint_eq(in.i_ctime, SDE);
	inode_of("var/sparse", &in);
	ck_assert_uint_eq(in.i_mtime, SDE);
	inode_of("etc/link", &in);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFLNK | 0777);
	ck_assert_uint_eq(EXT2_I_SIZE(&in), 4);
	ck_assert(!(in.i_flags & EXT4_EXTENTS_FL)); /* a fast symlink: the target is in i_block */
	ck_assert_int_eq(memcmp(in.i_block, "data", 4), 0);
	inode_of("etc", &in);
	ck_assert_uint_eq(in.i_mode, LINUX_S_IFDIR | 0755);
	ck_assert_uint_eq(in.i_links_count, 2);
	inode_of("", &in);
	ck_assert_uint_eq(in.i_links_count, 5); /* ".", "..", etc, var, lost+found */
}
END_TEST

START_TEST(extents_keep_holes)
{
	struct ext2_inode_large in;
	char buf[256], data[BS];
	ext2_file_t f;
	unsigned got = 0;
	ext2_ino_t ino;

	ino = inode_of("etc/data", &in);
	ck_assert(in.i_flags & EXT4_EXTENTS_FL);
	extents(ino, &in, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0+3");
	ino = inode_of("var/sparse", &in);
	extents(ino, &in, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0+1 4+1");
	ck_assert_int_eq(ext2fs_file_open(fs, ino, 0, &f), 0);
	ck_assert_int_eq(ext2fs_file_llseek(f, 4 * BS, EXT2_SEEK_SET, NULL), 0);
	ck_assert_int_eq(ext2fs_file_read(f, data, sizeof(data), &got), 0);
	ck_assert_uint_eq(got, 100);
	ck_assert_int_eq(data[0], 'b');
	ck_assert_int_eq(data[99], 'b');
	ext2fs_file_close(f);
}
END_TEST

START_TEST(fsck_clean)
{
	char *cmd = xasprintf("e2fsck -fn '%s' >/dev/null 2>&1", out);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}
END_TEST

/* image_fs_uuid: an ext4 superblock's UUID, a FAT32 and a FAT16 volume id, nothing else. */
START_TEST(fs_uuid_as_blkid)
{
	char file[] = "/tmp/mki-unit-fsuuid-XXXXXX", id[37];
	unsigned char b[4096] = { 0 };
	static const unsigned char u[16] = { 0x0a, 0x1b, 0x2c, 0x3d, 0, 0, 0x40, 0, 0x80, 0,
					     0, 0x11, 0x22, 0x33, 0xaa, 0xbb };
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	b[2048 + 1024 + 56] = 0x53; /* an ext4 superblock 2048 bytes in */
	b[2048 + 1024 + 57] = 0xef;
	memcpy(b + 2048 + 1024 + 104, u, 16);
	b[510] = 0x55; /* a FAT32 boot sector at 0 */
	b[511] = 0xaa;
	memcpy(b + 82, "FAT32   ", 8);
	b[66] = 0x29;
	b[67] = 0x78; b[68] = 0x56; b[69] = 0x34; b[70] = 0x12;
	ck_assert_int_eq(write(fd, b, sizeof(b)), (ssize_t)sizeof(b));
	ck_assert_int_eq(image_fs_uuid(file, 2048, id), 0);
	ck_assert_str_eq(id, "0a1b2c3d-0000-4000-8000-00112233aabb");
	ck_assert_int_eq(image_fs_uuid(file, 0, id), 0);
	ck_assert_str_eq(id, "1234-5678");
	memset(b + 82, 0, 8); /* FAT16: the id at 39 */
	memcpy(b + 54, "FAT16   ", 8);
	b[38] = 0x29;
	b[39] = 0xef; b[40] = 0xbe; b[41] = 0xad; b[42] = 0xde;
	ck_assert_int_eq(pwrite(fd, b, 512, 0), 512);
	ck_assert_int_eq(image_fs_uuid(file, 0, id), 0);
	ck_assert_str_eq(id, "DEAD-BEEF");
	ck_assert_int_eq(image_fs_uuid(file, 1024, id), -1); /* zeros */
	ck_assert_str_eq(id, "");
	ck_assert_int_eq(image_fs_uuid(file, 4000, id), -1); /* short */
	ck_assert_int_eq(image_fs_uuid("/nonexistent", 0, id), -1);
	close(fd);
	unlink(file);
}
END_TEST

Suite *image_suite(void)
{
	Suite *s = suite_create("image");
	TCase *tc = tcase_create("ext4");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, inodes_in_path_order);
	tcase_add_test(tc, inode_metadata);
	tcase_add_test(tc, extents_keep_holes);
	tcase_add_test(tc, fsck_clean);
	tcase_add_test(tc, fs_uuid_as_blkid);
	suite_add_tcase(s, tc);
	return s;
}
