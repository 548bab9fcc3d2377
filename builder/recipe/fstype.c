#include "fstype.h"

#include <errno.h>
#include <string.h>

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
	return &fstypes[(size_t)f < sizeof(fstypes) / sizeof(*fstypes) ? f : PART_FS_NONE];
}

int fstype_find(const char *name, enum partition_format *f)
{
	size_t i;

	for (i = 0; i < sizeof(fstypes) / sizeof(*fstypes); i++)
		if (!strcmp(fstypes[i].name, name)) {
			*f = (enum partition_format)i;
			return 0;
		}
	return -ENOENT;
}

int fstype_pass(enum partition_format f, int root)
{
	return !fstype_get(f)->fsck ? 0 : root ? 1 : 2;
}
