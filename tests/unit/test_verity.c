#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/verity.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/readfile.h"

#define UUID_TEXT "8f0e3b5c-4a1d-4e2f-9b6a-0c7d5e3f2a1b"

static char top[] = "/tmp/test-verity-XXXXXX";

static void params(struct verity_params *vp, unsigned threads)
{
	static const uint8_t uuid[16] = { 0x8f, 0x0e, 0x3b, 0x5c, 0x4a, 0x1d, 0x4e, 0x2f,
					  0x9b, 0x6a, 0x0c, 0x7d, 0x5e, 0x3f, 0x2a, 0x1b };
	unsigned i;

	memset(vp, 0, sizeof(*vp));
	for (i = 0; i < 32; i++)
		vp->salt[i] = (uint8_t)(0xa0 + i);
	memcpy(vp->uuid, uuid, 16);
	vp->name = "data";
	vp->threads = threads;
}

static char *at(const char *name)
{
	static char path[4][256];
	static int n;

	n = (n + 1) % 4;
	snprintf(path[n], sizeof(path[n]), "%s/%s", top, name);
	return path[n];
}

/*
 * `blocks` of data: block b filled with b's low byte, except that with `sparse` only every
 * 997th block and the last are written (the rest are holes, some whole chunks of them).
 */
static void make_data(const char *path, uint64_t blocks, int sparse)
{
	uint8_t buf[VERITY_BLOCK];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	uint64_t b;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)(blocks * VERITY_BLOCK)), 0);
	for (b = 0; b < blocks; b++) {
		if (sparse && b % 997 && b + 1 != blocks)
			continue;
		memset(buf, (int)(b & 0xff) ^ 0x5a, sizeof(buf));
		buf[0] = (uint8_t)(b >> 8);
		ck_assert_int_eq(pwrite(fd, buf, sizeof(buf), (off_t)(b * VERITY_BLOCK)),
				 VERITY_BLOCK);
	}
	close(fd);
}

/* Our tree of `data` into `out` (a whole file), its root hash into `root`. */
static int ours(const char *data, const char *out, unsigned threads, char root[65])
{
	struct verity_params vp;
	struct sink k;
	struct stat st;
	int fd = open(data, O_RDONLY), ret;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	params(&vp, threads);
	sink_init_file(&k, out);
	ret = sink_begin(&k, verity_hash_size((uint64_t)st.st_size));
	if (!ret)
		ret = verity_write(fd, 0, (uint64_t)st.st_size, &vp, &k, root);
	if (!ret)
		ret = sink_commit(&k);
	sink_release(&k);
	close(fd);
	return ret;
}

static int have_veritysetup(void)
{
	return system("command -v veritysetup >/dev/null 2>&1") == 0;
}

/* veritysetup's tree of `data` into `out`, its root hash into `root`. */
static void theirs(const char *data, const char *out, char root[65])
{
	struct buf text = { 0 };
	char cmd[1024];
	int i;

	snprintf(cmd, sizeof(cmd), "veritysetup format --salt=");
	for (i = 0; i < 32; i++)
		snprintf(cmd + strlen(cmd), 3, "%02x", 0xa0 + i);
	snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " --uuid=%s --data-block-size=4096 "
		 "--hash-block-size=4096 --root-hash-file=%s %s %s >/dev/null", UUID_TEXT,
		 at("root"), data, out);
	unlink(out);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(readfile_read(at("root"), 4096, &text, NULL), 0);
	ck_assert_uint_eq(text.len, 64);
	memcpy(root, text.p, 64);
	root[64] = 0;
	buf_release(&text);
}

static void same_files(const char *a, const char *b)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "cmp %s %s", a, b);
	ck_assert_int_eq(system(cmd), 0);
}

static off_t size_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(top));
}

static void teardown(void)
{
	fsutil_remove_tree(top);
	memcpy(top, "/tmp/test-verity-XXXXXX", sizeof(top));
}

/* 1 block, 128 (one hash block), 129 (2 levels), 128 * 128 + 1 (3 levels, sparse). */
static const struct {
	uint64_t blocks;
	int sparse;
	unsigned levels;
} shapes[] = { { 1, 0, 0 }, { 128, 0, 1 }, { 129, 0, 2 }, { 1500, 0, 2 }, { 16385, 1, 3 } };

START_TEST(known_answer)
{
	char root[65], root2[65], want[65];
	uint64_t blocks = shapes[_i].blocks, level0 = (blocks + 127) / 128, size;

	make_data(at("data"), blocks, shapes[_i].sparse);
	ck_assert_int_eq(ours(at("data"), at("ours"), 2, root), 0);
	/* superblock, then the levels: 1 + 1 (+ level 0 ...) blocks */
	size = shapes[_i].levels == 0 ? 1 : shapes[_i].levels == 1 ? 2 :
	       shapes[_i].levels == 2 ? 2 + level0 : 3 + (level0 + 127) / 128 - 1 + level0;
	ck_assert_uint_eq((uint64_t)size_of(at("ours")), size * VERITY_BLOCK);
	ck_assert_uint_eq(verity_hash_size(blocks * VERITY_BLOCK), size * VERITY_BLOCK);
	ck_assert_int_eq(ours(at("data"), at("ours1"), 1, root2), 0); /* one thread: the same */
	ck_assert_str_eq(root, root2);
	same_files(at("ours"), at("ours1"));
	if (!have_veritysetup()) {
		fprintf(stderr, "test_verity: veritysetup missing, not compared with it\n");
		return;
	}
	theirs(at("data"), at("theirs"), want);
	ck_assert_str_eq(root, want);
	same_files(at("ours"), at("theirs"));
}
END_TEST

