/*
 * A root verified by dm-verity (bootcfg.h): Debian 12's initramfs-tools cannot open one, so
 * mkimage writes an initramfs hook and a local-top script into the tree before the maintainer
 * scripts run, and the kernel's postinst builds them into the initramfs. The script reads the
 * root hash and the two partitions from the kernel command line (bootcfg_root), opens
 * /dev/mapper/root with veritysetup and leaves the mount to initramfs-tools.
 */
#include "bootcfg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/strv.h"
#include "recipe/board.h"
#include "tree/staging.h"

#define HOOK "etc/initramfs-tools/hooks/mkimage-verity"
#define SCRIPT "etc/initramfs-tools/scripts/local-top/mkimage-verity"

/* What the hook puts in the initramfs; each module also where the package ships it. */
static const char hook_text[] =
	"#!/bin/sh\n"
	"# Written by mkimage (mkimage(7), BOOTING): the root is verified by dm-verity, which\n"
	"# initramfs-tools cannot open by itself. This puts veritysetup and the kernel modules\n"
	"# into the initramfs; scripts/local-top/mkimage-verity opens the root with them.\n"
	"set -e\n"
	"case \"$1\" in prereqs) echo \"dmsetup\"; exit 0 ;; esac\n"
	". /usr/share/initramfs-tools/hook-functions\n"
	"if [ ! -x /sbin/veritysetup ]; then\n"
	"\techo \"mkimage-verity: /sbin/veritysetup is missing: install cryptsetup-bin\" >&2\n"
	"\texit 1\n"
	"fi\n"
	"manual_add_modules dm-verity squashfs\n"
	"copy_exec /sbin/veritysetup /sbin\n";

/*
 * Opens the root before initramfs-tools waits for root=/dev/mapper/root. A wrong root hash or a
 * changed hash tree stops here (panic: the initramfs shell, or a reboot with panic=); a changed
 * data block is refused by the kernel when it is read, whichever program reads it.
 */
static const char script_text[] =
	"#!/bin/sh\n"
	"# Written by mkimage (mkimage(7), BOOTING): opens the root verified by dm-verity as\n"
	"# /dev/mapper/root, from mkimage.roothash=, mkimage.verity_data= and mkimage.verity_hash=\n"
	"# on the kernel command line.\n"
	"case \"$1\" in prereqs) echo \"udev\"; exit 0 ;; esac\n"
	". /scripts/functions\n"
	"roothash= data= hash=\n"
	"for arg in $(cat /proc/cmdline); do\n"
	"\tcase \"$arg\" in\n"
	"\tmkimage.roothash=*) roothash=\"${arg#*=}\" ;;\n"
	"\tmkimage.verity_data=PARTUUID=*) data=\"${arg#*=PARTUUID=}\" ;;\n"
	"\tmkimage.verity_hash=PARTUUID=*) hash=\"${arg#*=PARTUUID=}\" ;;\n"
	"\tesac\n"
	"done\n"
	"[ -n \"$roothash\" ] || exit 0\n"
	"[ -b /dev/mapper/root ] && exit 0\n"
	"if [ -z \"$data\" ] || [ -z \"$hash\" ]; then\n"
	"\tpanic \"mkimage-verity: mkimage.roothash= needs mkimage.verity_data=PARTUUID= and \"\\\n"
	"\t\t\"mkimage.verity_hash=PARTUUID= on the kernel command line\"\n"
	"fi\n"
	"modprobe -q dm-verity\n"
	"modprobe -q squashfs\n"
	"wait_for_udev 10\n"
	"n=0\n"
	"while [ ! -b \"/dev/disk/by-partuuid/$data\" ] || [ ! -b \"/dev/disk/by-partuuid/$hash\" ]; do\n"
	"\tif [ \"$n\" -ge \"${ROOTDELAY:-180}\" ]; then\n"
	"\t\tpanic \"mkimage-verity: no partition PARTUUID=$data (root) or PARTUUID=$hash \"\\\n"
	"\t\t\t\"(its hash tree) after ${n}s\"\n"
	"\t\texit 1\n"
	"\tfi\n"
	"\tsleep 1\n"
	"\tn=$((n + 1))\n"
	"done\n"
	"if ! veritysetup open \"/dev/disk/by-partuuid/$data\" root \\\n"
	"\t\"/dev/disk/by-partuuid/$hash\" \"$roothash\"; then\n"
	"\tpanic \"mkimage-verity: the root PARTUUID=$data does not match root hash $roothash\"\n"
	"\texit 1\n"
	"fi\n"
	"echo \"mkimage-verity: root PARTUUID=$data verified by PARTUUID=$hash, root hash $roothash\"\n";

int bootcfg_prepare(struct staging *s, const struct recipe *r, int rootfd, int64_t sde)
{
	struct staging_writer w = { rootfd, &s->manifest, sde < 0 ? 0 : sde, 1 };
	int ret;

	if (bootcfg_verity_root(r) < 0)
		return 0;
	ret = staging_mkdirs(&w, "etc/initramfs-tools/hooks");
	if (!ret)
		ret = staging_mkdirs(&w, "etc/initramfs-tools/scripts/local-top");
	if (!ret)
		ret = staging_write_file(&w, HOOK, hook_text, strlen(hook_text), 0755);
	if (!ret)
		ret = staging_write_file(&w, SCRIPT, script_text, strlen(script_text), 0755);
	return ret ? -MKI_E_HOOK : 0;
}

