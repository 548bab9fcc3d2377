#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "lib/sparsehash.h"

static char top[64], img[128];

static void setup(void)
{
	snprintf(top, sizeof(top), "/tmp/mki-sparsehash-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(img, sizeof(img), "%s/disk.img", top);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

/* A sparse file of `size` bytes; at each (offset, length) pair, bytes that depend on the offset. */
static int make_sparse(off_t size, const off_t *spans, size_t n)
{
	int fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0644);
	char buf[8192];
	size_t i, k, w;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	for (i = 0; i < n; i += 2) {
		for (off_t at = spans[i], end = spans[i] + spans[i + 1]; at < end; at += (off_t)w) {
			w = (size_t)(end - at) < sizeof(buf) ? (size_t)(end - at) : sizeof(buf);
			for (k = 0; k < w; k++)
				buf[k] = (char)(((uint64_t)at + k) * 7 % 251 + 1);
			ck_assert_int_eq(pwrite(fd, buf, w, at), (ssize_t)w);
		}
	}
	return fd;
}

/* The SHA-256 of bytes [from, to) of `fd`, read plainly: what sha256sum of that range gives. */
static void sha_of(int fd, uint64_t from, uint64_t to, char *hex)
{
	static char buf[1 << 20];
	struct hash h;
	size_t n;

	ck_assert_int_eq(hash_init(&h, HASH_SHA256), 0);
	for (; from < to; from += n) {
		n = to - from < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ck_assert_int_eq(pread(fd, buf, n, (off_t)from), (ssize_t)n);
		hash_update(&h, buf, n);
	}
	hash_final_hex(&h, hex);
}

START_TEST(ranges_follow_holes)
{
	const off_t spans[] = { 0, 5, 1000 * 4096, 3000000, 40 * 1048576 + 5, 1 };
	struct sparsehash_range *v;
	size_t n;
	int fd = make_sparse(64 << 20, spans, 6);

	ck_assert_int_eq(sparsehash_ranges(fd, 64 << 20, &v, &n), 0);
	close(fd);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(v[0].first, 0);
	ck_assert_uint_eq(v[0].last, 0);
	ck_assert_uint_eq(v[1].first, 1000);
	ck_assert_uint_eq(v[1].last, 1000 + (3000000 + 4095) / 4096 - 1);
	ck_assert_uint_eq(v[2].first, 10240);
	ck_assert_uint_eq(v[2].last, 10240);
	free(v);
}
END_TEST

/* Data across a block boundary maps both blocks; data reaching the end maps the short block. */
START_TEST(ranges_round_out)
{
	const off_t spans[] = { 4095, 2, 10000, 5 };
	struct sparsehash_range *v;
	size_t n;
	int fd = make_sparse(10005, spans, 4);

	ck_assert_int_eq(sparsehash_ranges(fd, 10005, &v, &n), 0);
	close(fd);
	ck_assert_uint_eq(n, 1); /* 0-1 and 2 touch: one range */
	ck_assert_uint_eq(v[0].first, 0);
	ck_assert_uint_eq(v[0].last, 2);
	free(v);
}
END_TEST

/*
 * Allocated but never written (fallocate): zeros, never mapped, also after a read put it in the
 * page cache (where SEEK_DATA starts calling it data); a write into it, not yet on disk, is.
 */
START_TEST(unwritten_not_mapped)
{
	const off_t spans[] = { 0, 100 };
	struct sparsehash_range *v;
	char buf[4096];
	size_t n;
	int fd = make_sparse(4 << 20, spans, 2);

	ck_assert_int_eq(fallocate(fd, 0, 1 << 20, 1 << 20), 0);
	ck_assert_int_eq(pread(fd, buf, sizeof(buf), 1 << 20), (ssize_t)sizeof(buf));
	ck_assert_int_eq(sparsehash_ranges(fd, 4 << 20, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0].last, 0);
	free(v);
	ck_assert_int_eq(pwrite(fd, "data", 4, (1 << 20) + 8192), 4);
	ck_assert_int_eq(sparsehash_ranges(fd, 4 << 20, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[1].first, 258);
	ck_assert_uint_eq(v[1].last, 258);
	free(v);
	close(fd);
}
END_TEST

/*
 * The one pass: the whole file, three spans (one mostly hole, one empty, gaps between) and every
 * map range give what hashing the same bytes plainly gives; the unwritten MiB and the holes are
 * not read, the data is read once (a few KiB of rounding to the host's blocks at most).
 */
START_TEST(one_pass_same_digests)
{
	const off_t data[] = { 0, 5, 1000 * 4096 + 17, 3000000, 40 * 1048576 + 5, 1,
			       (60 << 20) - 3, 3 };
	struct sparsehash_span spans[] = { { .from = 512, .to = 8 << 20 }, { .from = 9 << 20, .to = 9 << 20 },
					   { .from = 20 << 20, .to = 60 << 20 } };
	struct sparsehash sh = { .spans = spans, .n_spans = 3, .want_whole = 1, .want_map = 1 };
	struct sparsehash_range *v;
	char hex[65];
	size_t i, n;
	int fd = make_sparse(60 << 20, data, 8);

	ck_assert_int_eq(fallocate(fd, FALLOC_FL_KEEP_SIZE, 50 << 20, 1 << 20), 0);
	ck_assert_int_eq(sparsehash_file(fd, 60 << 20, &sh), 0);
	sha_of(fd, 0, 60 << 20, hex);
	ck_assert_str_eq(sh.whole, hex);
	for (i = 0; i < 3; i++) {
		sha_of(fd, spans[i].from, spans[i].to, hex);
		ck_assert_str_eq(spans[i].sha256, hex);
	}
	ck_assert_int_eq(sparsehash_ranges(fd, 60 << 20, &v, &n), 0);
	ck_assert_uint_eq(sh.n_map, n);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(sh.map[i].first, v[i].first);
		ck_assert_uint_eq(sh.map[i].last, v[i].last);
		sha_of(fd, v[i].first * 4096, (v[i].last + 1) * 4096, hex);
		ck_assert_str_eq(sh.map[i].sha256, hex);
	}
	ck_assert_uint_ge(sh.bytes_read, 3000000 + 9);
	ck_assert_uint_le(sh.bytes_read, 3000000 + 9 + 5 * 2 * 65536);
	free(v);
	sparsehash_release(&sh);
	close(fd);
}
END_TEST

/* A file with no data at all: the digests of zeros, an empty map, nothing read. */
START_TEST(all_hole)
{
	struct sparsehash_span span = { .from = 4096, .to = 96 << 20 };
	struct sparsehash sh = { .spans = &span, .n_spans = 1, .want_whole = 1, .want_map = 1 };
	char hex[65];
	int fd = make_sparse(96 << 20, NULL, 0);

	ck_assert_int_eq(sparsehash_file(fd, 96 << 20, &sh), 0);
	ck_assert_uint_eq(sh.bytes_read, 0);
	ck_assert_uint_eq(sh.n_map, 0);
	sha_of(fd, 0, 96 << 20, hex);
	ck_assert_str_eq(sh.whole, hex);
	sha_of(fd, 4096, 96 << 20, hex);
	ck_assert_str_eq(span.sha256, hex);
	close(fd);
}
END_TEST

/* Only what is asked: no whole digest, no map; the spans alone. */
START_TEST(spans_only)
{
	const off_t data[] = { 100, 50 };
	struct sparsehash_span span = { .from = 0, .to = 1 << 20 };
	struct sparsehash sh = { .spans = &span, .n_spans = 1 };
	char hex[65];
	int fd = make_sparse(2 << 20, data, 2);

	ck_assert_int_eq(sparsehash_file(fd, 2 << 20, &sh), 0);
	ck_assert_str_eq(sh.whole, "");
	ck_assert_ptr_null(sh.map);
	sha_of(fd, 0, 1 << 20, hex);
	ck_assert_str_eq(span.sha256, hex);
	close(fd);
}
END_TEST

START_TEST(bad_spans)
{
	struct sparsehash_span twisted[] = { { .from = 8192, .to = 16384 }, { .from = 0, .to = 4096 } };
	struct sparsehash_span past[] = { { .from = 0, .to = (1 << 20) + 1 } };
	struct sparsehash sh = { .spans = twisted, .n_spans = 2, .want_whole = 1 };
	int fd = make_sparse(1 << 20, NULL, 0);

	ck_assert_int_eq(sparsehash_file(fd, 1 << 20, &sh), -EINVAL);
	sh.spans = past;
	sh.n_spans = 1;
	ck_assert_int_eq(sparsehash_file(fd, 1 << 20, &sh), -EINVAL);
	close(fd);
}
END_TEST

/* A file shorter than it was said to be: it changed, -ESTALE, no map. */
START_TEST(shorter_file)
{
	const off_t data[] = { 0, 100 };
	struct sparsehash sh = { .want_whole = 1, .want_map = 1 };
	int fd = make_sparse(1 << 20, data, 2);

	ck_assert_int_eq(sparsehash_file(fd, 2 << 20, &sh), -ESTALE);
	ck_assert_ptr_null(sh.map);
	close(fd);
}
END_TEST

/* SIGINT/SIGTERM stops the pass, also inside a long hole, and the whole digest's thread. */
START_TEST(interrupted)
{
	const off_t data[] = { (1ll << 36) - 100, 100 };
	struct sparsehash sh = { .want_whole = 1, .want_map = 1 };
	int fd = make_sparse(1ll << 36, data, 2);

	err_set_interrupted(SIGTERM);
	ck_assert_int_eq(sparsehash_file(fd, 1ll << 36, &sh), -MKI_E_INTERRUPTED);
	ck_assert_ptr_null(sh.map);
	close(fd);
}
END_TEST

Suite *sparsehash_suite(void)
{
	Suite *s = suite_create("sparsehash");
	TCase *tc = tcase_create("sparsehash");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ranges_follow_holes);
	tcase_add_test(tc, ranges_round_out);
	tcase_add_test(tc, unwritten_not_mapped);
	tcase_add_test(tc, one_pass_same_digests);
	tcase_add_test(tc, all_hole);
	tcase_add_test(tc, spans_only);
	tcase_add_test(tc, bad_spans);
	tcase_add_test(tc, shorter_file);
	tcase_add_test(tc, interrupted);
	suite_add_tcase(s, tc);
	return s;
}
