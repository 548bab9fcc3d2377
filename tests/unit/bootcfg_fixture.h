/*
 * The boot configuration tests' fixture (test_bootcfg.c, test_bootcfg_verity.c): a recipe with
 * a root, optionally a /boot partition and an ESP at /boot/efi, over a temporary tree holding
 * os-release, two kernels, an initrd and systemd-boot's loader. Static: each suite its own copy.
 */
#ifndef MKI_TEST_BOOTCFG_FIXTURE_H
#define MKI_TEST_BOOTCFG_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/bootcfg.h"
#include "lib/fsutil.h"

static char n_root[] = "root", n_boot[] = "boot", n_esp[] = "esp", p_boot[] = "boot",
	    p_efi[] = "boot/efi", t_esp[] = "esp", t_root[] = "root", t_linux[] = "linux",
	    name[] = "board", file[] = "board.cfg", arch[] = "amd64", cmd[] = "ro rootwait",
	    con[] = "ttyS0,115200";
static struct recipe_partition parts[4];
static struct recipe rec;
static char dir[64];

static void put(const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", dir, rel), *slash = strrchr(p, '/');

	*slash = 0;
	ck_assert_int_eq(fsutil_mkdirs(p), 0);
	*slash = '/';
	ck_assert_int_eq(fsutil_write_atomic(p, text, strlen(text)), 0);
	free(p);
}

static char *get(const char *rel)
{
	char *p = xasprintf("%s/%s", dir, rel), *text = xcalloc(1, 65536);
	int fd = open(p, O_RDONLY);

	ck_assert_msg(fd >= 0, "'%s' missing", rel);
	ck_assert_int_ge(read(fd, text, 65535), 0);
	close(fd);
	free(p);
	return text;
}

/* A recipe: root, and with `boot` a /boot partition, with `esp` an ESP at /boot/efi. */
static void setup(int loader, int boot, int esp)
{
	size_t n = 0;

	snprintf(dir, sizeof(dir), "/tmp/test-bootcfg-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	memset(parts, 0, sizeof(parts));
	memset(&rec, 0, sizeof(rec));
	if (esp)
		parts[n++] = (struct recipe_partition){ .name = n_esp, .type = t_esp, .path = p_efi,
			.contents = PART_SUBTREE, .format = PART_FS_VFAT, .table_entry = 1 };
	if (boot)
		parts[n++] = (struct recipe_partition){ .name = n_boot, .type = t_linux,
			.path = p_boot, .contents = PART_SUBTREE, .format = PART_FS_EXT4,
			.table_entry = 1 };
	parts[n++] = (struct recipe_partition){ .name = n_root, .type = t_root,
		.contents = PART_ROOT, .format = PART_FS_EXT4, .table_entry = 1 };
	rec.name = name;
	rec.file = file;
	rec.arch = arch;
	rec.disk.set = 1;
	rec.disk.bootloader = loader;
	rec.disk.cmdline = cmd;
	rec.disk.console = con;
	rec.disk.partitions = parts;
	rec.disk.n_partitions = n;
	put("etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n");
	put("boot/vmlinuz-6.1.0-9-amd64", "old kernel");
	put("boot/vmlinuz-6.1.0-13-amd64", "kernel");
	put("boot/initrd.img-6.1.0-13-amd64", "initrd");
	put("usr/lib/systemd/boot/efi/systemd-bootx64.efi", "MZ loader");
}

static int run(struct staging *s)
{
	struct settings st = { 0 };
	int rootfd = open(dir, O_PATH | O_DIRECTORY), ret;

	st.source_date_epoch = 1700000000;
	ret = bootcfg_write(s, &rec, rootfd, &st);
	close(rootfd);
	return ret;
}

static void teardown(void)
{
	fsutil_remove_tree(dir);
}

#endif
