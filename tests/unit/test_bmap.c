#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "emit/bmap.h"
#include "emit/bmap_internal.h"

static char top[64], img[128], map[128];

static void setup(void)
{
	snprintf(top, sizeof(top), "/tmp/mki-bmap-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(img, sizeof(img), "%s/disk.img", top);
	snprintf(map, sizeof(map), "%s/disk.bmap", top);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

/*
 * A sparse file of `size` bytes; at each (offset, length) pair, bytes that depend on their
 * offset alone (the same file whatever order the pairs come in).
 */
static void make_sparse(const char *path, off_t size, const off_t *spans, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char buf[8192];
	size_t i, k;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	for (i = 0; i < n; i += 2) {
		for (off_t at = spans[i], end = spans[i] + spans[i + 1]; at < end;) {
			size_t w = sizeof(buf);

			if ((size_t)(end - at) < w)
				w = (size_t)(end - at);

			for (k = 0; k < w; k++)
				buf[k] = (char)(((uint64_t)at + k) * 7 % 251 + 1);
			ck_assert_int_eq(pwrite(fd, buf, w, at), (ssize_t)w);
			at += (off_t)w;
		}
	}
	ck_assert_int_eq(close(fd), 0);
}

static char *slurp(const char *path, size_t *len)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Nothing in the directory but the image (and `also`): no temporary file left. */
static void only_image_left(const char *also)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s | grep -v -x -e disk.img -e '%s')\" = ''",
		 top, also ? also : "disk.img");
	ck_assert_int_eq(system(cmd), 0);
}

/* The SHA-256 of `len` bytes of `path` from `off`. */
static void sha_of(const char *path, off_t off, size_t len, char *hex)
{
	char *p = malloc(len);
	int fd = open(path, O_RDONLY);

	ck_assert_int_eq(pread(fd, p, len, off), (ssize_t)len);
	hash_sha256_hex(p, len, hex);
	close(fd);
	free(p);
}

START_TEST(human_sizes)
{
	char s[32];

	bmap_human_size(1, s, sizeof(s));
	ck_assert_str_eq(s, "1 byte");
	bmap_human_size(511, s, sizeof(s));
	ck_assert_str_eq(s, "511 bytes");
	bmap_human_size(512, s, sizeof(s));
	ck_assert_str_eq(s, "0.5 KiB");
	bmap_human_size(300ull << 20, s, sizeof(s));
	ck_assert_str_eq(s, "300.0 MiB");
	bmap_human_size(1ull << 30, s, sizeof(s));
	ck_assert_str_eq(s, "1.0 GiB");
	bmap_human_size(3ull << 40, s, sizeof(s));
	ck_assert_str_eq(s, "3.0 TiB");
}
END_TEST

