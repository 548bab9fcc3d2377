#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "emit/compress.h"
#include "emit/compress_internal.h"

static char top[64], img[128], out[128];

static void setup(void)
{
	snprintf(top, sizeof(top), "/tmp/mki-compress-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(img, sizeof(img), "%s/disk.img", top);
	snprintf(out, sizeof(out), "%s/disk.img.z", top);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

/*
 * A sparse image of `size` bytes: blocks of text-like and random-looking data (a fixed
 * generator, the same every run) between holes, the last one reaching the end of the file.
 */
static void make_image(const char *path, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	static char buf[1 << 16];
	uint32_t x = 12345;
	off_t at;
	size_t k;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	for (at = 4096; at + (off_t)sizeof(buf) <= size; at += 9 * (off_t)sizeof(buf) + 4096) {
		for (k = 0; k < sizeof(buf); k++) {
			x = x * 1103515245 + 12345;
			buf[k] = (at / (off_t)sizeof(buf)) % 2 ? (char)(x >> 24)
							       : "mkimage "[k % 8];
		}
		ck_assert_int_eq(pwrite(fd, buf, sizeof(buf), at), (ssize_t)sizeof(buf));
	}
	ck_assert_int_eq(pwrite(fd, "end", 3, size - 3), 3);
	ck_assert_int_eq(close(fd), 0);
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void sha_file(const char *path, char *hex)
{
	ck_assert_int_eq(hash_file_hex(path, HASH_SHA256, hex), 0);
}

/* Nothing in the directory but the image and `also`: no temporary file left. */
static void only_left(const char *also)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s | grep -v -x -e disk.img -e '%s')\" = ''",
		 top, also ? also : "disk.img");
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(parse_names)
{
	enum compress_kind k = COMPRESS_XZ;

	ck_assert_int_eq(compress_parse("none", &k), 0);
	ck_assert_int_eq(k, COMPRESS_NONE);
	ck_assert_int_eq(compress_parse("zstd", &k), 0);
	ck_assert_int_eq(k, COMPRESS_ZSTD);
	ck_assert_int_eq(compress_parse("xz", &k), 0);
	ck_assert_int_eq(k, COMPRESS_XZ);
	ck_assert_int_eq(compress_parse("gzip", &k), -EINVAL);
	ck_assert_int_eq(compress_parse("ZSTD", &k), -EINVAL);
	ck_assert_int_eq(compress_parse("", &k), -EINVAL);
	ck_assert_int_eq(compress_parse("xz ", &k), -EINVAL);
	ck_assert_int_eq(compress_parse(NULL, &k), -EINVAL);
	ck_assert_int_eq(k, COMPRESS_XZ);
	ck_assert_str_eq(compress_name(COMPRESS_ZSTD), "zstd");
	ck_assert_str_eq(compress_suffix(COMPRESS_ZSTD), ".zst");
	ck_assert_str_eq(compress_suffix(COMPRESS_XZ), ".xz");
	ck_assert_str_eq(compress_suffix(COMPRESS_NONE), "");
}
END_TEST

/* What `zstd -d` and `xz -d` make of the output is the image, holes as zeros. */
START_TEST(round_trip)
{
	make_image(img, 5 << 20);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_ZSTD), 0);
	ck_assert_int_eq(run("zstd -q -t %s && test -s %s", out, out), 0);
	ck_assert_int_eq(run("zstd -q -dc %s | cmp - %s", out, img), 0);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_XZ), 0);
	ck_assert_int_eq(run("xz -t %s && xz -dc %s >/dev/null", out, out), 0);
	ck_assert_int_eq(run("xz -dc %s | cmp - %s", out, img), 0);
	only_left("disk.img.z");
}
END_TEST

/* The frame records the size and a checksum (zstd -l, xz -l see them). */
START_TEST(headers)
{
	make_image(img, 3 << 20);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_ZSTD), 0);
	ck_assert_int_eq(run("zstd -lv %s | grep -q 'Decompressed Size: 3.00 MiB (3145728 B)' && "
			     "zstd -lv %s | grep -q 'Check: XXH64'", out, out), 0);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_XZ), 0);
	ck_assert_int_eq(run("xz -lv --robot %s | grep -q '^file.*3145728.*CRC64' && "
			     "test -s %s", out, out), 0);
}
END_TEST

START_TEST(empty_and_all_hole)
{
	make_image(img, 3);
	ck_assert_int_eq(truncate(img, 0), 0);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_ZSTD), 0);
	ck_assert_int_eq(run("test \"$(zstd -q -dc %s | wc -c)\" = 0 && test -s %s", out, out), 0);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_XZ), 0);
	ck_assert_int_eq(run("test \"$(xz -dc %s | wc -c)\" = 0 && test -s %s", out, out), 0);
	ck_assert_int_eq(truncate(img, 64 << 20), 0);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_ZSTD), 0);
	ck_assert_int_eq(run("zstd -q -dc %s | cmp - %s", out, img), 0);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_XZ), 0);
	ck_assert_int_eq(run("xz -dc %s | cmp - %s", out, img), 0);
}
END_TEST

/*
 * The same bytes for 1, 2 and 3 threads and run after run: the image spans several zstd jobs
 * and xz blocks, so the workers really split it.
 */
