/*
 * The squashfs writer on the image fixture: every entry as the view has it (read back with
 * rdsquashfs and unsquashfs), every compression, the same bytes for any number of worker
 * threads, 4096-byte padding, a region too small, and the superblock's size read back.
 */
#include <check.h>
#include <errno.h>

#include "image/squashfs.h"
#include "image_fixture.h"
#include "lib/err.h"

#define MIB (1ull << 20)

static struct fixture fx;
static char squashfs[] = "squashfs";

static int write_file(const char *path, unsigned threads)
{
	struct sink k;
	int ret;

	sink_init_file(&k, path);
	ret = squashfs_write_threads(&fx.t, &fx.p, &k, threads);
	if (!ret)
		ck_assert_int_eq(sink_commit(&k), 0);
	sink_release(&k);
	return ret;
}

static void setup_tree(void)
{
	fx_setup(&fx, "squashfs", squashfs);
	fx_tree(&fx);
}

/* `cmd`'s output (taken) has a line matching the extended regex `re`. */
static int out_has(char *cmd, const char *re)
{
	char *full = xasprintf("%s 2>&1 | grep -Eq -- '%s'", cmd, re);

	free(cmd);
	return fx_sh(full) == 0;
}

/* unsquashfs -lln of `image` has a line matching `re`. */
static int listed(const char *image, const char *re)
{
	return out_has(xasprintf("unsquashfs -lln '%s'", image), re);
}

START_TEST(entries)
{
	char *o;

	setup_tree();
	ck_assert_int_eq(write_file(fx.out, 2), 0);
	o = fx.out;
	ck_assert_int_eq(fx_sh(xasprintf("unsquashfs -d '%s/x' '%s' >/dev/null", fx.top, o)), 0);
	ck_assert(listed(o, "^-rw-r----- 1000/0 +10000 1970-01-01 00:00 squashfs-root/etc/data$"));
	ck_assert(listed(o, "^drwxr-xr-x 7/0 .* squashfs-root/etc$"));
	ck_assert(listed(o, "^lrwxrwxrwx .* squashfs-root/etc/link -> data$"));
	ck_assert(listed(o, "^crw-rw-rw- 0/0 +1, +3 .* squashfs-root/var/null$"));
	/* unsquashfs 4.5 shows a minor above 255 wrongly: rdsquashfs and the kernel decode it */
	ck_assert(out_has(xasprintf("rdsquashfs -s /var/big '%s'", o),
			  "^Device number: 259:70000 "));
	ck_assert(listed(o, "^prw------- .* squashfs-root/etc/fifo$"));
	ck_assert(listed(o, "^srw------- .* squashfs-root/etc/sock$"));
	/* the mtime clamped to the epoch; the hard link one inode of two links; the xattr */
	ck_assert(out_has(xasprintf("rdsquashfs -s /var/sparse '%s'", o),
			  "^Last modified: .*\\(1000\\)$"));
	ck_assert(out_has(xasprintf("rdsquashfs -s /etc/data2 '%s'", o),
			  "^Hard link count: 2$"));
	ck_assert(out_has(xasprintf("rdsquashfs -s /etc/data2 '%s'", o), "^Inode number: 1$"));
	ck_assert(out_has(xasprintf("rdsquashfs -s /etc/data '%s'", o), "^Inode number: 1$"));
	ck_assert(out_has(xasprintf("rdsquashfs -x /etc/data '%s'", o), "^user.k=v1$"));
	/* the superblock's time is the epoch; the sparse file's hole is a sparse block */
	ck_assert(out_has(xasprintf("unsquashfs -s '%s'", o),
			  "^Creation or last append time Thu Jan  1 00:16:40 1970$"));
	ck_assert_int_eq(fx_sh(xasprintf("cmp '%s/x/var/sparse' '%s/var/sparse'", fx.top,
					 fx.st.root)), 0);
	ck_assert_int_eq(fx_sh(xasprintf("cmp '%s/x/etc/data' '%s/etc/data'", fx.top,
					 fx.st.root)), 0);
	fx_teardown(&fx);
}
END_TEST

