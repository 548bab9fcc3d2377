#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/hash.h"

START_TEST(sha256_known)
{
	char hex[65];

	hash_sha256_hex("abc", 3, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	ck_assert(hash_sha256_hex_valid(hex));
	hash_sha256_hex("", 0, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

static const struct {
	const char *s;
	int valid;
} hexes[] = {
	{ "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 1 },
	{ "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", 0 }, /* upper case */
	{ "ba7G16bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 0 },
	{ "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a", 0 },   /* 63 */
	{ "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0", 0 }, /* 65 */
	{ "", 0 },
};

START_TEST(hex_valid)
{
	ck_assert_int_eq(hash_sha256_hex_valid(hexes[_i].s), hexes[_i].valid);
}
END_TEST

/* Fed in pieces, a digest equals the one-shot one; MD5 gives 32 digits. */
START_TEST(streaming_and_md5)
{
	struct hash h;
	char hex[65], once[65];
	uint8_t raw[32];

	ck_assert_int_eq(hash_init(&h, HASH_SHA256), 0);
	hash_update(&h, "a", 1);
	hash_update(&h, "bc", 2);
	hash_final_hex(&h, hex);
	ck_assert_ptr_null(h.ctx);
	hash_sha256_hex("abc", 3, once);
	ck_assert_str_eq(hex, once);
	ck_assert_int_eq(hash_init(&h, HASH_MD5), 0);
	hash_update(&h, "abc", 3);
	hash_final_hex(&h, hex);
	ck_assert_str_eq(hex, "900150983cd24fb0d6963f7d28e17f72");
	ck_assert_int_eq(hash_init(&h, HASH_SHA256), 0);
	hash_update(&h, "abc", 3);
	hash_final(&h, raw);
	ck_assert_uint_eq(raw[0], 0xba);
	ck_assert_uint_eq(raw[31], 0xad);
	ck_assert_int_eq(hash_init(&h, HASH_MD5), 0);
	hash_update(&h, "abandoned", 9);
	hash_release(&h);
	ck_assert_ptr_null(h.ctx);
}
END_TEST

/* The pair digest is the digest of the concatenation, and the context serves again. */
START_TEST(pair_reuses_context)
{
	struct hash h;
	uint8_t raw[32], again[32];
	char hex[65], want[65];
	int i;

	ck_assert_int_eq(hash_init(&h, HASH_SHA256), 0);
	hash_sha256_pair(&h, "ab", 2, "c", 1, raw);
	hash_sha256_pair(&h, "", 0, "abc", 3, again);
	ck_assert_mem_eq(raw, again, 32);
	hash_sha256_pair(&h, "a", 1, "bcd", 3, again);
	hash_release(&h);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	hash_sha256_hex("abc", 3, want);
	ck_assert_str_eq(hex, want);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", again[i]);
	hash_sha256_hex("abcd", 4, want);
	ck_assert_str_eq(hex, want);
}
END_TEST

START_TEST(file_and_non_files)
{
	char dir[] = "/tmp/mki-unit-hash.XXXXXX", path[64], fifo[64], hex[65], want[65];
	char *big = malloc(200000);
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	memset(big, 'm', 200000); /* more than one read block */
	f = fopen(path, "w");
	fwrite(big, 1, 200000, f);
	fclose(f);
	hash_sha256_hex(big, 200000, want);
	ck_assert_int_eq(hash_file_hex(path, HASH_SHA256, hex), 0);
	ck_assert_str_eq(hex, want);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	snprintf(hex, sizeof(hex), "untouched");
	ck_assert_int_eq(hash_file_hex(fifo, HASH_SHA256, hex), -EINVAL);
	ck_assert_int_eq(hash_file_hex(dir, HASH_MD5, hex), -EINVAL);
	ck_assert_str_eq(hex, "untouched");
	unlink(path);
	ck_assert_int_eq(hash_file_hex(path, HASH_SHA256, hex), -ENOENT);
	unlink(fifo);
	rmdir(dir);
	free(big);
}
END_TEST

Suite *hash_suite(void)
{
	Suite *s = suite_create("hash");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sha256_known);
	tcase_add_loop_test(tc, hex_valid, 0, sizeof(hexes) / sizeof(hexes[0]));
	tcase_add_test(tc, streaming_and_md5);
	tcase_add_test(tc, pair_reuses_context);
	tcase_add_test(tc, file_and_non_files);
	suite_add_tcase(s, tc);
	return s;
}
