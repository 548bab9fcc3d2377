/* Real .xz and .lzma data made by xz(1) at test time, decoded in small pieces. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/readfile.h"
#include "lib/str.h"
#include "lib/xz.h"

struct sample {
	char dir[64];
	struct buf plain, packed;
};

/* `plain` (Packages-like text) compressed by `xz ARGS`. */
static void sample_init(struct sample *s, const char *args)
{
	char *cmd;
	FILE *f;
	int i;

	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "/tmp/mki-unit-xz.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(s->dir));
	for (i = 0; i < 3000; i++)
		buf_addf(&s->plain, "Package: pkg%d\nVersion: 1.%d\n\n", i, i * 7);
	cmd = xasprintf("%s/plain", s->dir);
	f = fopen(cmd, "w");
	ck_assert_ptr_nonnull(f);
	fwrite(s->plain.p, 1, s->plain.len, f);
	fclose(f);
	free(cmd);
	cmd = xasprintf("xz %s -c %s/plain >%s/packed", args, s->dir, s->dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	cmd = xasprintf("%s/packed", s->dir);
	ck_assert_int_eq(readfile_read(cmd, 1 << 24, &s->packed, NULL), 0);
	free(cmd);
}

static void sample_release(struct sample *s)
{
	char *cmd = xasprintf("rm -rf %s", s->dir);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	buf_release(&s->plain);
	buf_release(&s->packed);
}

/* Feed `in` 100 bytes at a time into a 333-byte output; the decoded text goes to `out`. */
static int decode_all(struct xz *x, const void *in, size_t len, struct buf *out)
{
	const uint8_t *p = in;
	uint8_t chunk[333];
	int ret = 0;

	while (ret == 0) {
		size_t feed = len < 100 ? len : 100, left = feed, got = sizeof(chunk);

		ret = xz_decode(x, &p, &left, chunk, &got, feed == len);
		buf_add(out, chunk, got);
		len -= feed - left;
	}
	return ret;
}

START_TEST(decodes_in_pieces)
{
	struct sample s;
	struct buf out = { 0 };
	struct xz *x;

	sample_init(&s, "");
	ck_assert(xz_is_xz(s.packed.p, s.packed.len));
	ck_assert(!xz_is_xz(s.packed.p, 5));
	ck_assert(!xz_is_xz(s.plain.p, s.plain.len));
	x = xz_new(1 << 26, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(decode_all(x, s.packed.p, s.packed.len, &out), 1);
	ck_assert_uint_eq(out.len, s.plain.len);
	ck_assert_mem_eq(out.p, s.plain.p, out.len);
	xz_free(x);
	buf_release(&out);
	sample_release(&s);
}
END_TEST

/* Two .xz streams back to back are one text (as `cat a.xz b.xz` gives). */
START_TEST(concatenated_streams)
{
	struct sample s;
	struct buf twice = { 0 }, out = { 0 };
	struct xz *x = xz_new(1 << 26, 0);

	sample_init(&s, "");
	buf_add(&twice, s.packed.p, s.packed.len);
	buf_add(&twice, s.packed.p, s.packed.len);
	ck_assert_int_eq(decode_all(x, twice.p, twice.len, &out), 1);
	ck_assert_uint_eq(out.len, 2 * s.plain.len);
	ck_assert_mem_eq(out.p + s.plain.len, s.plain.p, s.plain.len);
	xz_free(x);
	buf_release(&twice);
	buf_release(&out);
	sample_release(&s);
}
END_TEST

START_TEST(legacy_lzma)
{
	struct sample s;
	struct buf out = { 0 };
	struct xz *x = xz_new(1 << 26, 1);

	sample_init(&s, "--format=lzma");
	ck_assert(!xz_is_xz(s.packed.p, s.packed.len));
	ck_assert_int_eq(decode_all(x, s.packed.p, s.packed.len, &out), 1);
	ck_assert_uint_eq(out.len, s.plain.len);
	ck_assert_mem_eq(out.p, s.plain.p, out.len);
	xz_free(x);
	buf_release(&out);
	sample_release(&s);
}
END_TEST

/* A stream declaring a 64 MiB dictionary is refused by its header under a 4 MiB limit. */
START_TEST(memory_limit)
{
	struct sample s;
	struct buf out = { 0 };
	struct xz *x = xz_new(4 << 20, 0);

	sample_init(&s, "--lzma2=dict=64MiB");
	ck_assert_int_eq(decode_all(x, s.packed.p, s.packed.len, &out), -MKI_E_LIMIT);
	ck_assert_uint_eq(out.len, 0);
	ck_assert_uint_ge(xz_memneed(x), 64 << 20);
	xz_free(x);
	x = xz_new(128 << 20, 0);
	ck_assert_int_eq(decode_all(x, s.packed.p, s.packed.len, &out), 1);
	ck_assert_uint_eq(out.len, s.plain.len);
	xz_free(x);
	buf_release(&out);
	sample_release(&s);
}
END_TEST

/* Corrupt, truncated and foreign data: -MKI_E_PARSE with liblzma's reason in words. */
START_TEST(bad_data)
{
	struct sample s;
	struct buf out = { 0 };
	struct xz *x;

	sample_init(&s, "");
	x = xz_new(1 << 26, 0);
	ck_assert_int_eq(decode_all(x, s.packed.p, s.packed.len - 20, &out), -MKI_E_PARSE);
	ck_assert_str_eq(xz_error(x), "compressed data ends early (truncated)");
	xz_free(x);
	buf_release(&out);

	s.packed.p[s.packed.len / 2] ^= 0x55;
	x = xz_new(1 << 26, 0);
	ck_assert_int_eq(decode_all(x, s.packed.p, s.packed.len, &out), -MKI_E_PARSE);
	ck_assert_str_eq(xz_error(x), "compressed data is corrupt");
	ck_assert_uint_lt(out.len, s.plain.len);
	xz_free(x);
	buf_release(&out);

	x = xz_new(1 << 26, 0);
	ck_assert_int_eq(decode_all(x, s.plain.p, s.plain.len, &out), -MKI_E_PARSE);
	ck_assert_str_eq(xz_error(x), "not in the .xz format");
	ck_assert_uint_eq(out.len, 0);
	xz_free(x);
	xz_free(NULL);
	buf_release(&out);
	sample_release(&s);
}
END_TEST

Suite *xz_suite(void)
{
	Suite *s = suite_create("xz");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, decodes_in_pieces);
	tcase_add_test(tc, concatenated_streams);
	tcase_add_test(tc, legacy_lzma);
	tcase_add_test(tc, memory_limit);
	tcase_add_test(tc, bad_data);
	suite_add_tcase(s, tc);
	return s;
}