/* Any number of workers, the same bytes; the size a multiple of 4096, as the superblock says. */
START_TEST(threads_and_padding)
{
	char *b = NULL;
	struct stat st;
	uint8_t sb[96];
	uint64_t bytes = 0;
	int fd;

	setup_tree();
	b = xasprintf("%s/b", fx.top);
	ck_assert_int_eq(write_file(fx.out, 0), 0);
	ck_assert_int_eq(write_file(b, 4), 0);
	ck_assert_msg(fx_same(fx.out, b), "0 and 4 worker threads wrote different bytes");
	ck_assert_int_eq(stat(b, &st), 0);
	ck_assert_int_eq(st.st_size % 4096, 0);
	fd = open(b, O_RDONLY);
	ck_assert_int_eq(pread(fd, sb, sizeof(sb), 0), (ssize_t)sizeof(sb));
	close(fd);
	ck_assert_int_eq(squashfs_size(sb, &bytes), 0);
	ck_assert_uint_eq(bytes, (uint64_t)st.st_size);
	sb[0] = 'x';
	ck_assert_int_eq(squashfs_size(sb, &bytes), -EINVAL);
	free(b);
	fx_teardown(&fx);
}
END_TEST

/* Every compression: the superblock names it, unsquashfs reads the data back. */
START_TEST(compressions)
{
	static const char *const names[] = { "zstd", "xz", "lz4", "gzip", "gzip" };
	char *re;
	int c;

	setup_tree();
	for (c = FS_COMP_ZSTD; c <= FS_COMP_NONE; c++) {
		fx.im.compression = c;
		ck_assert_int_eq(write_file(fx.out, 1), 0);
		re = xasprintf("^Compression %s$", names[c]);
		ck_assert_msg(out_has(xasprintf("unsquashfs -s '%s'", fx.out), re), "%s", names[c]);
		free(re);
		ck_assert_int_eq(out_has(xasprintf("unsquashfs -s '%s'", fx.out),
					 "^Data is uncompressed$"), c == FS_COMP_NONE);
		ck_assert_int_eq(fx_sh(xasprintf("rm -rf '%s/x' && unsquashfs -d '%s/x' '%s' "
						 ">/dev/null && cmp '%s/x/etc/data' '%s/etc/data'",
						 fx.top, fx.top, fx.out, fx.top, fx.st.root)), 0);
	}
	fx_teardown(&fx);
}
END_TEST

/* A region too small: -MKI_E_NOSPACE, nothing past the region touched. */
START_TEST(region_too_small)
{
	char *disk;
	struct sink k;
	int fd;

	setup_tree();
	fx.im.compression = FS_COMP_NONE;
	disk = xasprintf("%s/disk", fx.top);
	fd = fx_pattern_file(disk, 4 * MIB, 0xa5);
	sink_init_region(&k, fd, MIB, 8192, "disk");
	ck_assert_int_eq(squashfs_write_threads(&fx.t, &fx.p, &k, 1), -MKI_E_NOSPACE);
	sink_release(&k);
	ck_assert(fx_all(fd, 0, MIB, 0xa5));
	ck_assert(fx_all(fd, MIB + 8192, 4 * MIB, 0xa5));
	close(fd);
	free(disk);
	fx_teardown(&fx);
}
END_TEST

START_TEST(estimate_bounds_image)
{
	uint64_t est = 0;
	struct stat st;

	setup_tree();
	fx.im.compression = FS_COMP_NONE;
	ck_assert_int_eq(squashfs_estimate(&fx.t, &fx.p, &est), 0);
	ck_assert_int_eq(write_file(fx.out, 1), 0);
	ck_assert_int_eq(stat(fx.out, &st), 0);
	ck_assert_uint_ge(est, (uint64_t)st.st_size);
	ck_assert_uint_eq(est % 4096, 0);
	fx_teardown(&fx);
}
END_TEST

Suite *squashfs_suite(void)
{
	Suite *s = suite_create("squashfs");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, entries);
	tcase_add_test(tc, threads_and_padding);
	tcase_add_test(tc, compressions);
	tcase_add_test(tc, region_too_small);
	tcase_add_test(tc, estimate_bounds_image);
	suite_add_tcase(s, tc);
	return s;
}
