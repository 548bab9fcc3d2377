#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/parttable.h"
#include "lib/err.h"

#define MIB (1024 * 1024ull)

static const struct parttable_entry entries[] = {
	{ "esp", "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", 0xef, "11111111-2222-4333-8444-555555555555",
	  MIB, 4 * MIB, 0, 0 },
	{ "root", "4f68bce3-e8cd-4db1-96e7-fbcaf984b709", 0x83, "66666666-7777-4888-9999-aaaaaaaaaaaa",
	  5 * MIB, 10 * MIB, 1, 1 },
};

/* A 16 MiB file with `t` written on it; its contents in *out (16 MiB, caller frees). */
static int write_disk(const struct parttable *t, unsigned char **out)
{
	char path[] = "/tmp/test-parttable-XXXXXX";
	int fd = mkstemp(path), ret;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(fd, 16 * MIB), 0);
	ret = parttable_write(fd, path, t);
	*out = malloc(16 * MIB);
	ck_assert_int_eq(pread(fd, *out, 16 * MIB, 0), (ssize_t)(16 * MIB));
	close(fd);
	return ret;
}

START_TEST(gpt_ids_and_attributes)
{
	struct parttable t = { 0, "01234567-89ab-4cde-8f01-23456789abcd", 128, entries, 2 };
	unsigned char *a, *b, *e;
	uint64_t attrs;

	ck_assert_int_eq(write_disk(&t, &a), 0);
	ck_assert_int_eq(write_disk(&t, &b), 0);
	ck_assert_int_eq(memcmp(a, b, 16 * MIB), 0); /* no random id, no time survives */
	ck_assert_int_eq(memcmp(a + 512, "EFI PART", 8), 0);
	/* the disk GUID, mixed-endian: 67 45 23 01 ab 89 de 4c 8f 01 ... */
	ck_assert_int_eq(memcmp(a + 512 + 56, "\x67\x45\x23\x01\xab\x89\xde\x4c\x8f\x01", 10), 0);
	e = a + 1024 + 128; /* the second entry */
	ck_assert_int_eq(memcmp(e + 16, "\x66\x66\x66\x66\x77\x77\x88\x48\x99\x99", 10), 0);
	memcpy(&attrs, e + 48, 8);
	ck_assert_uint_eq(attrs, (1ull << 2) | (1ull << 60));
	ck_assert_int_eq(e[56], 'r'); /* the name, UTF-16LE */
	ck_assert_int_eq(e[58], 'o');
	ck_assert_int_eq(memcmp(a + 16 * MIB - 512, "EFI PART", 8), 0); /* the backup header */
	free(a);
	free(b);
}
END_TEST

START_TEST(gpt_short_array)
{
	struct parttable t = { 0, "01234567-89ab-4cde-8f01-23456789abcd", 56, entries, 2 };
	unsigned char *a;
	uint32_t n;

	ck_assert_int_eq(write_disk(&t, &a), 0);
	memcpy(&n, a + 512 + 80, 4);
	ck_assert_uint_eq(n, 56);
	free(a);
}
END_TEST

START_TEST(mbr_id_and_active)
{
	struct parttable t = { 1, "89abcdef", 0, entries, 2 };
	unsigned char *a;

	ck_assert_int_eq(write_disk(&t, &a), 0);
	ck_assert_int_eq(memcmp(a + 440, "\xef\xcd\xab\x89", 4), 0);
	ck_assert_int_eq(a[446], 0);        /* partition 1: not active */
	ck_assert_int_eq(a[446 + 4], 0xef); /* its system id */
	ck_assert_int_eq(a[462], 0x80);     /* partition 2: active */
	ck_assert_int_eq(a[462 + 4], 0x83);
	ck_assert_int_eq(a[510], 0x55);
	free(a);
}
END_TEST

START_TEST(refused)
{
	struct parttable_entry bad = entries[1];
	struct parttable t = { 0, "01234567-89ab-4cde-8f01-23456789abcd", 128, &bad, 1 };
	unsigned char *a, zero[512] = { 0 };

	bad.size = 64 * MIB; /* past the 16 MiB disk: libfdisk would shorten it */
	ck_assert_int_eq(write_disk(&t, &a), -MKI_E_IMAGE);
	ck_assert_int_eq(memcmp(a + 512, zero, 512), 0); /* nothing written */
	free(a);
}
END_TEST

Suite *parttable_suite(void)
{
	Suite *s = suite_create("parttable");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, gpt_ids_and_attributes);
	tcase_add_test(tc, gpt_short_array);
	tcase_add_test(tc, mbr_id_and_active);
	tcase_add_test(tc, refused);
	suite_add_tcase(s, tc);
	return s;
}
