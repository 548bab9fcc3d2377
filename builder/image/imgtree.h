/*
 * The image's view of a stage: every manifest entry plus the recipe's device table, sorted by
 * path, checked for consistency, with hard-link groups resolved and mtimes clamped to the
 * effective SOURCE_DATE_EPOCH. Shared by the ext4 writer (image.c) and the tar writer (tarout.c)
 * so that both apply the same rules.
 */
#ifndef MKI_IMGTREE_H
#define MKI_IMGTREE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/manifest.h"
#include "params.h"
#include "tree/staging.h"

struct imgtree_node {
	const struct manifest_entry *e; /* borrowed from the stage or from `extra` */
	int64_t mtime;                  /* e->mtime clamped to the effective epoch */
	uint32_t nlink;                 /* non-directories: 1 + hard links naming this entry */
	size_t link;                    /* MF_HARDLINK: index of the entry it shares */
	size_t first;                   /* index of the sorted-first name of this inode (tar) */
};

struct imgtree {
	struct imgtree_node *v; /* v[0] is the root "" */
	size_t n;
	struct manifest extra;  /* device-table entries and a default root: owned */
	int64_t sde;            /* effective epoch: every timestamp that is not a file's mtime */
	int root_fd;            /* O_PATH directory fd of the staging tree, or -1 */
};

/**
 * Build the view of `s` for `p`. The effective epoch is p->source_date_epoch, or when that is
 * -1 (unset) the newest mtime in the manifest (0 for an empty one). Logs and returns
 * -MKI_E_IMAGE on an inconsistent manifest (missing parent, parent not a directory, hard link
 * to a missing entry or to a directory), or a negative errno when the tree cannot be opened.
 */
int imgtree_build(struct imgtree *t, const struct staging *s, const struct image_params *p);
/*
 * A part of the tree, for a disk's partitions: `subtree` ("boot/efi"; NULL or "" the whole
 * tree) becomes the root, its files opened from where they are in the staging tree; every
 * directory in `exclude` (subtrees other partitions hold, "boot/efi") is kept as an empty
 * directory - the tree's own, or a root-owned 0755 one when the tree has none - and what is
 * below it left out. The device table goes into the whole tree's view only.
 */
struct imgtree_scope {
	const char *subtree;
	const char *const *exclude;
	size_t n_exclude;
};

/**
 * imgtree_build for a part of the tree (see struct imgtree_scope; NULL: the whole tree, exactly
 * as imgtree_build). A subtree the tree lacks is an empty directory. Also -MKI_E_IMAGE (logged)
 * for a hard link across a view's edge and a subtree or mount point that is not a directory.
 */
int imgtree_build_scoped(struct imgtree *t, const struct staging *s, const struct image_params *p,
			 const struct imgtree_scope *sc);
void imgtree_release(struct imgtree *t);
/** Index of the parent directory of node `i` (i > 0). */
size_t imgtree_parent(const struct imgtree *t, size_t i);
/** The last path component of node `i` (borrowed). */
const char *imgtree_name(const struct imgtree *t, size_t i);
/**
 * Open the data of regular entry `i` from the tree (no symlinks followed) and check it is a
 * regular file. Returns an fd, or a logged negative code.
 */
int imgtree_open(const struct imgtree *t, size_t i);

#endif
