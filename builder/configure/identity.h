/*
 * The image's identity files, which no package ships: /etc/fstab (the root by its label),
 * /etc/hostname with the matching /etc/hosts line, and /etc/machine-id left for the device to
 * fill on its first boot (machine-id(5): never an id every board of a build would share).
 * Written into the tree after configuration through beneath.h, owned by root, mode 0644, with
 * the build's epoch as their time.
 */
#ifndef MKI_IDENTITY_H
#define MKI_IDENTITY_H

#include <stdint.h>

#include "lib/str.h"
#include "recipe/recipe.h"

/**
 * Before configuration: where the tree has no /etc/fstab, debootstrap's placeholder ("#
 * UNCONFIGURED FSTAB FOR BASE SYSTEM"), as every Debian bootstrapper leaves it for maintainer
 * scripts that read the file (u-boot-menu's kernel hook fails without one). identity_write
 * removes it again. 0, or -MKI_E_HOOK (logged).
 */
int identity_prepare(int rootfd, int64_t sde);

/**
 * After configuration, before the overlays and hooks (which may replace what is written here):
 * /etc/fstab when r->image.fstab and the tree has none (a package's is kept; a disk's names its
 * partitions by PARTUUID, bootcfg_fstab()); /etc/hostname and
 * /etc/hosts when r->hostname is set. 0, or -MKI_E_HOOK (logged with the path).
 */
int identity_write(const struct recipe *r, int rootfd, int64_t sde);

/**
 * After the hooks: /etc/machine-id becomes "uninitialized" (or empty, r->machine_id) whatever a
 * package or hook put there, and a regular /var/lib/dbus/machine-id (dbus-uuidgen's copy)
 * becomes the link to it that Debian's dbus makes. 0, or -MKI_E_HOOK (logged).
 */
int identity_finish(const struct recipe *r, int rootfd, int64_t sde);

/** The fstab text for a root filesystem labelled `label` (fstab escapes applied) into `out`. */
void identity_fstab(const char *label, struct buf *out);

/**
 * /etc/hosts naming `name` as Debian's installer writes it: `old` (NULL: none yet) with every
 * 127.0.1.1 line replaced by "127.0.1.1\tNAME" after the 127.0.0.1 line (at the top if none).
 */
void identity_hosts(const char *old, const char *name, struct buf *out);

#endif
