#include <archive.h>
#include <archive_entry.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/initrdcheck.h"
#include "lib/err.h"
#include "lib/fsutil.h"

#define KVER "6.12.1-armmp"
#define BLOCK "usr/lib/modules/" KVER "/kernel/drivers/block"

/* A cpio newc archive of `names` (empty files), through `filter` (ARCHIVE_FILTER_*), appended. */
static void cpio_append(FILE *out, int filter, const char *const *names)
{
	struct archive *a = archive_write_new();
	static char buf[1 << 20];
	size_t used = 0;

	archive_write_set_format_cpio_newc(a);
	archive_write_add_filter(a, filter);
	ck_assert_int_eq(archive_write_open_memory(a, buf, sizeof(buf), &used), ARCHIVE_OK);
	for (; *names; names++) {
		struct archive_entry *e = archive_entry_new();

		archive_entry_set_pathname(e, *names);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, 0);
		ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
	ck_assert_uint_eq(fwrite(buf, 1, used, out), used);
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	*strrchr(path, '/') = 0;
	ck_assert_int_eq(fsutil_mkdirs(path), 0);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static const char *const early_with[] = { "kernel", "kernel/x86", "usr/lib/modules/" KVER
	"/kernel/drivers/block/virtio_blk.ko.xz", NULL };
static const char *const early_without[] = { "kernel", "usr/lib/modules/" KVER
	"/kernel/drivers/hid/hid.ko.xz", NULL };
static const char *const main_part[] = { ".", "init", "usr/bin/busybox", NULL };

/* A tree (mkdtemp'd into `dir`) with a kernel shipping a block driver, MODULES as given. */
static int tree(char *dir, const char *modules, const char *const *early, int merged)
{
	char path[512];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, BLOCK "/virtio_blk.ko.xz", "");
	put(dir, "etc/initramfs-tools/initramfs.conf", modules);
	put(dir, "etc/initramfs-tools/conf.d/.keep", "");
	if (merged)
		ck_assert_int_eq(symlink("usr/lib", (snprintf(path, sizeof(path), "%s/lib", dir), path)), 0);
	snprintf(path, sizeof(path), "%s/boot", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/boot/initrd.img-" KVER, dir);
	f = fopen(path, "w");
	cpio_append(f, ARCHIVE_FILTER_NONE, early);
	fwrite("\0\0\0\0\0\0\0\0", 1, 8, f);
	cpio_append(f, ARCHIVE_FILTER_GZIP, main_part);
	fclose(f);
	return open(dir, O_RDONLY | O_DIRECTORY);
}

/* trixie's layout: the modules in the uncompressed segment ahead of the compressed one. */
START_TEST(modules_in_early_segment_pass)
{
	char dir[] = "/tmp/mki-initrd-XXXXXX";
	int fd = tree(dir, "MODULES=most\n", early_with, 1);

	ck_assert_int_eq(initrdcheck_tree(fd, dir), 0);
	close(fd);
	fsutil_remove_tree(dir);
}
END_TEST

/* The failure seen on armhf under emulation: modules, but no block driver among them. */
START_TEST(no_block_driver_fails)
{
	char dir[] = "/tmp/mki-initrd-XXXXXX";
	int fd = tree(dir, "# comment\nMODULES=most\n", early_without, 1);

	ck_assert_int_eq(initrdcheck_tree(fd, dir), -MKI_E_HOOK);
	close(fd);
	fsutil_remove_tree(dir);
}
END_TEST

/* Only MODULES=most promises the block drivers; a later conf.d file has the last word. */
START_TEST(other_module_settings_are_not_checked)
{
	char dir[] = "/tmp/mki-initrd-XXXXXX";
	int fd = tree(dir, "MODULES=dep\n", early_without, 0);

	ck_assert_int_eq(initrdcheck_tree(fd, dir), 0);
	put(dir, "etc/initramfs-tools/conf.d/zz-most", "  MODULES=\"most\" # back\n");
	ck_assert_int_eq(initrdcheck_tree(fd, dir), -MKI_E_HOOK);
	put(dir, "etc/initramfs-tools/conf.d/zzz-list", "MODULES=list\n");
	ck_assert_int_eq(initrdcheck_tree(fd, dir), 0);
	close(fd);
	fsutil_remove_tree(dir);
}
END_TEST

/* Counting: every segment, names with "./" or "/" or "usr/" in front alike. */
START_TEST(count_reads_every_segment)
{
	static const char *const a[] = { "./lib/modules/x/a.ko", "b", NULL };
	static const char *const b[] = { "/usr/lib/modules/x/c.ko.zst", "lib/modules/y/d.ko", NULL };
	char path[] = "/tmp/mki-initrd-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(dup(fd), "w");
	unsigned entries, hits;

	cpio_append(f, ARCHIVE_FILTER_NONE, a);
	cpio_append(f, ARCHIVE_FILTER_XZ, b);
	fclose(f);
	ck_assert_int_eq(initrdcheck_count(fd, "lib/modules/x/", &entries, &hits), 0);
	ck_assert_uint_eq(entries, 4);
	ck_assert_uint_eq(hits, 2);
	close(fd);
	unlink(path);
}
END_TEST

/* Not a cpio archive, or one cut short: an error, never a count. */
START_TEST(garbage_is_an_error)
{
	char path[] = "/tmp/mki-initrd-XXXXXX";
	int fd = mkstemp(path);
	unsigned entries, hits;

	ck_assert_int_eq(write(fd, "070701zzzz", 10), 10);
	ck_assert_int_eq(initrdcheck_count(fd, "lib/", &entries, &hits), -EBADMSG);
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	ck_assert_int_eq(pwrite(fd, "not an archive at all", 21, 0), 21);
	ck_assert_int_eq(initrdcheck_count(fd, "lib/", &entries, &hits), -EBADMSG);
	close(fd);
	unlink(path);
}
END_TEST

Suite *initrdcheck_suite(void)
{
	Suite *s = suite_create("initrdcheck");
	TCase *tc = tcase_create("initrdcheck");

	tcase_add_test(tc, modules_in_early_segment_pass);
	tcase_add_test(tc, no_block_driver_fails);
	tcase_add_test(tc, other_module_settings_are_not_checked);
	tcase_add_test(tc, count_reads_every_segment);
	tcase_add_test(tc, garbage_is_an_error);
	suite_add_tcase(s, tc);
	return s;
}
