#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/initramfs.h"
#include "lib/err.h"
#include "sandbox/idshift.h"
#include "sandboxed.h"

#define PKG_UPDATE "#!/bin/sh\necho initramfs-tools' own\n"
#define UPDATE "usr/sbin/update-initramfs"

/* A tree in the build namespace with usr/sbin and boot; update-initramfs `text` (NULL: none). */
static int tree_with(char *dir, const char *text)
{
	int fd = unit_tree_new(dir, "usr", "usr/sbin", "boot", (char *)NULL);

	if (text)
		unit_write(dir, UPDATE, text, 0755);
	return fd;
}

static void no_traces(const char *dir)
{
	ck_assert(!unit_exists(dir, UPDATE ".mkimage-real"));
	ck_assert(!unit_exists(dir, UPDATE ".mkimage-once"));
	ck_assert(!unit_exists(dir, UPDATE ".mkimage-tmp"));
}

/* initramfs_check() expected to return `want`: what it logged (new string). */
static char *logged_check(const struct initramfs *d, int fd, const char *dir, int want)
{
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *log;

	unit_log_capture(logf);
	ck_assert_int_eq(initramfs_check(d, fd, dir), want);
	log = unit_log_text(logf);
	unlink(logf);
	return log;
}

/* The shim in place of the package's program, which is then put back as it was, inode and all. */
START_TEST(diverted_then_put_back_exactly)
{
	char dir[] = "/tmp/mki-unit-initramfs-XXXXXX", path[512];
	struct initramfs d = { 0 };
	struct stat before, shim, after;
	char *text;
	int fd = tree_with(dir, PKG_UPDATE);

	snprintf(path, sizeof(path), "%s/" UPDATE, dir);
	ck_assert_int_eq(stat(path, &before), 0);
	ck_assert_int_eq(initramfs_divert(&d, fd), 0);
	ck_assert_int_eq(d.diverted, 1);
	unit_file_is(dir, UPDATE ".mkimage-real", PKG_UPDATE);
	text = unit_read(dir, UPDATE);
	ck_assert_ptr_nonnull(strstr(text, "exec \"$real\" \"$@\""));
	ck_assert_ptr_nonnull(strstr(text, "real=/usr/sbin/update-initramfs.mkimage-real\n"));
	free(text);
	ck_assert_int_eq(stat(path, &shim), 0);
	ck_assert_uint_eq(shim.st_mode & 07777, 0755);
	ck_assert_uint_eq(shim.st_uid, idshift_tree_uid(0));

	ck_assert_int_eq(initramfs_restore(&d, fd, dir), 0);
	ck_assert_int_eq(d.diverted, 0);
	ck_assert_ptr_null(d.once);
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_uint_eq(after.st_ino, before.st_ino);
	unit_file_is(dir, UPDATE, PKG_UPDATE);
	no_traces(dir);
	ck_assert_int_eq(initramfs_restore(&d, fd, dir), 0); /* twice: nothing more to do */
	initramfs_release(&d);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

/* No update-initramfs, or one that is a link or a directory: nothing is diverted. */
START_TEST(nothing_to_divert)
{
	char dir[] = "/tmp/mki-unit-initramfs-XXXXXX", path[512];
	struct initramfs d = { 0 };
	int fd = tree_with(dir, NULL);

	ck_assert_int_eq(initramfs_divert(&d, fd), 0);
	ck_assert_int_eq(d.diverted, 0);
	ck_assert(!unit_exists(dir, UPDATE));
	snprintf(path, sizeof(path), "%s/" UPDATE, dir);
	ck_assert_int_eq(symlink("/usr/sbin/elsewhere", path), 0);
	ck_assert_int_eq(initramfs_divert(&d, fd), 0);
	ck_assert_int_eq(d.diverted, 0);
	ck_assert_int_eq(initramfs_restore(&d, fd, dir), 0);
	no_traces(dir);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

/* A stale file where the package's program would be set aside: refused, the tree untouched. */
START_TEST(stale_real_refused)
{
	char dir[] = "/tmp/mki-unit-initramfs-XXXXXX";
	struct initramfs d = { 0 };
	int fd = tree_with(dir, PKG_UPDATE);

	unit_write(dir, UPDATE ".mkimage-real", "stale", 0644);
	ck_assert_int_eq(initramfs_divert(&d, fd), -EEXIST);
	ck_assert_int_eq(d.diverted, 0);
	unit_file_is(dir, UPDATE, PKG_UPDATE);
	unit_file_is(dir, UPDATE ".mkimage-real", "stale");
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

/* A script replaced the shim: it cannot be told from the package's program, an error. */
START_TEST(replaced_shim_is_an_error)
{
	char dir[] = "/tmp/mki-unit-initramfs-XXXXXX", logf[] = "/tmp/mki-unit-log-XXXXXX", *log;
	struct initramfs d = { 0 };
	int fd = tree_with(dir, PKG_UPDATE);

	ck_assert_int_eq(initramfs_divert(&d, fd), 0);
	unit_write(dir, UPDATE, "#!/bin/sh\necho a script's own\n", 0755);
	unit_log_capture(logf);
	ck_assert_int_eq(initramfs_restore(&d, fd, dir), -MKI_E_HOOK);
	log = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(log, "'/usr/sbin/update-initramfs' in '"));
	ck_assert_ptr_nonnull(strstr(log, "is no longer mkimage's shim"));
	ck_assert_ptr_nonnull(strstr(log, "--no-initramfs-once"));
	free(log);
	unlink(logf);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

/* The shim's record names the versions built once; it is read, said, and removed. */
START_TEST(record_said_and_removed)
{
	char dir[] = "/tmp/mki-unit-initramfs-XXXXXX", *log;
	struct initramfs d = { 0 };
	int fd = tree_with(dir, PKG_UPDATE);

	ck_assert_int_eq(initramfs_divert(&d, fd), 0);
	unit_write(dir, UPDATE ".mkimage-once", "6.1.0-9-armmp\n6.1.0-10-armmp\n", 0644);
	ck_assert_int_eq(initramfs_restore(&d, fd, dir), 0);
	ck_assert_str_eq(d.once, "6.1.0-9-armmp 6.1.0-10-armmp");
	no_traces(dir);
	unit_write(dir, "boot/initrd.img-6.1.0-9-armmp", "\x1f\x8b real enough", 0644);
	log = logged_check(&d, fd, dir, 0);
	ck_assert_ptr_nonnull(strstr(log, "initramfs: built once for 6.1.0-9-armmp 6.1.0-10-armmp, "
					  "by initramfs-tools' trigger"));
	free(log);
	initramfs_release(&d);
	ck_assert_ptr_null(d.once);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

/* A placeholder left in /boot, at any depth and under any name, fails the build with its name. */
START_TEST(placeholder_left_fails)
{
	char dir[] = "/tmp/mki-unit-initramfs-XXXXXX", *log;
	struct initramfs d = { 0 };
	int fd = tree_with(dir, NULL);

	unit_mkdir(dir, "boot/efi");
	unit_mkdir(dir, "boot/efi/debian");
	unit_write(dir, "boot/vmlinuz-1", "kernel", 0644);
	unit_write(dir, "boot/efi/debian/initrd", "\x27\x05\x19\x56 u-boot header "
		   INITRAMFS_PLACEHOLDER ": initramfs-tools' trigger builds it\n", 0644);
	log = logged_check(&d, fd, dir, -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "'/boot/efi/debian/initrd' in '"));
	ck_assert_ptr_nonnull(strstr(log, "is still mkimage's placeholder initrd"));
	ck_assert_ptr_nonnull(strstr(log, "build with --no-initramfs-once"));
	ck_assert_ptr_null(strstr(log, "built once"));
	free(log);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

/* What is not a placeholder passes: larger files, links to one, no /boot at all. */
START_TEST(no_placeholder_passes)
{
	char dir[] = "/tmp/mki-unit-initramfs-XXXXXX", path[512], *big, *log;
	struct initramfs d = { 0 };
	int fd = tree_with(dir, NULL);
	size_t n = (64u << 10) + 1;

	big = malloc(n + 1);
	memset(big, 'x', n);
	memcpy(big + n - strlen(INITRAMFS_PLACEHOLDER), INITRAMFS_PLACEHOLDER,
	       strlen(INITRAMFS_PLACEHOLDER));
	big[n] = '\0';
	unit_write(dir, "boot/initrd.img-1", big, 0644); /* past the size a placeholder can have */
	free(big);
	unit_write(dir, "outside", INITRAMFS_PLACEHOLDER, 0644);
	snprintf(path, sizeof(path), "%s/boot/link", dir);
	ck_assert_int_eq(symlink("/outside", path), 0); /* not followed */
	log = logged_check(&d, fd, dir, 0);
	ck_assert_str_eq(log, "");
	free(log);
	snprintf(path, sizeof(path), "%s/boot", dir);
	unit_tree_remove(path);
	log = logged_check(&d, fd, dir, 0);
	free(log);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

Suite *initramfs_suite(void)
{
	Suite *s = suite_create("initramfs");
	TCase *tc = tcase_create("initramfs");

	UNIT_ADD_SANDBOXED(tc, diverted_then_put_back_exactly);
	UNIT_ADD_SANDBOXED(tc, nothing_to_divert);
	UNIT_ADD_SANDBOXED(tc, stale_real_refused);
	UNIT_ADD_SANDBOXED(tc, replaced_shim_is_an_error);
	UNIT_ADD_SANDBOXED(tc, record_said_and_removed);
	UNIT_ADD_SANDBOXED(tc, placeholder_left_fails);
	UNIT_ADD_SANDBOXED(tc, no_placeholder_passes);
	suite_add_tcase(s, tc);
	return s;
}
