/* A kernel's initramfs built once while configuring, not twice (mkimage(7), CONFIGURATION). */
#ifndef MKI_INITRAMFS_H
#define MKI_INITRAMFS_H

#include <stddef.h>

/** The text every placeholder initrd starts with: none may be left once configuration ends. */
#define INITRAMFS_PLACEHOLDER "mkimage initramfs placeholder"

/** What initramfs_divert() changed, so that initramfs_restore() puts exactly that back. */
struct initramfs {
	int diverted;   /* usr/sbin/update-initramfs is our shim, the package's set aside */
	char *once;     /* the versions the shim left to the trigger, one a line (restore) */
};

/**
 * Set initramfs-tools' usr/sbin/update-initramfs of the tree `rootfd` aside and put in its place
 * a shim that passes every call through, except the kernel hook's `-c -k V` when initramfs-tools'
 * trigger is certain to build V again later in the same `dpkg --configure -a` (the conditions
 * are the shim's, checked when it runs): then it leaves a placeholder /boot/initrd.img-V.
 * Nothing is changed when the tree has no update-initramfs (a regular file). 0 or a negative
 * errno (not logged).
 */
int initramfs_divert(struct initramfs *d, int rootfd);
/**
 * Undo initramfs_divert() in the tree `root` (`rootfd`), on success and on failure alike: keep
 * the versions the shim recorded in d->once, remove the record, put the package's program back.
 * A shim a script replaced is -MKI_E_HOOK (logged): it cannot be told from the package's.
 */
int initramfs_restore(struct initramfs *d, int rootfd, const char *root);
/**
 * After a successful configuration and initramfs_restore(): say which initramfs were built once,
 * and require that no file of the tree's /boot (recursively) still holds a placeholder (an
 * initrd the trigger did not replace): else -MKI_E_HOOK, logged with the file and what to do.
 */
int initramfs_check(const struct initramfs *d, int rootfd, const char *root);
/** Free what `d` holds. */
void initramfs_release(struct initramfs *d);

#endif