/* The whole map: sizes, counts, each range's sum, and the file's own sum over itself. */
START_TEST(map_of_sparse_image)
{
	const off_t spans[] = { 0, 5, 1000 * 4096, 3000000, 40 * 1048576 + 5, 1 };
	char want[256], hex[65], *text, *at, *c;
	size_t len;

	make_sparse(img, 64 << 20, spans, 6);
	ck_assert_int_eq(bmap_write(img, map, NULL), 0);
	text = slurp(map, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "<bmap version=\"2.0\">\n"));
	ck_assert_ptr_nonnull(strstr(text, "<ImageSize> 67108864 </ImageSize>"));
	ck_assert_ptr_nonnull(strstr(text, "<BlockSize> 4096 </BlockSize>"));
	ck_assert_ptr_nonnull(strstr(text, "<BlocksCount> 16384 </BlocksCount>"));
	ck_assert_ptr_nonnull(strstr(text, "<MappedBlocksCount> 735 </MappedBlocksCount>"));
	ck_assert_ptr_nonnull(strstr(text, "<ChecksumType> sha256 </ChecksumType>"));
	ck_assert_ptr_nonnull(strstr(text, "Count of mapped blocks: 2.9 MiB or 4.5% -->"));
	sha_of(img, 0, 4096, hex);
	snprintf(want, sizeof(want), "<Range chksum=\"%s\"> 0 </Range>\n", hex);
	ck_assert_ptr_nonnull(strstr(text, want));
	sha_of(img, 1000 * 4096, 733 * 4096, hex);
	snprintf(want, sizeof(want), "<Range chksum=\"%s\"> 1000-1732 </Range>\n", hex);
	ck_assert_ptr_nonnull(strstr(text, want));
	sha_of(img, 10240 * 4096, 4096, hex);
	snprintf(want, sizeof(want), "<Range chksum=\"%s\"> 10240 </Range>\n", hex);
	ck_assert_ptr_nonnull(strstr(text, want));
	ck_assert_ptr_nonnull(strstr(text, "</BlockMap>\n</bmap>\n"));

	/* bmaptool's rule: the file's first occurrence of its sum, as zeros, hashes to that sum. */
	at = strstr(text, "<BmapFileChecksum> ");
	ck_assert_ptr_nonnull(at);
	at += strlen("<BmapFileChecksum> ");
	memcpy(want, at, 64);
	want[64] = 0;
	ck_assert(hash_sha256_hex_valid(want));
	c = strstr(text, want);
	ck_assert_ptr_eq(c, at);
	memset(at, '0', 64);
	hash_sha256_hex(text, len, hex);
	ck_assert_str_eq(hex, want);
	only_image_left("disk.bmap");
}
END_TEST

/* A size that is no multiple of the block: the last range's sum is over the bytes there are. */
START_TEST(short_last_block)
{
	const off_t spans[] = { 0, 10000 };
	char want[256], hex[65];

	make_sparse(img, 10000, spans, 2);
	ck_assert_int_eq(bmap_write(img, map, NULL), 0);
	sha_of(img, 0, 10000, hex);
	snprintf(want, sizeof(want), "<Range chksum=\"%s\"> 0-2 </Range>\n", hex);
	ck_assert_ptr_nonnull(strstr(slurp(map, NULL), want));
	ck_assert_ptr_nonnull(strstr(slurp(map, NULL), "<BlocksCount> 3 </BlocksCount>"));
	ck_assert_ptr_nonnull(strstr(slurp(map, NULL),
				     "<MappedBlocksCount> 3 </MappedBlocksCount>"));
}
END_TEST

START_TEST(all_hole)
{
	const char *text;

	make_sparse(img, 1 << 20, NULL, 0);
	ck_assert_int_eq(bmap_write(img, map, NULL), 0);
	text = slurp(map, NULL);
	ck_assert_ptr_nonnull(strstr(text, "<MappedBlocksCount> 0 </MappedBlocksCount>"));
	ck_assert_ptr_null(strstr(text, "<Range"));
	ck_assert_ptr_nonnull(strstr(text, "<BlockMap>\n    </BlockMap>\n"));
}
END_TEST

