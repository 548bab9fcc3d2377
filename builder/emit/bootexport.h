/*
 * Boot files beside the image (image.export_boot): the image's kernel, initrd and device trees
 * copied to NAME.vmlinuz (NAME.vmlinux for an uncompressed one), NAME.initrd.img and NAME.dtbs/
 * next to NAME.ext4, for boards and
 * farms that flash or netboot them apart from the root filesystem. They are read from the final
 * tree (after the hooks) as the manifest names them, never through a link, written under
 * temporary names before the image, and renamed into place after it: a failed build leaves
 * the previous files as they were.
 */
#ifndef MKI_BOOTEXPORT_H
#define MKI_BOOTEXPORT_H

#include <pthread.h>
#include <stdint.h>

#include "lib/runlimits.h"
#include "lib/str.h"
#include "recipe/recipe.h"
#include "tree/staging.h"

struct bootexport {
	char *version;                  /* kernel release: /boot/vmlinu[xz]-VERSION */
	char *file;                     /* the tree's "boot/vmlinuz-VERSION" or "boot/vmlinux-..." */
	int uncompressed;               /* file is a vmlinux: exported as NAME.vmlinux */
	char *kernel, *initrd, *dtbs;   /* final paths; initrd, dtbs NULL when the image has none */
	char *other_kernel;             /* NAME.vmlinux for a vmlinuz and back: an earlier build's */
	char *tmp_kernel, *tmp_initrd, *tmp_dtbs; /* written, not yet renamed */
	char kernel_sha256[65], initrd_sha256[65];
	unsigned n_dtbs;                /* files under dtbs */
	int committed;
	const struct limits *lim;       /* borrowed */
	uint64_t apparent, data;        /* bytes exported: holes included, data only */
	struct strv written;            /* the files copied, fsync'ed together at the commit */
	pthread_t remover;              /* removing the replaced dtbs directory, when `removing` */
	int removing;
};

/**
 * Pick the kernel of `s` - the only /boot/vmlinuz-* or /boot/vmlinux-* (uncompressed, as
 * riscv64's) of the manifest, or r->image.kernel - and copy it, /boot/initrd.img-VERSION (when
 * present) and /usr/lib/linux-image-VERSION/ (device trees, when present) beside `output`
 * (images/NAME.ext4 -> images/NAME.vmlinuz or NAME.vmlinux, ...) under temporary names; files
 * get mode 0644 and `sde` as their time, and keep their holes. -MKI_E_IMAGE, logged, when the
 * image has no kernel, several and no image.kernel, not the one named, or the one named both
 * compressed and not; I/O errors likewise. -MKI_E_HOOK, logged, when the files together are larger than
 * `lim`'s boot-size (holes included: reading them costs time) or hold more data than its
 * staging-size (NULL `lim`: the defaults).
 */
int bootexport_prepare(struct bootexport *be, const struct staging *s, const struct recipe *r,
		       const char *output, int64_t sde, const struct limits *lim);

/**
 * Fsync what bootexport_prepare() wrote (it only started the writeback), rename it over the
 * final names, and remove a final initrd, dtbs
 * directory or kernel of the other name (NAME.vmlinuz, NAME.vmlinux) this image has not (left by
 * an earlier build). 0 or -MKI_E_IMAGE, logged.
 */
int bootexport_commit(struct bootexport *be);

/** Append `"boot": { ... },` to the report `b` (nothing when nothing was exported). */
void bootexport_json(const struct bootexport *be, struct buf *b);

/**
 * Wait for the replaced dtbs directory's removal, remove what was not committed and free the
 * contents of `be`.
 */
void bootexport_release(struct bootexport *be);

#endif