START_TEST(same_bytes_any_threads)
{
	static const enum compress_kind kinds[] = { COMPRESS_ZSTD, COMPRESS_XZ };
	char first[65], hex[65];
	unsigned t, i;

	make_image(img, 56 << 20);
	for (i = 0; i < 2; i++) {
		for (t = 1; t <= 3; t++) {
			ck_assert_int_eq(compress_file_threads(img, out, kinds[i], t), 0);
			sha_file(out, t == 1 ? first : hex);
			if (t > 1)
				ck_assert_str_eq(hex, first);
		}
		ck_assert_int_eq(compress_file(img, out, kinds[i]), 0);
		sha_file(out, hex);
		ck_assert_str_eq(hex, first);
	}
}
END_TEST

/* Another zstd level (the SDK's, sdk.h) takes effect; level 0 is compress_file()'s. */
START_TEST(zstd_level)
{
	char nine[65], hex[65];

	make_image(img, 24 << 20);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_ZSTD), 0);
	sha_file(out, nine);
	ck_assert_int_eq(compress_file_level(img, out, COMPRESS_ZSTD, 0), 0);
	sha_file(out, hex);
	ck_assert_str_eq(hex, nine);
	ck_assert_int_eq(compress_file_level(img, out, COMPRESS_ZSTD, 3), 0);
	sha_file(out, hex);
	ck_assert_str_ne(hex, nine);
	ck_assert_int_eq(run("zstd -q -dc %s | cmp - %s", out, img), 0);
}
END_TEST

START_TEST(none_writes_nothing)
{
	make_image(img, 1 << 20);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_NONE), 0);
	only_left(NULL);
}
END_TEST

START_TEST(missing_input)
{
	ck_assert_int_eq(compress_file(img, out, COMPRESS_ZSTD), -MKI_E_IMAGE);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_XZ), -MKI_E_IMAGE);
	ck_assert_int_eq(mkfifo(img, 0644), 0); /* refused without blocking */
	ck_assert_int_eq(compress_file(img, out, COMPRESS_ZSTD), -MKI_E_IMAGE);
	only_left(NULL);
}
END_TEST

START_TEST(unwritable)
{
	char bad[192];

	make_image(img, 1 << 20);
	snprintf(bad, sizeof(bad), "%s/missing/disk.img.zst", top);
	ck_assert_int_eq(compress_file(img, bad, COMPRESS_ZSTD), -MKI_E_IMAGE);
	snprintf(bad, sizeof(bad), "%s/disk.img/disk.img.xz", top); /* a file as directory */
	ck_assert_int_eq(compress_file(img, bad, COMPRESS_XZ), -MKI_E_IMAGE);
	only_left(NULL);
}
END_TEST

/* A write that fails (the file size limit standing in for a full disk): nothing left. */
START_TEST(write_fails)
{
	struct rlimit lim = { 64 << 10, 64 << 10 };
	char name[192];

	make_image(img, 4 << 20);
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	snprintf(name, sizeof(name), "%s/full.zst", top);
	ck_assert_int_eq(compress_file(img, name, COMPRESS_ZSTD), -MKI_E_IMAGE);
	snprintf(name, sizeof(name), "%s/full.xz", top);
	ck_assert_int_eq(compress_file(img, name, COMPRESS_XZ), -MKI_E_IMAGE);
	only_left(NULL);
}
END_TEST

/* A link where the temporary file goes is never written through. */
START_TEST(tmp_link_not_followed)
{
	char link[192], target[192];

	make_image(img, 1 << 20);
	snprintf(target, sizeof(target), "%s/elsewhere", top);
	snprintf(link, sizeof(link), "%s/x.zst.tmp-%d", top, (int)getpid());
	ck_assert_int_eq(symlink(target, link), 0);
	snprintf(link, sizeof(link), "%s/x.zst", top);
	ck_assert_int_eq(compress_file(img, link, COMPRESS_ZSTD), -MKI_E_IMAGE);
	ck_assert_int_eq(access(link, F_OK), -1);
	ck_assert_int_eq(access(target, F_OK), -1);
}
END_TEST

/* Interrupted: -MKI_E_INTERRUPTED, the temporary file gone, an older output as it was. */
START_TEST(interrupted)
{
	FILE *f = fopen(out, "w");
	char buf[8] = { 0 };

	fputs("old", f);
	fclose(f);
	make_image(img, 4 << 20);
	err_set_interrupted(SIGINT);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_ZSTD), -MKI_E_INTERRUPTED);
	ck_assert_int_eq(compress_file(img, out, COMPRESS_XZ), -MKI_E_INTERRUPTED);
	f = fopen(out, "r");
	ck_assert_uint_eq(fread(buf, 1, sizeof(buf) - 1, f), 3);
	fclose(f);
	ck_assert_str_eq(buf, "old");
	only_left("disk.img.z");
}
END_TEST

Suite *compress_suite(void)
{
	Suite *s = suite_create("compress");
	TCase *tc = tcase_create("compress");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, parse_names);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, headers);
	tcase_add_test(tc, empty_and_all_hole);
	tcase_add_test(tc, same_bytes_any_threads);
	tcase_add_test(tc, zstd_level);
	tcase_add_test(tc, none_writes_nothing);
	tcase_add_test(tc, missing_input);
	tcase_add_test(tc, unwritable);
	tcase_add_test(tc, write_fails);
	tcase_add_test(tc, tmp_link_not_followed);
	tcase_add_test(tc, interrupted);
	suite_add_tcase(s, tc);
	return s;
}