/* `name` (".ko", ".ko.xz" ...) among the files below modules/VERSION/kernel/DIR. */
static int shipped(int rootfd, const char *kdir, const char *dir, const char *name)
{
	char *rel = xasprintf("%s/kernel/%s", kdir, dir);
	int fd = beneath_open_canonical(rootfd, rel, O_RDONLY | O_DIRECTORY);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	size_t n = strlen(name);
	int found = 0;

	while (d && !found && (de = readdir(d)))
		found = !strncmp(de->d_name, name, n) && !strncmp(de->d_name + n, ".ko", 3);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	free(rel);
	return found;
}

/* `path` ("kernel/fs/squashfs/squashfs.ko") listed in modules/VERSION/modules.builtin. */
static int builtin(int rootfd, const char *kdir, const char *path)
{
	char *rel = xasprintf("%s/modules.builtin", kdir), line[512];
	int fd = beneath_open_canonical(rootfd, rel, O_RDONLY | O_NONBLOCK);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, path, strlen(path)) && line[strlen(path)] == '\n';
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	free(rel);
	return found;
}

static const struct {
	const char *dir, *name;
} needed[] = {
	{ "drivers/md", "dm-verity" },
	{ "fs/squashfs", "squashfs" },
};

/* Kernel `version`'s modules below `base`: each of needed[], shipped or built in. */
static int check_kernel(int rootfd, const char *base, const char *version,
			const struct recipe *r)
{
	char *kdir = xasprintf("%s/%s", base, version), *path;
	int ret = 0;
	size_t i;

	for (i = 0; !ret && i < sizeof(needed) / sizeof(*needed); i++) {
		path = xasprintf("kernel/%s/%s.ko", needed[i].dir, needed[i].name);
		if (!shipped(rootfd, kdir, needed[i].dir, needed[i].name) &&
		    !builtin(rootfd, kdir, path)) {
			log_error("%s: the root partition is verified by dm-verity, and kernel '%s' "
				  "has no '%s' module (neither /%s/%s* nor in its modules.builtin): "
				  "install a kernel built with it", r->file, version, needed[i].name,
				  kdir, path);
			ret = -MKI_E_IMAGE;
		}
		free(path);
	}
	free(kdir);
	return ret;
}

/*
 * A board's device tree in each kernel's /usr/lib/linux-image-VERSION/: without it u-boot-update
 * falls back to the directory, and U-Boot hands the kernel another board's tree.
 */
static int check_board_fdt(int rootfd, const struct recipe *r)
{
	const struct board *b = board_get(r->board);
	int fd, ret = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (!b || !b->fdt || r->disk.bootloader != DISK_BOOT_EXTLINUX)
		return 0;
	fd = beneath_open_canonical(rootfd, "usr/lib", O_RDONLY | O_DIRECTORY);
	d = fd < 0 ? NULL : fdopendir(fd);
	while (d && !ret && (de = readdir(d))) {
		char *rel;

		if (strncmp(de->d_name, "linux-image-", 12) || !de->d_name[12])
			continue;
		rel = xasprintf("usr/lib/%s/%s", de->d_name, b->fdt);
		if (beneath_lstat(rootfd, rel, &st) || !S_ISREG(st.st_mode)) {
			log_error("%s: board '%s' boots with the device tree %s, which kernel '%s' does "
				  "not ship as a file (/%s): install a kernel built for the %s, such as "
				  "linux-image-armmp", r->file, b->name, b->fdt, de->d_name + 12, rel,
				  b->soc);
			ret = -MKI_E_IMAGE;
		}
		free(rel);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	return ret;
}

/* Each kernel's modules, in /usr/lib/modules (merged /usr) or else /lib/modules. */
int bootcfg_check_kernels(const struct staging *s, const struct recipe *r)
{
	static const char *const bases[] = { "usr/lib/modules", "lib/modules" };
	int rootfd, fd = -1, ret = 0;
	struct dirent *de;
	DIR *d = NULL;
	size_t i;

	rootfd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd >= 0 && r->disk.set)
		ret = check_board_fdt(rootfd, r);
	if (ret || bootcfg_verity_root(r) < 0) {
		if (rootfd >= 0)
			close(rootfd);
		return ret;
	}
	for (i = 0; rootfd >= 0 && fd < 0 && i < sizeof(bases) / sizeof(*bases); i++)
		fd = beneath_open_canonical(rootfd, bases[i], O_RDONLY | O_DIRECTORY);
	d = fd < 0 ? NULL : fdopendir(fd);
	while (d && !ret && (de = readdir(d)))
		if (de->d_name[0] != '.')
			ret = check_kernel(rootfd, bases[i - 1], de->d_name, r);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	if (rootfd >= 0)
		close(rootfd);
	return ret;
}
