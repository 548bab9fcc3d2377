/*
 * The A/B boot selection of a verified root (bootcfg_abv.c): boot.scr boots each slot's own
 * boot partition and names its hash partition, the entry's root takes both from boot.scr,
 * system.conf has the hash and boot partitions as children, fstab mounts the booted slot's
 * boot partition through the udev link. Test 121 boots all of it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configure/bootcfg.h"
#include "lib/str.h"
#include "recipe/partuuid.h"

static char n_sel[] = "select", n_ba[] = "boot-a", n_a[] = "root-a", n_ha[] = "root-a-verity",
	    n_bb[] = "boot-b", n_b[] = "root-b", n_hb[] = "root-b-verity", t_linux[] = "linux",
	    t_root[] = "root", t_verity[] = "root-verity", p_select[] = "boot/select",
	    p_boot[] = "boot", name[] = "board", arch[] = "armhf", compat[] = "acme-board",
	    version[] = "7";
static struct recipe_partition parts[7];
static struct recipe rec;

static void part(size_t i, char *n, char *type, enum partition_contents c,
		 enum partition_format f, char *path)
{
	parts[i] = (struct recipe_partition){ .name = n, .type = type, .contents = c,
		.format = f, .path = path, .table_entry = 1 };
}

/* select, boot-a, root-a, root-a-verity, boot-b, root-b, root-b-verity */
static void setup(void)
{
	memset(parts, 0, sizeof(parts));
	memset(&rec, 0, sizeof(rec));
	part(0, n_sel, t_linux, PART_SUBTREE, PART_FS_VFAT, p_select);
	part(1, n_ba, t_linux, PART_SUBTREE, PART_FS_EXT4, p_boot);
	part(2, n_a, t_root, PART_ROOT, PART_FS_SQUASHFS, NULL);
	part(3, n_ha, t_verity, PART_VERITY, PART_FS_NONE, NULL);
	parts[3].verity_of = 2;
	part(4, n_bb, t_linux, PART_EMPTY, PART_FS_NONE, NULL);
	part(5, n_b, t_root, PART_EMPTY, PART_FS_NONE, NULL);
	part(6, n_hb, t_verity, PART_EMPTY, PART_FS_NONE, NULL);
	rec.name = name;
	rec.arch = arch;
	rec.disk.set = 1;
	rec.disk.bootloader = DISK_BOOT_EXTLINUX;
	rec.disk.partitions = parts;
	rec.disk.n_partitions = 7;
	rec.update.set = 1;
	rec.update.compatible = compat;
	rec.update.version = version;
	rec.update.root = 2;
	rec.update.select = 0;
	rec.update.verity = 1;
	rec.update.boot_attempts = 3;
	strv_push(&rec.update.slots, n_a);
	strv_push(&rec.update.slots, n_b);
}

static void teardown(void)
{
	strv_release(&rec.update.slots);
}

/* `b` holds BEFORE, partition idx's PARTUUID, AFTER. */
static void has(const struct buf *b, const char *before, size_t idx, const char *after)
{
	char id[37], *want;

	partuuid_partition(&rec, 1700000000, idx, id);
	want = xasprintf("%s%s%s", before, id, after);
	ck_assert_msg(strstr(b->p, want), "no '%s' in:\n%s", want, b->p);
	free(want);
}

START_TEST(script)
{
	struct buf b = { 0 };

	setup();
	bootcfg_ab_script(&rec, 1700000000, &b);
	has(&b, "\tsetenv mkimage_slot_part 2\n\tsetenv mkimage_slot_partuuid ", 2, "\n");
	has(&b, "\tsetenv mkimage_slot_hash_partuuid ", 3, "\nfi\n");
	has(&b, "\tsetenv mkimage_slot_part 5\n\tsetenv mkimage_slot_partuuid ", 5, "\n");
	has(&b, "\tsetenv mkimage_slot_hash_partuuid ", 6, "\nfi\n");
	ck_assert_ptr_nonnull(strstr(b.p, "sysboot ${devtype} ${devnum}:${mkimage_slot_part} any "
				     "${pxefile_addr_r} /extlinux/extlinux.conf\n"));
	ck_assert_ptr_null(strstr(b.p, "/boot/extlinux"));
	buf_release(&b);
	bootcfg_abv_root(&rec, "ab12", &b);
	ck_assert_str_eq(b.p, "/dev/mapper/root rootfstype=squashfs "
			 "mkimage.verity_data=PARTUUID=${mkimage_slot_partuuid} "
			 "mkimage.verity_hash=PARTUUID=${mkimage_slot_hash_partuuid} "
			 "mkimage.roothash=ab12");
	buf_release(&b);
	teardown();
}
END_TEST

START_TEST(system_conf)
{
	struct buf b = { 0 };

	setup();
	bootcfg_ab_system_conf(&rec, 1700000000, &b);
	has(&b, "[slot.rootfs.0]\ndevice=/dev/disk/by-partuuid/", 2, "\ntype=raw\nbootname=A\n");
	has(&b, "[slot.verity.0]\ndevice=/dev/disk/by-partuuid/", 3, "\ntype=raw\nparent=rootfs.0\n");
	has(&b, "[slot.boot.0]\ndevice=/dev/disk/by-partuuid/", 1, "\ntype=ext4\nparent=rootfs.0\n");
	has(&b, "[slot.rootfs.1]\ndevice=/dev/disk/by-partuuid/", 5, "\ntype=raw\nbootname=B\n");
	has(&b, "[slot.verity.1]\ndevice=/dev/disk/by-partuuid/", 6, "\ntype=raw\nparent=rootfs.1\n");
	has(&b, "[slot.boot.1]\ndevice=/dev/disk/by-partuuid/", 4, "\ntype=ext4\nparent=rootfs.1\n");
	buf_release(&b);
	teardown();
}
END_TEST

START_TEST(boot_mount)
{
	struct buf b = { 0 };

	setup();
	bootcfg_abv_udev_rule(&rec, 1700000000, &b);
	has(&b, "ENV{ID_PART_ENTRY_UUID}==\"", 1, "\", PROGRAM==\"/bin/grep -qw rauc.slot=A "
	    "/proc/cmdline\", SYMLINK+=\"mkimage/boot\"\n");
	has(&b, "ENV{ID_PART_ENTRY_UUID}==\"", 4, "\", PROGRAM==\"/bin/grep -qw rauc.slot=B "
	    "/proc/cmdline\", SYMLINK+=\"mkimage/boot\"\n");
	buf_release(&b);
	bootcfg_fstab(&rec, 1700000000, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "/dev/mapper/root\t/\tsquashfs\t"));
	ck_assert_ptr_nonnull(strstr(b.p, "\n/dev/mkimage/boot\t/boot\text4\t"));
	has(&b, "\nPARTUUID=", 0, "\t/boot/select\tvfat\t");
	ck_assert(bootcfg_abv_is_slot_boot(&rec, 1) && !bootcfg_abv_is_slot_boot(&rec, 4));
	buf_release(&b);
	teardown();
}
END_TEST

Suite *bootcfg_abv_suite(void)
{
	Suite *s = suite_create("bootcfg_abv");
	TCase *tc = tcase_create("bootcfg_abv");

	tcase_add_test(tc, script);
	tcase_add_test(tc, system_conf);
	tcase_add_test(tc, boot_mount);
	suite_add_tcase(s, tc);
	return s;
}
