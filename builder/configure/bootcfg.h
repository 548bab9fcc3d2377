/*
 * The boot configuration of a disk (recipe `disk.bootloader`), written into the staged tree after
 * the hooks and before the image, from the plan's own packages, never the host's:
 *
 * - extlinux: /boot/extlinux/extlinux.conf byte for byte as Debian 12's u-boot-menu
 *   (u-boot-update) writes it on the device, and its /etc/default/u-boot set so that the
 *   package's kernel hook writes the same file after a kernel upgrade;
 * - systemd-boot: systemd-boot-efi's loader on the ESP (and the fallback EFI/BOOT/BOOT*.EFI),
 *   loader/loader.conf and a Boot Loader Specification type #1 entry with the kernel and initrd
 *   copied where kernel-install puts them, with /etc/kernel/cmdline and /etc/kernel/entry-token
 *   so that kernel-install on the device writes matching entries.
 *
 * The root is named by root=PARTUUID= of the root partition (recipe/partuuid.h), the same id the
 * disk writer puts in the table. The configured tree in the layer cache never holds any of it:
 * the layer stays independent of the disk.
 */
#ifndef MKI_BOOTCFG_H
#define MKI_BOOTCFG_H

#include <stddef.h>
#include <stdint.h>

#include "debian/plan.h"
#include "lib/buf.h"
#include "lib/settings.h"
#include "recipe/recipe.h"
#include "tree/staging.h"

/**
 * Right after resolving, before anything is downloaded: the packages the recipe's boot loader
 * needs are in `p` (extlinux: u-boot-menu; systemd-boot: systemd-boot-efi; both: a linux-image-*
 * package). 0, or -MKI_E_IMAGE (exit 8) logged with what to add to packages.install.
 */
int bootcfg_check_plan(const struct plan *p, const struct recipe *r);

/**
 * With bootloader = "extlinux" and no partition marked legacy_boot, mark the one U-Boot's distro
 * boot reads extlinux.conf from: the partition holding /boot, else the root. Called once after
 * the recipe is loaded, before the disk's layout is computed.
 */
void bootcfg_mark_legacy_boot(struct recipe *r);

/**
 * Write the boot configuration of r->disk.bootloader into the tree `rootfd` (nothing without a
 * disk or a boot loader): every write resolves beneath the root and goes through no symlink
 * (a directory a package made a link is refused), files are root's, 0644 (directories 0755),
 * with SOURCE_DATE_EPOCH (st) as their time, and recorded in s->manifest (the caller reconciles
 * it with the tree afterwards).
 * 0, or -MKI_E_IMAGE (exit 8) logged with the path and what to do.
 */
int bootcfg_write(struct staging *s, const struct recipe *r, int rootfd, const struct settings *st);

/**
 * The partition holding the dm-verity hash tree of the root partition, or -1 when the root is
 * not verified (recipe/recipe.h: contents = "verity:NAME").
 */
int bootcfg_verity_root(const struct recipe *r);

/**
 * Before the maintainer scripts run (the kernel's postinst builds the initramfs): with a
 * verified root, the initramfs-tools hook and local-top script that open it (bootcfg_verity.c),
 * 0755, recorded in s->manifest. 0 or -MKI_E_HOOK (logged).
 */
int bootcfg_prepare(struct staging *s, const struct recipe *r, int rootfd, int64_t sde);

/**
 * Right after unpacking, before the long configure step: a board's device tree (board.h) in every
 * kernel's /usr/lib/linux-image-VERSION/ when extlinux.conf names it; with a verified root,
 * every kernel in /usr/lib/modules (/lib/modules) has dm-verity and squashfs, as modules or
 * built in. 0 or -MKI_E_IMAGE (exit 8) logged with the kernel and what it lacks.
 */
int bootcfg_check_kernels(const struct staging *s, const struct recipe *r);

/**
 * With a verified root, once the disk writer knows its root hash: the boot entry (extlinux.conf
 * or the BLS entry on the ESP) written again with mkimage.roothash=`roothash`, in the tree and
 * in s->manifest, before the partition holding it is written. Nothing on the root partition is
 * touched: it is written and hashed already. Returns as bootcfg_write.
 */
int bootcfg_write_roothash(struct staging *s, const struct recipe *r, int rootfd,
			   const struct settings *st, const char *roothash);

/**
 * Where a verified root's boot entry lives in the tree, which the disk writer writes after the
 * root (disk.h): "boot/extlinux", or the ESP's directory ("boot/efi"); NULL without a verified root
 * or a boot loader.
 */
const char *bootcfg_entry_path(const struct recipe *r);

/* The texts, apart from the tree (unit-tested byte for byte). */

