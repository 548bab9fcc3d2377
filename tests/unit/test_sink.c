/* Sinks: a whole file through a temporary committed by rename, and a bounded region of a file. */
#include <check.h>
#include <errno.h>

#include "image/sink.h"
#include "image_fixture.h"
#include "lib/err.h"

static struct fixture fx;

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

START_TEST(whole_file_commit)
{
	struct sink k;
	struct stat st;

	fx_setup(&fx, "sink", NULL);
	sink_init_file(&k, fx.out);
	ck_assert_int_eq(size_of(k.tmp), -1); /* nothing before sink_begin */
	ck_assert_int_eq(sink_begin(&k, 3 * 4096), 0);
	ck_assert_int_eq(size_of(k.tmp), 3 * 4096);
	ck_assert_int_eq(sink_pwrite(&k, "abc", 3, 4096), 0);
	ck_assert_int_eq(sink_begin(&k, 8192), 0); /* again: emptied, then the new size */
	ck_assert_int_eq(size_of(k.tmp), 8192);
	ck_assert_int_eq(fx_all(k.fd, 0, 8192, 0), 1);
	ck_assert_int_eq(sink_pwrite(&k, "xyz", 3, 100), 0);
	ck_assert_int_eq(size_of(fx.out), -1);
	ck_assert_int_eq(sink_commit(&k), 0);
	ck_assert_int_eq(size_of(fx.out), 8192);
	ck_assert_int_eq(size_of(k.tmp), -1);
	ck_assert_int_eq(stat(fx.out, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0666 & ~022u); /* umask 022 in the tests */
	sink_release(&k);
	ck_assert_int_eq(size_of(fx.out), 8192);
}
END_TEST

START_TEST(whole_file_dropped)
{
	struct sink k;
	char *tmp;
	int fd;

	fx_setup(&fx, "sink", NULL);
	fd = fx_pattern_file(fx.out, 65536, 'o');
	close(fd);
	sink_init_file(&k, fx.out);
	tmp = xstrdup(k.tmp);
	ck_assert_int_eq(sink_begin(&k, 4096), 0);
	ck_assert_int_eq(size_of(tmp), 4096);
	sink_release(&k);
	ck_assert_int_eq(size_of(tmp), -1);
	ck_assert_int_eq(size_of(fx.out), 65536); /* the previous output stays */
	free(tmp);
}
END_TEST

START_TEST(region_bounds)
{
	char *disk, *path, *want;
	struct sink k;
	int fd;

	fx_setup(&fx, "sink", NULL);
	disk = xasprintf("%s/disk", fx.top);
	fd = fx_pattern_file(disk, 65536, 'p');
	sink_init_region(&k, fd, 8192, 16384, "disk");
	ck_assert_int_eq(sink_begin(&k, 16385), -MKI_E_NOSPACE);
	ck_assert_int_eq(fx_all(fd, 0, 65536, 'p'), 1);
	ck_assert_int_eq(sink_begin(&k, 8192), 0); /* zeroes what the image will span only */
	ck_assert_int_eq(fx_all(fd, 0, 8192, 'p'), 1);
	ck_assert_int_eq(fx_all(fd, 8192, 16384, 0), 1);
	ck_assert_int_eq(fx_all(fd, 16384, 65536, 'p'), 1);
	ck_assert_int_eq(sink_pwrite(&k, "zz", 2, 16383), -EFBIG);
	ck_assert_int_eq(sink_pwrite(&k, "zz", 2, 1ull << 62), -EFBIG);
	ck_assert_int_eq(fx_all(fd, 24576, 65536, 'p'), 1);
	ck_assert_int_eq(sink_pwrite(&k, "zz", 2, 16382), 0);
	ck_assert_int_eq(fx_all(fd, 8192 + 16382, 8192 + 16384, 'z'), 1);
	path = sink_path(&k); /* what mke2fs opens: the same file */
	want = xasprintf("/proc/%d/fd/%d", (int)getpid(), fd);
	ck_assert_str_eq(path, want);
	ck_assert_int_eq(sink_commit(&k), 0); /* its owner commits the file */
	sink_release(&k);
	ck_assert_int_ge(fcntl(fd, F_GETFD), 0); /* borrowed: still open */
	close(fd);
	free(disk);
	free(path);
	free(want);
}
END_TEST

static void teardown(void)
{
	fx_teardown(&fx);
}

Suite *sink_suite(void)
{
	Suite *s = suite_create("sink");
	TCase *tc = tcase_create("sink");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, whole_file_commit);
	tcase_add_test(tc, whole_file_dropped);
	tcase_add_test(tc, region_bounds);
	suite_add_tcase(s, tc);
	return s;
}
