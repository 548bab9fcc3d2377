/*
 * The A/B boot selection of a verified root (bootcfg.h; recipe_update_verity.c has the layout):
 * U-Boot cannot read a squashfs, so each slot's kernel, initrd and extlinux.conf live in the
 * slot's own boot partition, a child slot the bundle writes with the root and its hash tree.
 * boot.scr names the three partitions of the slot it picked; the entry's append carries the
 * root hash (the same in both slots: the bundle writes the same bytes into either) and takes
 * the data and hash partitions from boot.scr's variables. The running system mounts the booted
 * slot's boot partition at /boot (holding the mount point of /boot/select), through a udev
 * link, since fstab is the same bytes in both slots.
 */
#include "bootcfg.h"

#include <stdio.h>
#include <string.h>

#include "recipe/fstype.h"
#include "recipe/partuuid.h"

#define SLOT_BOOT_LINK "mkimage/boot"

void bootcfg_abv_root(const struct recipe *r, const char *roothash, struct buf *out)
{
	buf_addf(out, "/dev/mapper/root rootfstype=%s "
		 "mkimage.verity_data=PARTUUID=${mkimage_slot_partuuid} "
		 "mkimage.verity_hash=PARTUUID=${mkimage_slot_hash_partuuid}",
		 fstype_get(r->disk.partitions[r->update.root].format)->name);
	if (roothash)
		buf_addf(out, " mkimage.roothash=%s", roothash);
}

void bootcfg_abv_script_slot(const struct recipe *r, int64_t sde, size_t slot, struct buf *out)
{
	char id[37];

	partuuid_partition(r, sde, (size_t)recipe_update_child(r, slot, UPDATE_PART_HASH), id);
	buf_addf(out, "\tsetenv mkimage_slot_hash_partuuid %s\n", id);
}

int bootcfg_abv_is_slot_boot(const struct recipe *r, size_t idx)
{
	return recipe_update_boots(r) && r->update.verity &&
	       recipe_update_child(r, r->update.root, UPDATE_PART_BOOT) == (int)idx;
}

void bootcfg_abv_fstab_device(struct buf *out)
{
	buf_adds(out, "/dev/" SLOT_BOOT_LINK);
}

/* Slot `i` of system.conf (rootfs.I, bootname A or B) and its children, by PARTUUID. */
void bootcfg_abv_system_slot(const struct recipe *r, int64_t sde, size_t i, size_t slot,
			     struct buf *out)
{
	int boot = recipe_update_child(r, slot, UPDATE_PART_BOOT);
	int model = recipe_update_child(r, r->update.root, UPDATE_PART_BOOT); /* B's is empty */
	char id[37];

	partuuid_partition(r, sde, slot, id);
	buf_addf(out, "\n[slot.rootfs.%zu]\ndevice=/dev/disk/by-partuuid/%s\ntype=raw\n"
		      "bootname=%c\n", i, id, (char)('A' + i));
	partuuid_partition(r, sde, (size_t)recipe_update_child(r, slot, UPDATE_PART_HASH), id);
	buf_addf(out, "\n[slot.verity.%zu]\ndevice=/dev/disk/by-partuuid/%s\ntype=raw\n"
		      "parent=rootfs.%zu\n", i, id, i);
	if (boot < 0)
		return;
	partuuid_partition(r, sde, (size_t)boot, id);
	buf_addf(out, "\n[slot.boot.%zu]\ndevice=/dev/disk/by-partuuid/%s\ntype=%s\n"
		      "parent=rootfs.%zu\n", i, id,
		 fstype_get(r->disk.partitions[model].format)->name, i);
}

/*
 * The udev rule naming the booted slot's boot partition /dev/mkimage/boot: its PARTUUID and
 * the slot on the kernel command line (what boot.scr booted) both match.
 */
void bootcfg_abv_udev_rule(const struct recipe *r, int64_t sde, struct buf *out)
{
	size_t slot[2], i;
	char id[37];

	recipe_update_slots(r, slot, 2);
	buf_adds(out, "# Written by mkimage (mkimage(7), Updates): /dev/" SLOT_BOOT_LINK " is the "
		      "boot partition\n# of the slot U-Boot booted (rauc.slot= on the kernel "
		      "command line); fstab mounts\n# it at /boot.\n"
		      "SUBSYSTEM!=\"block\", GOTO=\"mkimage_slot_boot_end\"\n");
	for (i = 0; i < 2; i++) {
		partuuid_partition(r, sde, (size_t)recipe_update_child(r, slot[i], UPDATE_PART_BOOT),
				   id);
		buf_addf(out, "ENV{ID_PART_ENTRY_UUID}==\"%s\", PROGRAM==\"/bin/grep -qw "
			      "rauc.slot=%c /proc/cmdline\", SYMLINK+=\"" SLOT_BOOT_LINK "\"\n", id,
			 (char)('A' + i));
	}
	buf_adds(out, "LABEL=\"mkimage_slot_boot_end\"\n");
}