/**
 * What root= names: "PARTUUID=..." of the root partition (contents = "root"). A root verified by
 * dm-verity is "/dev/mapper/root rootfstype=squashfs mkimage.verity_data=PARTUUID=...
 * mkimage.verity_hash=PARTUUID=..." with " mkimage.roothash=HEX" when `roothash` is not NULL
 * (the initramfs script bootcfg_prepare writes reads them).
 */
void bootcfg_root(const struct recipe *r, int64_t sde, const char *roothash, struct buf *out);
/** After root=: "console=C CMDLINE" (either may be absent), as the recipe gives them. */
void bootcfg_parameters(const struct recipe *r, struct buf *out);

/**
 * /etc/fstab of a disk: the root by PARTUUID at /, then each partition holding a directory of the
 * tree at its mount point (parents first), by PARTUUID, with its filesystem type (vfat:
 * umask=0077).
 */
void bootcfg_fstab(const struct recipe *r, int64_t sde, struct buf *out);

/** One kernel as u-boot-update lists it: /boot/vmlinu[xz]-VERSION and what goes with it. */
struct bootcfg_kernel {
	const char *image;   /* "vmlinuz-6.1.0-13-armmp", riscv64's "vmlinux-6.12.57+deb13-riscv64" */
	const char *version; /* "6.1.0-13-armmp" */
	const char *initrd;  /* "initrd.img-6.1.0-13-armmp", "initrd.img" or NULL */
	const char *fdt;     /* "fdtdir /usr/lib/linux-image-V/", "fdt /dtb-V" or NULL */
};

struct bootcfg_extlinux {
	const char *boot_dir;  /* "/boot": /boot on the root; "": /boot is its own partition */
	const char *menu_label;/* U_BOOT_MENU_LABEL: PRETTY_NAME, else "Debian GNU/Linux kernel" */
	const char *def;       /* U_BOOT_DEFAULT ("l0") */
	const char *root;      /* U_BOOT_ROOT ("root=PARTUUID=...") */
	const char *params;    /* U_BOOT_PARAMETERS; "" becomes u-boot-update's "ro quiet" */
	const char *overlays;  /* " /boot/dtbo/a.dtbo ..." (its leading space kept) or NULL */
	const struct bootcfg_kernel *kernels; /* newest first */
	size_t n_kernels;
};

/** extlinux.conf exactly as u-boot-menu 4.2 writes it from the same settings and kernels. */
void bootcfg_extlinux_conf(const struct bootcfg_extlinux *x, struct buf *out);

/**
 * /etc/default/u-boot: `old` (`len` bytes of the package's, NULL for none) rewritten whole by
 * envfile_set() (envfile.h): each KEY's whole assignment (continuation lines and all), else its
 * "#KEY=..." example, becomes KEY="VALUE", shell-quoted; later assignments of KEY go; keys not
 * found are appended; every other byte is kept. `kv` holds KEY, VALUE pairs and ends with NULL.
 * 0, or -MKI_E_IMAGE logged with the line sh would not read as mkimage means it.
 */
int bootcfg_default_u_boot(const char *old, size_t len, const char *const *kv, struct buf *out);

/** linux-version's order of kernel releases (linux-base): <0, 0 or >0 as strcmp. */
int bootcfg_version_cmp(const char *a, const char *b);

/** loader/loader.conf: the newest entry of `token` by default, no menu unless a key is held. */
void bootcfg_loader_conf(const char *token, struct buf *out);

/** What a BLS type #1 entry holds, as kernel-install's 90-loaderentry.install writes it. */
struct bootcfg_entry {
	const char *title;    /* PRETTY_NAME, else "Linux VERSION" */
	const char *version;
	const char *sort_key; /* IMAGE_ID, else ID; NULL or "": no sort-key line */
	const char *options;  /* the kernel command line, whitespace squeezed */
	const char *token;    /* the entry token: the entry's directory on the ESP */
	const char *initrd;   /* its file name in that directory, or NULL */
	const char *dir;      /* that directory under the token: NULL for the version (A/B: "A") */
};

/** loader/entries/TOKEN-VERSION.conf. */
void bootcfg_bls_entry(const struct bootcfg_entry *e, struct buf *out);

/**
 * A board firmware's kernel command line (board.h, struct board_fat: raspi-firmware's
 * cmdline.txt) as its hooks write it with CONSOLES=`console` (NULL: none) and ROOTPART=`root`:
 * `old`, as they wrote it during the build, from its root= word on (the rest of the line kept,
 * the word's value replaced), after " console=CONSOLE". -1 when `old` has no root= word.
 */
