#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/disk.h"
#include "lib/err.h"
#include "lib/fsutil.h"

START_TEST(raw_files_checked)
{
	char dir[] = "/tmp/test-disk-XXXXXX", path[4096], spl[] = "spl", root[] = "root";
	char file[] = "spl.bin";
	struct recipe_partition p[2] = { { .name = spl, .contents = PART_FILE },
					 { .name = root, .contents = PART_ROOT } };
	struct recipe r = { 0 };
	struct staging s = { 0 };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	s.root = dir;
	r.disk.partitions = p;
	r.disk.n_partitions = 2;
	p[0].path = file;
	ck_assert_int_eq(disk_check_files(&s, &r), -MKI_E_IMAGE); /* missing */
	snprintf(path, sizeof(path), "%s/spl.bin", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(disk_check_files(&s, &r), -MKI_E_IMAGE); /* a FIFO, never waited on */
	unlink(path);
	ck_assert_int_eq(symlink("/etc/passwd", path), 0);
	ck_assert_int_eq(disk_check_files(&s, &r), -MKI_E_IMAGE); /* a link, never followed */
	unlink(path);
	ck_assert_int_eq(fsutil_write_atomic(path, "spl", 3), 0);
	ck_assert_int_eq(disk_check_files(&s, &r), 0);
	fsutil_remove_tree(dir);
}
END_TEST

Suite *disk_suite(void)
{
	Suite *s = suite_create("disk");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, raw_files_checked);
	suite_add_tcase(s, tc);
	return s;
}
