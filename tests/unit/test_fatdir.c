/*
 * FAT names and entries: which names FAT refuses, which are already short names, how short
 * names are generated without collisions, the long-name entries' layout and checksum, and
 * timestamps clamped to FAT's range.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "image/fatdir.h"

static uint16_t u16[FATDIR_NAME_MAX];
static size_t len;

START_TEST(decode_accepts_utf8_and_counts_units)
{
	ck_assert_int_eq(fatdir_decode("grub.cfg", u16, &len), 0);
	ck_assert_uint_eq(len, 8);
	ck_assert_int_eq(fatdir_decode("gr\xc3\xbc\xc3\x9f" "e", u16, &len), 0);
	ck_assert_uint_eq(len, 5);
	ck_assert_uint_eq(u16[2], 0xfc);
	/* U+1F600 is a surrogate pair */
	ck_assert_int_eq(fatdir_decode("a\xf0\x9f\x98\x80", u16, &len), 0);
	ck_assert_uint_eq(len, 3);
	ck_assert_uint_eq(u16[1], 0xd83d);
	ck_assert_uint_eq(u16[2], 0xde00);
	ck_assert_int_eq(fatdir_decode(".hidden name", u16, &len), 0);
}
END_TEST

START_TEST(decode_refuses_what_fat_cannot_hold)
{
	char name[300];
	const char *bad[] = { "a*b", "a/b", "a:b", "a<b", "a>b", "a?b", "a\\b", "a|b", "a\"b",
			      "a\nb", "a\x1b", "a\x7f", "trailing.", "trailing ", "." };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(fatdir_decode(bad[i], u16, &len) == -EINVAL, "%s", bad[i]);
	ck_assert_int_eq(fatdir_decode("\xc3", u16, &len), -EILSEQ);
	ck_assert_int_eq(fatdir_decode("\xc0\xaf", u16, &len), -EILSEQ); /* overlong '/' */
	ck_assert_int_eq(fatdir_decode("\xed\xa0\x80", u16, &len), -EILSEQ); /* a surrogate */
	memset(name, 'a', 255);
	name[255] = 0;
	ck_assert_int_eq(fatdir_decode(name, u16, &len), 0);
	name[255] = 'a';
	name[256] = 0;
	ck_assert_int_eq(fatdir_decode(name, u16, &len), -ENAMETOOLONG);
	ck_assert_ptr_nonnull(strstr(fatdir_decode_error(-ENAMETOOLONG), "255"));
}
END_TEST

START_TEST(short_names_as_they_are)
{
	uint8_t out[11];

	ck_assert_int_eq(fatdir_short_name("BOOTX64.EFI", out), 1);
	ck_assert_int_eq(memcmp(out, "BOOTX64 EFI", 11), 0);
	ck_assert_int_eq(fatdir_short_name("EFI", out), 1);
	ck_assert_int_eq(memcmp(out, "EFI        ", 11), 0);
	ck_assert_int_eq(fatdir_short_name("A~1_$.{}", out), 1);
	ck_assert_int_eq(fatdir_short_name("bootx64.efi", out), 0);
	ck_assert_int_eq(fatdir_short_name("TOOLONGNAME", out), 0);
	ck_assert_int_eq(fatdir_short_name("A.TEXT", out), 0);
	ck_assert_int_eq(fatdir_short_name("A.B.C", out), 0);
	ck_assert_int_eq(fatdir_short_name("A B", out), 0);
	ck_assert_int_eq(fatdir_short_name("A+B", out), 0);
	ck_assert_int_eq(fatdir_short_name(".A", out), 0);
}
END_TEST

START_TEST(generated_names_never_collide)
{
	struct fatdir_set s;
	uint8_t out[11], taken[11];

	fatdir_set_init(&s, 4);
	memcpy(taken, "LONGNA~2TXT", 11);
	fatdir_set_add(&s, taken);
	ck_assert_int_eq(fatdir_lossless("readme.txt", out), 1);
	ck_assert_int_eq(memcmp(out, "README  TXT", 11), 0);
	ck_assert_int_eq(fatdir_lossless("longna~1.txt", out), 1);
	ck_assert_int_eq(fatdir_lossless("longname_1.txt", out), 0);
	ck_assert_int_eq(fatdir_lossless(".profile", out), 0);
	ck_assert_int_eq(fatdir_generate("readme.txt", &s, out), 0);
	ck_assert_int_eq(memcmp(out, "README  TXT", 11), 0); /* only the case changed */
	ck_assert_int_eq(fatdir_generate("longname_1.txt", &s, out), 0);
	ck_assert_int_eq(memcmp(out, "LONGNA~1TXT", 11), 0);
	ck_assert_int_eq(fatdir_generate("longname_2.txt", &s, out), 0);
	ck_assert_int_eq(memcmp(out, "LONGNA~3TXT", 11), 0);
	ck_assert_int_eq(fatdir_generate(".bashrc", &s, out), 0);
	ck_assert_int_eq(memcmp(out, "BASHRC~1   ", 11), 0);
	ck_assert_int_eq(fatdir_generate("a b+c.tar.gz", &s, out), 0);
	ck_assert_int_eq(memcmp(out, "AB_CTA~1GZ ", 11), 0);
	ck_assert_int_eq(fatdir_generate("gr\xc3\xbc\xc3\x9f" "e.cfg", &s, out), 0);
	ck_assert_int_eq(memcmp(out, "GR__E~1 CFG", 11), 0);
	ck_assert(fatdir_set_has(&s, out));
	fatdir_set_release(&s);
}
END_TEST

