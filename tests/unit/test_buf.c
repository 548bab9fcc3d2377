#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/str.h"

START_TEST(grows)
{
	struct buf b = { 0 };
	int i;

	for (i = 0; i < 1000; i++)
		buf_addf(&b, "%d,", i);
	ck_assert(str_starts_with(b.p, "0,1,2,"));
	ck_assert(str_ends_with(b.p, "998,999,"));
	ck_assert_uint_eq(strlen(b.p), b.len);
	buf_release(&b);
	ck_assert_ptr_null(b.p);
	ck_assert_uint_eq(b.len, 0);
}
END_TEST

/* Binary data keeps its NULs and the buffer stays terminated after it. */
START_TEST(binary_and_terminated)
{
	struct buf b = { 0 };

	buf_add(&b, "a\0b", 3);
	buf_adds(&b, "c");
	ck_assert_uint_eq(b.len, 4);
	ck_assert_mem_eq(b.p, "a\0bc", 5);
	buf_add(&b, "", 0);
	ck_assert_uint_eq(b.len, 4);
	buf_release(&b);
}
END_TEST

START_TEST(detach_resets)
{
	struct buf b = { 0 };
	char *p;

	p = buf_detach(&b);
	ck_assert_str_eq(p, "");
	free(p);
	buf_adds(&b, "kept");
	p = buf_detach(&b);
	ck_assert_str_eq(p, "kept");
	ck_assert_ptr_null(b.p);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_uint_eq(b.alloc, 0);
	buf_adds(&b, "new");
	ck_assert_str_eq(b.p, "new");
	free(p);
	buf_release(&b);
}
END_TEST

static const struct {
	const char *in, *out;
} escapes[] = {
	{ "plain name", "plain name" },
	{ "", "" },
	{ "a\nb\tc", "a\\nb\\tc" },
	{ "q\"b\\", "q\\\"b\\\\" },
	{ "\x1b[31mred\x7f", "\\x1b[31mred\\x7f" },
	{ "caf\xc3\xa9", "caf\xc3\xa9" }, /* UTF-8 passes unchanged: only controls are escaped */
};

START_TEST(escaped)
{
	struct buf b = { 0 };

	buf_add_escaped(&b, escapes[_i].in);
	ck_assert_ptr_nonnull(b.p);
	ck_assert_str_eq(b.p, escapes[_i].out);
	ck_assert_ptr_null(strchr(b.p, '\n'));
	buf_release(&b);
}
END_TEST

/* What a terminal acts on is escaped; text, backslashes and printable UTF-8 pass unchanged. */
static const struct {
	const char *in;
	size_t len; /* 0: strlen(in) */
	const char *out;
} printables[] = {
	{ "plain 'name' \\x1b", 0, "plain 'name' \\x1b" },
	{ "\x1b[2J\x1b]0;PWNED\x07", 0, "\\x1b[2J\\x1b]0;PWNED\\x07" },
	{ "x\nmkimage: info: forged\r", 0, "x\\nmkimage: info: forged\\r" },
	{ "a\tb\x7f", 0, "a\\tb\\x7f" },
	{ "nul\0byte", 8, "nul\\x00byte" },
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
	{ "csi\xc2\x9b" "2J", 0, "csi\\xc2\\x9b2J" },   /* U+009B, CSI in UTF-8 */
	{ "raw\x9b" "2J", 0, "raw\\x9b2J" },              /* CSI in 8-bit terminals */
	{ "cut\xe2\x82", 0, "cut\\xe2\\x82" },        /* a sequence cut short */
	{ "over\xc0\xaf", 0, "over\\xc0\\xaf" },      /* overlong '/' */
	{ "sur\xed\xa0\x80", 0, "sur\\xed\\xa0\\x80" }, /* a surrogate */
	{ "", 0, "" },
};

START_TEST(printable)
{
	struct buf b = { 0 };

	buf_add_printable(&b, printables[_i].in,
			  printables[_i].len ? printables[_i].len : strlen(printables[_i].in));
	ck_assert_ptr_nonnull(b.p);
	ck_assert_str_eq(b.p, printables[_i].out);
	buf_release(&b);
}
END_TEST

Suite *buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, grows);
	tcase_add_test(tc, binary_and_terminated);
	tcase_add_test(tc, detach_resets);
	tcase_add_loop_test(tc, escaped, 0, sizeof(escapes) / sizeof(escapes[0]));
	tcase_add_loop_test(tc, printable, 0, sizeof(printables) / sizeof(printables[0]));
	suite_add_tcase(s, tc);
	return s;
}