/* The same bytes give the same map, however they were written (here: in another order). */
START_TEST(reproducible)
{
	const off_t a[] = { 8192, 70000, 5 << 20, 4096 }, b[] = { 5 << 20, 4096, 8192, 70000 };
	static char first[1 << 16];
	char other[160], *text;
	size_t n1 = 0, n2 = 0;

	make_sparse(img, 16 << 20, a, 4);
	ck_assert_int_eq(bmap_write(img, map, NULL), 0);
	text = slurp(map, &n1);
	memcpy(first, text, n1);
	snprintf(other, sizeof(other), "%s/other.img", top);
	make_sparse(other, 16 << 20, b, 4);
	ck_assert_int_eq(bmap_write(other, map, NULL), 0);
	slurp(map, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_int_eq(memcmp(first, slurp(map, NULL), n1), 0);
}
END_TEST

START_TEST(missing_image)
{
	ck_assert_int_eq(bmap_write(img, map, NULL), -MKI_E_IMAGE);
	ck_assert(!exists(map));
}
END_TEST

START_TEST(not_a_file)
{
	ck_assert_int_eq(mkfifo(img, 0644), 0); /* a FIFO: refused without blocking */
	ck_assert_int_eq(bmap_write(img, map, NULL), -MKI_E_IMAGE);
	ck_assert(!exists(map));
	unlink(img);
	make_sparse(img, 0, NULL, 0); /* empty: bmaptool has nothing to copy */
	ck_assert_int_eq(bmap_write(img, map, NULL), -MKI_E_IMAGE);
	ck_assert(!exists(map));
}
END_TEST

/* An unwritable place for the map: an error, the image untouched, nothing half-written. */
START_TEST(unwritable)
{
	const off_t spans[] = { 0, 100 };
	char bad[192];

	make_sparse(img, 1 << 20, spans, 2);
	snprintf(bad, sizeof(bad), "%s/missing/disk.bmap", top);
	ck_assert_int_eq(bmap_write(img, bad, NULL), -MKI_E_IMAGE);
	snprintf(bad, sizeof(bad), "%s/disk.img/disk.bmap", top); /* a file as directory */
	ck_assert_int_eq(bmap_write(img, bad, NULL), -MKI_E_IMAGE);
	only_image_left(NULL);
}
END_TEST

/* A link where the temporary file goes is never written through. */
START_TEST(tmp_link_not_followed)
{
	const off_t spans[] = { 0, 100 };
	char link[192], target[192];

	make_sparse(img, 1 << 20, spans, 2);
	snprintf(target, sizeof(target), "%s/elsewhere", top);
	snprintf(link, sizeof(link), "%s.tmp-%d", map, (int)getpid());
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_eq(bmap_write(img, map, NULL), -MKI_E_IMAGE);
	ck_assert(!exists(map));
	ck_assert(!exists(target));
}
END_TEST

/* Interrupted: nothing written, an older map left as it was. */
START_TEST(interrupted)
{
	const off_t spans[] = { 0, 100 };
	FILE *f = fopen(map, "w");

	fputs("old", f);
	fclose(f);
	make_sparse(img, 1 << 20, spans, 2);
	err_set_interrupted(SIGTERM);
	ck_assert_int_eq(bmap_write(img, map, NULL), -MKI_E_INTERRUPTED);
	ck_assert_str_eq(slurp(map, NULL), "old");
	only_image_left("disk.bmap");
}
END_TEST

/* A map the disk writer's pass computed gives the same file as one computed here. */
START_TEST(known_map_same_bytes)
{
	const off_t spans[] = { 0, 5, 1000 * 4096, 300000, (8 << 20) - 7, 7 };
	struct sparsehash sh = { .want_whole = 1, .want_map = 1 };
	char *own;
	int fd;

	make_sparse(img, 8 << 20, spans, 6);
	ck_assert_int_eq(bmap_write(img, map, NULL), 0);
	own = strdup(slurp(map, NULL)); /* slurp's buffer is reused below */
	fd = open(img, O_RDONLY);
	ck_assert_int_eq(sparsehash_file(fd, 8 << 20, &sh), 0);
	close(fd);
	ck_assert_int_eq(unlink(map), 0);
	ck_assert_int_eq(bmap_write(img, map, &sh), 0);
	ck_assert_str_eq(slurp(map, NULL), own);
	/* not the image that was hashed: refused */
	ck_assert_int_eq(truncate(img, 4 << 20), 0);
	ck_assert_int_eq(bmap_write(img, map, &sh), -MKI_E_IMAGE);
	sparsehash_release(&sh);
	free(own);
}
END_TEST

Suite *bmap_suite(void)
{
	Suite *s = suite_create("bmap");
	TCase *tc = tcase_create("bmap");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, human_sizes);
	tcase_add_test(tc, map_of_sparse_image);
	tcase_add_test(tc, short_last_block);
	tcase_add_test(tc, all_hole);
	tcase_add_test(tc, reproducible);
	tcase_add_test(tc, missing_image);
	tcase_add_test(tc, not_a_file);
	tcase_add_test(tc, unwritable);
	tcase_add_test(tc, tmp_link_not_followed);
	tcase_add_test(tc, interrupted);
	tcase_add_test(tc, known_map_same_bytes);
	suite_add_tcase(s, tc);
	return s;
}