int bootcfg_fat_cmdline(const char *old, const char *root, const char *console, struct buf *out);
/** The firmware package's settings file `file` (NULL `old`: none) with `kv` set (envfile_set). */
int bootcfg_fat_defaults(const char *old, size_t len, const char *file, const char *const *kv,
			 struct buf *out);

/** Runs of blanks and newlines of `s` as one space, none at the end (tr -s "$IFS" then ${%% }). */
void bootcfg_squeeze(const char *s, struct buf *out);

/*
 * The A/B boot selection of an update-ready disk (recipe_update_boots(); bootcfg_ab.c). The
 * texts are exported for the unit tests; bootcfg_write() writes them.
 */
/** The root of each slot's boot entry: PARTUUID=${mkimage_slot_partuuid}, set by boot.scr. */
void bootcfg_ab_root(struct buf *out);
/** rauc.slot=${mkimage_slot}, and panic=10 unless the recipe's cmdline sets panic=. */
void bootcfg_ab_parameters(const struct recipe *r, struct buf *params);
/** boot.scr's text and its U-Boot legacy script image (`mkimage -T script`'s bytes). */
void bootcfg_ab_script(const struct recipe *r, int64_t sde, struct buf *out);
void bootcfg_ab_script_image(const char *text, const char *arch, int64_t sde, struct buf *out);
/** rauc.env as written first: slot A first with update.boot_attempts, B (empty) with none. */
void bootcfg_ab_state(const struct recipe *r, struct buf *out);
/** RAUC's /etc/rauc/system.conf: the slots by PARTUUID, bootnames A and B. */
void bootcfg_ab_system_conf(const struct recipe *r, int64_t sde, struct buf *out);
/** RAUC's custom backend (/usr/lib/mkimage/rauc-ab-boot). */
void bootcfg_ab_backend(const struct recipe *r, struct buf *out);
/**
 * Write /boot/select/{boot.scr,rauc.env}, /etc/rauc/{system.conf,keyring.pem}, the backend,
 * the mark-good unit, and `os_release_text` with IMAGE_ID and IMAGE_VERSION at
 * `os_release_path`. 0 or -MKI_E_IMAGE (logged).
 */
int bootcfg_ab_write(struct staging_writer *w, const struct recipe *r, int64_t sde,
		     const struct buf *os_release_text, const char *os_release_path);
/** `b` at `rel` in the tree (its directories made), root's, `mode`. 0 or -MKI_E_IMAGE. */
int bootcfg_ab_put(struct staging_writer *w, const char *rel, const struct buf *b, uint32_t mode);

/*
 * The A/B selection with systemd-boot (bootcfg_ab_sdboot.c): an entry per slot on the ESP,
 * systemd-boot's boot counting, RAUC's custom backend over those entries.
 */
/** Slot `k`'s (0: A, 1: B) kernel command line: root=PARTUUID= of it, rauc.slot=, panic=10. */
void bootcfg_ab_sdboot_options(const struct recipe *r, int64_t sde, size_t k, struct buf *out);
/** The backend for the ESP mounted at /`esp` and the entry token `token`. */
void bootcfg_ab_sdboot_backend(const struct recipe *r, int64_t sde, const char *esp,
			       const char *token, struct buf *out);
/** Write the backend and the mark-good unit's drop-in. 0 or -MKI_E_IMAGE (logged). */
int bootcfg_ab_sdboot_write(struct staging_writer *w, const struct recipe *r, int64_t sde,
			    const char *esp, const char *token);

/*
 * The same for a verified root (r->update.verity; bootcfg_abv.c): each slot is its boot
 * partition, its data (the squashfs) and its hash tree.
 */
/** The entry's root: /dev/mapper/root, the data and hash partitions from boot.scr, the hash. */
void bootcfg_abv_root(const struct recipe *r, const char *roothash, struct buf *out);
/** boot.scr's line naming slot partition `slot`'s hash partition. */
void bootcfg_abv_script_slot(const struct recipe *r, int64_t sde, size_t slot, struct buf *out);
/** 1 when partition `idx` is the image's slot boot partition, mounted as the booted slot's. */
int bootcfg_abv_is_slot_boot(const struct recipe *r, size_t idx);
/** fstab's device for /boot: the udev link to the booted slot's boot partition. */
void bootcfg_abv_fstab_device(struct buf *out);
/** system.conf's slot `i` (rootfs.I) at partition `slot`, and its children verity.I, boot.I. */
void bootcfg_abv_system_slot(const struct recipe *r, int64_t sde, size_t i, size_t slot,
			     struct buf *out);
/** The udev rule linking /dev/mkimage/boot to the booted slot's boot partition. */
void bootcfg_abv_udev_rule(const struct recipe *r, int64_t sde, struct buf *out);

#endif
