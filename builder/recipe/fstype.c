#include "fstype.h"

#include <errno.h>
#include <string.h>

#define N_FSTYPES (sizeof(fstypes) / sizeof(*fstypes))

/* Indexed by enum partition_format. */
static const struct fstype fstypes[] = {
	[PART_FS_NONE] = { .name = "none" },
	[PART_FS_EXT4] = { .name = "ext4", .tree = 1, .posix = 1, .label_max = 16,
			   .fstab_root = "errors=remount-ro", .fstab = "defaults", .fsck = 1 },
	/* vfat has no owners: umask=0077 keeps the ESP root's, as Debian's installer */
	[PART_FS_VFAT] = { .name = "vfat", .tree = 1, .label_max = 11,
			   .label_bad = "\"*+,./:;<=>?[\\]|", .fstab = "umask=0077", .fsck = 1 },
	/* read-only, no label, no fsck */
	[PART_FS_SQUASHFS] = { .name = "squashfs", .tree = 1, .posix = 1, .read_only = 1,
			       .compressed = 1, .fstab_root = "ro", .fstab = "ro" },
};

const struct fstype *fstype_get(enum partition_format f)
{
	return &fstypes[(size_t)f < N_FSTYPES ? f : PART_FS_NONE];
}

int fstype_find(const char *name, enum partition_format *f)
{
	size_t i;

	for (i = 0; i < N_FSTYPES; i++)
		if (!strcmp(fstypes[i].name, name)) {
			*f = (enum partition_format)i;
			return 0;
		}
	return -ENOENT;
}

void fstype_list(struct buf *out, int none)
{
	size_t i, n = none ? 1 : 0, k = 0;

	for (i = 0; i < N_FSTYPES; i++)
		n += fstypes[i].tree;
	for (i = 0; i < N_FSTYPES; i++)
		if (fstypes[i].tree)
			buf_addf(out, "%s\"%s\"", !k++ ? "" : k == n ? " or " : ", ",
				 fstypes[i].name);
	if (none)
		buf_addf(out, "%s\"%s\"", k ? " or " : "", fstypes[PART_FS_NONE].name);
}

int fstype_pass(enum partition_format f, int root)
{
	return !fstype_get(f)->fsck ? 0 : root ? 1 : 2;
}
