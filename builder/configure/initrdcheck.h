/*
 * An initramfs that cannot find the root disk is a board that stops at "ALERT! ... does not
 * exist": the build must fail, not say "ok". After configuration, each /boot/initrd.img-V of the
 * tree is read (every cpio segment: trixie's initramfs-tools puts compressed modules in an
 * uncompressed one ahead of the compressed main one) and held against what the tree asked for.
 */
#ifndef MKI_INITRDCHECK_H
#define MKI_INITRDCHECK_H

#include <stddef.h>

/** Bounds on one initramfs: entries, and bytes of names. */
#define INITRDCHECK_MAX_ENTRIES 1000000u
#define INITRDCHECK_MAX_NAME 4096u

/**
 * For each kernel V with a /boot/initrd.img-V in the tree `rootfd` (`root` names it in
 * messages): when initramfs-tools' configuration asks for MODULES=most (initramfs.conf, then
 * conf.d in order) and the kernel ships loadable block device drivers (kernel/drivers/block of
 * its module tree), the initramfs must hold at least one of them. 0, or -MKI_E_HOOK logged with
 * the file, the counts and what to do; an initramfs that cannot be read is -MKI_E_HOOK too.
 * Every access goes beneath the root.
 */
int initrdcheck_tree(int rootfd, const char *root);

/**
 * How many entries of the initramfs read from `fd` (its start) lie under `prefix` (a path
 * without leading "/" or "./"), into *hits; *entries gets the total. 0, or a negative errno /
 * -EBADMSG for a malformed or over-bound archive.
 */
int initrdcheck_count(int fd, const char *prefix, unsigned *entries, unsigned *hits);

#endif
