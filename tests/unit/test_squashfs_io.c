/*
 * libsquashfs's file over a sink (writes within the region, reads back, truncation zeroes) and
 * the compressor wrapper (store, copy, never grow).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/sink.h"
#include "image/squashfs_internal.h"

/* The "none" compressor stores; its uncompressing twin copies; a wrapped one never grows. */
START_TEST(store_compressor)
{
	sqfs_compressor_t *c = squashfs_io_compressor(NULL, 0);
	sqfs_compressor_t *u = squashfs_io_compressor(NULL, 1);
	sqfs_compressor_t *cp = sqfs_copy(c);
	sqfs_compressor_config_t cfg;
	sqfs_u8 in[4] = { 1, 2, 3, 4 }, out[8] = { 0 };

	ck_assert_int_eq(c->do_block(c, in, 4, out, 8), 0);
	ck_assert_int_eq(cp->do_block(cp, in, 4, out, 8), 0);
	ck_assert_int_eq(u->do_block(u, in, 4, out, 8), 4);
	ck_assert_int_eq(memcmp(in, out, 4), 0);
	ck_assert_int_eq(u->do_block(u, in, 4, out, 2), SQFS_ERROR_OVERFLOW);
	c->get_configuration(c, &cfg);
	ck_assert_int_eq(cfg.id, SQFS_COMP_GZIP);
	sqfs_destroy(cp);
	sqfs_destroy(c);
	sqfs_destroy(u);
	ck_assert_int_eq(sqfs_compressor_config_init(&cfg, SQFS_COMP_LZ4, 131072, 0), 0);
	ck_assert_int_eq(sqfs_compressor_create(&cfg, &cp), 0);
	c = squashfs_io_compressor(cp, 0);
	ck_assert_int_eq(c->do_block(c, in, 4, out, 8), 0); /* lz4 makes 5 bytes of these 4 */
	sqfs_destroy(c);
}
END_TEST

/* Writes land in the region; get_size follows; a truncation zeroes what it gives back. */
START_TEST(io_over_region)
{
	char path[] = "/var/tmp/mki-unit-sqio-XXXXXX";
	int fd = mkstemp(path);
	struct squashfs_io io;
	struct sink k;
	uint8_t buf[16], ff[16];

	ck_assert_int_ge(fd, 0);
	memset(ff, 0xff, sizeof(ff));
	ck_assert_int_eq(pwrite(fd, ff, sizeof(ff), 0), (ssize_t)sizeof(ff));
	ck_assert_int_eq(pwrite(fd, ff, sizeof(ff), 32), (ssize_t)sizeof(ff));
	sink_init_region(&k, fd, 16, 16, "region");
	squashfs_io_init(&io, &k);
	ck_assert_int_eq(io.base.write_at(&io.base, 0, "abcdefgh", 8), 0);
	ck_assert_uint_eq(io.base.get_size(&io.base), 8);
	ck_assert_int_eq(io.base.read_at(&io.base, 2, buf, 3), 0);
	ck_assert_int_eq(memcmp(buf, "cde", 3), 0);
	ck_assert_int_eq(io.base.read_at(&io.base, 6, buf, 4), SQFS_ERROR_OUT_OF_BOUNDS);
	ck_assert_int_eq(io.base.truncate(&io.base, 4), 0);
	ck_assert_uint_eq(io.base.get_size(&io.base), 4);
	ck_assert_int_eq(pread(fd, buf, 8, 16), 8);
	ck_assert_int_eq(memcmp(buf, "abcd\0\0\0\0", 8), 0);
	/* past the region: dropped and counted, read back as zeros, nothing written after it */
	ck_assert_int_eq(io.base.write_at(&io.base, 12, "0123456789", 10), 0);
	ck_assert_int_eq(io.overflow, 1);
	ck_assert_int_eq(io.err, 0);
	ck_assert_uint_eq(io.base.get_size(&io.base), 22);
	ck_assert_int_eq(io.base.read_at(&io.base, 14, buf, 4), 0);
	ck_assert_int_eq(memcmp(buf, "\0\0\0\0", 4), 0);
	ck_assert_int_eq(pread(fd, buf, 16, 32), 16);
	ck_assert_int_eq(memcmp(buf, ff, 16), 0);
	ck_assert_int_eq(io.base.truncate(&io.base, 4), 0);
	ck_assert_int_eq(pread(fd, buf, 16, 32), 16);
	ck_assert_int_eq(memcmp(buf, ff, 16), 0);
	sink_release(&k);
	close(fd);
	unlink(path);
}
END_TEST

Suite *squashfs_io_suite(void)
{
	Suite *s = suite_create("squashfs_io");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, store_compressor);
	tcase_add_test(tc, io_over_region);
	suite_add_tcase(s, tc);
	return s;
}
