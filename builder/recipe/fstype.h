/*
 * The filesystems a partition can hold, one row each (fstype.c): what the recipe's checks, the
 * partition writer and its report (image/disk.c, whose writer of each is the row of the same name
 * in image/format.c), /etc/fstab (configure/bootcfg_text.c) and dm-verity know of it. As systemd's
 * make_filesystem(fstype, ...): one place says what a filesystem is; a new one is a row here and
 * a writer there.
 */
#ifndef MKI_FSTYPE_H
#define MKI_FSTYPE_H

#include "lib/buf.h"

/* A partition's filesystem (recipe.h: struct recipe_partition's `format`): a row of fstypes[]. */
enum partition_format { PART_FS_NONE, PART_FS_EXT4, PART_FS_VFAT, PART_FS_SQUASHFS };

struct fstype {
	const char *name;        /* format = "NAME"; the report's "format"; root_image's extension */
	int tree;                /* holds a tree; 0: raw bytes ("none") */
	int posix;               /* holds owners, modes and symbolic links: can be the root */
	int read_only;           /* never written once built: dm-verity covers the bytes it takes */
	int compressed;          /* its blocks are compressed: `compression` applies */
	unsigned label_max;      /* bytes its label holds; 0: it has no label */
	const char *label_bad;   /* what a label cannot hold besides printable ASCII; NULL: any byte */
	const char *fstab_root;  /* /etc/fstab's options as the root (tree and posix only) */
	const char *fstab;       /* /etc/fstab's options mounted below the root */
	int fsck;                /* fsck checks it at boot: fstab's pass 1 as the root, else 2 */
};

/** The row of filesystem `f`: never NULL. */
const struct fstype *fstype_get(enum partition_format f);
/** The filesystem called `name` into `*f`: 0, or -ENOENT when there is none. */
int fstype_find(const char *name, enum partition_format *f);
/**
 * The names as messages list them, appended to `out`: the filesystems holding a tree in the
 * table's order, then "none" when `none` ("\"ext4\", \"vfat\", \"squashfs\" or \"none\"").
 */
void fstype_list(struct buf *out, int none);
/** /etc/fstab's sixth field for filesystem `f`, as the root (`root`) or below it. */
int fstype_pass(enum partition_format f, int root);

#endif