static void hex(const uint8_t *raw, char out[65])
{
	int i;

	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

/* Without veritysetup too: the root of one block and of one hash block's worth, by hand. */
START_TEST(root_by_hand)
{
	uint8_t *buf = malloc(32 + VERITY_BLOCK), level0[VERITY_BLOCK], digest[32];
	struct verity_params vp;
	struct hash h;
	char root[65], want[65];
	int fd, b;

	params(&vp, 0);
	make_data(at("data"), 128, 0);
	fd = open(at("data"), O_RDONLY);
	ck_assert_int_eq(hash_init(&h, HASH_SHA256), 0);
	for (b = 0; b < 128; b++) {
		ck_assert_int_eq(pread(fd, buf, VERITY_BLOCK, (off_t)b * VERITY_BLOCK),
				 VERITY_BLOCK);
		hash_sha256_pair(&h, vp.salt, 32, buf, VERITY_BLOCK, level0 + 32 * b);
		if (!b)
			hex(level0, want); /* the root of the first block alone */
	}
	close(fd);
	ck_assert_int_eq(truncate(at("data"), VERITY_BLOCK), 0);
	ck_assert_int_eq(ours(at("data"), at("ours"), 0, root), 0);
	ck_assert_str_eq(root, want);
	make_data(at("data"), 128, 0);
	ck_assert_int_eq(ours(at("data"), at("ours"), 0, root), 0);
	hash_sha256_pair(&h, vp.salt, 32, level0, VERITY_BLOCK, digest);
	hex(digest, want);
	ck_assert_str_eq(root, want);
	fd = open(at("ours"), O_RDONLY);
	ck_assert_int_eq(pread(fd, buf, VERITY_BLOCK, VERITY_BLOCK), VERITY_BLOCK);
	ck_assert_mem_eq(buf, level0, VERITY_BLOCK);
	ck_assert_int_eq(pread(fd, buf, VERITY_BLOCK, 0), VERITY_BLOCK);
	ck_assert_mem_eq(buf, "verity\0\0\1\0\0\0\1\0\0\0", 16);
	ck_assert_mem_eq(buf + 16, vp.uuid, 16);
	ck_assert_str_eq((char *)buf + 32, "sha256");
	ck_assert_uint_eq(buf[72], 128);
	ck_assert_mem_eq(buf + 88, vp.salt, 32);
	close(fd);
	hash_release(&h);
	free(buf);
}
END_TEST

/* Data that is not whole blocks, or none, is refused; a hash region too small as well. */
START_TEST(refused)
{
	struct verity_params vp;
	struct sink k;
	char root[65];
	int fd;

	params(&vp, 0);
	make_data(at("data"), 300, 0);
	fd = open(at("data"), O_RDWR);
	sink_init_file(&k, at("ours"));
	ck_assert_int_eq(sink_begin(&k, 1 << 20), 0);
	log_set_level(LOG_QUIET);
	ck_assert_int_eq(verity_write(fd, 0, 300 * VERITY_BLOCK - 512, &vp, &k, root),
			 -MKI_E_IMAGE);
	ck_assert_str_eq(root, "");
	ck_assert_int_eq(verity_write(fd, 0, 0, &vp, &k, root), -MKI_E_IMAGE);
	sink_release(&k);
	sink_init_region(&k, fd, 0, 3 * VERITY_BLOCK, "small");
	ck_assert_int_eq(verity_write(fd, 0, 300 * VERITY_BLOCK, &vp, &k, root), -MKI_E_NOSPACE);
	sink_release(&k);
	close(fd);
	log_set_level(LOG_INFO);
}
END_TEST

/*
 * Without a superblock (RAUC's bundles): the same tree, one block shorter - the superblock's
 * block is all that differs - and the same root hash.
 */
START_TEST(no_superblock)
{
	struct verity_params vp;
	struct sink k;
	char root[65], root_sb[65];
	uint8_t *a = malloc(64 * VERITY_BLOCK), *b = malloc(64 * VERITY_BLOCK);
	uint64_t bytes = 1500 * VERITY_BLOCK, n = verity_tree_size(bytes, 0);
	int fd, h;

	make_data(at("data"), 1500, 0);
	ck_assert_int_eq(ours(at("data"), at("sb"), 0, root_sb), 0);
	ck_assert_uint_eq(n + VERITY_BLOCK, verity_hash_size(bytes));
	params(&vp, 0);
	vp.no_superblock = 1;
	fd = open(at("data"), O_RDONLY);
	sink_init_file(&k, at("nosb"));
	ck_assert_int_eq(sink_begin(&k, n), 0);
	ck_assert_int_eq(verity_write(fd, 0, bytes, &vp, &k, root), 0);
	ck_assert_int_eq(sink_commit(&k), 0);
	sink_release(&k);
	close(fd);
	ck_assert_str_eq(root, root_sb);
	ck_assert_uint_eq((uint64_t)size_of(at("nosb")), n);
	fd = open(at("sb"), O_RDONLY);
	h = open(at("nosb"), O_RDONLY);
	ck_assert_int_eq(pread(fd, a, n, VERITY_BLOCK), (ssize_t)n);
	ck_assert_int_eq(pread(h, b, n, 0), (ssize_t)n);
	ck_assert_mem_eq(a, b, n);
	close(fd);
	close(h);
	free(a);
	free(b);
}
END_TEST

Suite *verity_suite(void)
{
	Suite *s = suite_create("verity");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, known_answer, 0, sizeof(shapes) / sizeof(shapes[0]));
	tcase_add_test(tc, root_by_hand);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, no_superblock);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