START_TEST(many_names_with_one_basis)
{
	struct fatdir_set s;
	uint8_t out[11];
	char name[64];
	int i;

	fatdir_set_init(&s, 1);
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "same basis %d.conf", i);
		ck_assert_int_eq(fatdir_generate(name, &s, out), 0);
	}
	ck_assert_uint_eq(s.n, 20000);
	ck_assert_int_eq(memcmp(out, "SA~20000CON", 11), 0);
	fatdir_set_release(&s);
}
END_TEST

START_TEST(fold_is_case_insensitive_beyond_ascii)
{
	ck_assert_uint_eq(fatdir_fold('a'), 'A');
	ck_assert_uint_eq(fatdir_fold('Z'), 'Z');
	ck_assert_uint_eq(fatdir_fold(0xe9), 0xc9);     /* é */
	ck_assert_uint_eq(fatdir_fold(0xf7), 0xf7);     /* ÷ */
	ck_assert_uint_eq(fatdir_fold(0x101), 0x100);   /* ā */
	ck_assert_uint_eq(fatdir_fold(0x3b1), 0x391);   /* α */
	ck_assert_uint_eq(fatdir_fold(0x44f), 0x42f);   /* я */
	ck_assert_uint_eq(fatdir_fold(0x451), 0x401);   /* ё */
	ck_assert_uint_eq(fatdir_fold('_'), '_');
}
END_TEST

START_TEST(entries_with_a_long_name)
{
	static const uint8_t name[11] = { 'L', 'O', 'N', 'G', 'F', 'I', '~', '1', 'T', 'X', 'T' };
	uint8_t out[4 * FATDIR_ENTRY];
	struct fatdir_entry e = { .attr = FATDIR_ATTR_ARCHIVE, .cluster = 0x12345, .size = 7,
				  .mtime = 1700000001 };
	uint16_t date, time;
	uint8_t hs;

	memcpy(e.name, name, 11);
	ck_assert_int_eq(fatdir_decode("Long File Name.txt", u16, &len), 0);
	e.lname = u16;
	e.llen = len;
	ck_assert_uint_eq(fatdir_slots(len), 3);
	ck_assert_uint_eq(fatdir_slots(13), 2);
	ck_assert_uint_eq(fatdir_slots(14), 3);
	ck_assert_uint_eq(fatdir_encode(out, &e), 3);
	ck_assert_uint_eq(out[0], 0x42);                    /* the last part first */
	ck_assert_uint_eq(out[11], 0x0f);
	ck_assert_uint_eq(out[13], fatdir_checksum(name));
	ck_assert_uint_eq(out[1], 'e');                     /* unit 13 */
	ck_assert_uint_eq(out[9], 't');                     /* unit 17, the last */
	ck_assert_uint_eq(out[14], 0);                      /* the terminator */
	ck_assert_uint_eq(out[15], 0);
	ck_assert_uint_eq(out[16], 0xff);                   /* then padding */
	ck_assert_uint_eq(out[31], 0xff);
	ck_assert_uint_eq(out[FATDIR_ENTRY], 0x01);
	ck_assert_uint_eq(out[FATDIR_ENTRY + 1], 'L');
	ck_assert_int_eq(memcmp(out + 2 * FATDIR_ENTRY, name, 11), 0);
	ck_assert_uint_eq(out[2 * FATDIR_ENTRY + 11], FATDIR_ATTR_ARCHIVE);
	ck_assert_uint_eq(out[2 * FATDIR_ENTRY + 20], 0x01); /* cluster high */
	ck_assert_uint_eq(out[2 * FATDIR_ENTRY + 26], 0x45); /* cluster low */
	ck_assert_uint_eq(out[2 * FATDIR_ENTRY + 28], 7);
	fatdir_time(1700000001, &date, &time, &hs);
	ck_assert_uint_eq(out[2 * FATDIR_ENTRY + 13], hs);
	ck_assert_uint_eq(out[2 * FATDIR_ENTRY + 24], date & 0xff);
}
END_TEST

START_TEST(checksum_of_a_known_name)
{
	/* the sum Windows and Linux compute: rotate right, add */
	ck_assert_uint_eq(fatdir_checksum((const uint8_t *)"README  TXT"), 0x73);
}
END_TEST

START_TEST(times_clamped_to_fat)
{
	uint16_t date, time;
	uint8_t hs;

	fatdir_time(1700000001, &date, &time, &hs); /* 2023-11-14 22:13:21 UTC */
	ck_assert_uint_eq(date, ((2023 - 1980) << 9) | (11 << 5) | 14);
	ck_assert_uint_eq(time, (22 << 11) | (13 << 5) | 10);
	ck_assert_uint_eq(hs, 100);
	fatdir_time(0, &date, &time, &hs);
	ck_assert_uint_eq(date, (1 << 5) | 1);
	ck_assert_uint_eq(time, 0);
	fatdir_time(-5, &date, &time, &hs);
	ck_assert_uint_eq(date, (1 << 5) | 1);
	fatdir_time(INT64_MAX / 2, &date, &time, &hs);
	ck_assert_uint_eq(date, (127 << 9) | (12 << 5) | 31);
	ck_assert_uint_eq(time, (23 << 11) | (59 << 5) | 29);
}
END_TEST

Suite *fatdir_suite(void)
{
	Suite *s = suite_create("fatdir");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, decode_accepts_utf8_and_counts_units);
	tcase_add_test(tc, decode_refuses_what_fat_cannot_hold);
	tcase_add_test(tc, short_names_as_they_are);
	tcase_add_test(tc, generated_names_never_collide);
	tcase_add_test(tc, many_names_with_one_basis);
	tcase_add_test(tc, fold_is_case_insensitive_beyond_ascii);
	tcase_add_test(tc, entries_with_a_long_name);
	tcase_add_test(tc, checksum_of_a_known_name);
	tcase_add_test(tc, times_clamped_to_fat);
	suite_add_tcase(s, tc);
	return s;
}
