/*
 * The ext4 writer's shared state and its bottom layer: sizing the filesystem for the tree,
 * creating it empty with mke2fs in a sink, opening it with libext2fs, closing it. The other ext4
 * modules build on this one and never the other way: ext4inode.h (inodes), ext4dir.h and
 * ext4file.h (directories, regular files), ext4w.h (the format: the walk over the tree). Only
 * these modules include libext2fs. Errors are logged where they happen, with the path
 * concerned, and returned as -MKI_E_IMAGE, -MKI_E_NOSPACE or -MKI_E_INTERRUPTED.
 */
#ifndef MKI_EXT4FS_H
#define MKI_EXT4FS_H

#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2fs.h>
#include <stdint.h>

#include "params.h"
#include "imgtree.h"
#include "lib/log.h"
#include "sink.h"

#define BLOCK_SIZE 4096u
#define INODE_SIZE 256u
#define COPY_BLOCKS 256u       /* 1 MiB per write */
#define MIN_BLOCKS 4096u       /* 16 MiB: room for a 4 MiB journal and the metadata */
#define MAX_SIZE_TRIES 6
#define WRITEBACK_BYTES (32u << 20)

#define EXT4FS_FEATURES \
	"none,has_journal,ext_attr,resize_inode,dir_index,filetype,"\
	"extent,64bit,flex_bg,sparse_super,large_file,huge_file,dir_nlink,extra_isize,metadata_csum"

struct ext4fs {
	const struct imgtree *t;
	const struct image_params *p;
	struct sink *k;        /* where the filesystem goes (borrowed) */
	char *dev;             /* the sink's path, as mke2fs and libext2fs open it */
	ext2_filsys fs;
	ext2_ino_t *ino;       /* per node */
	uint64_t *dir_bytes;   /* per directory node: bytes of directory entries */
	uint32_t *subdirs;     /* per directory node: subdirectories */
	uint64_t need_blocks;  /* data, directories, symlinks, xattr blocks */
	uint64_t need_inodes;
	uint64_t blocks;       /* filesystem size in blocks */
	uint8_t *buf;          /* COPY_BLOCKS blocks */
	int kernel_copy;       /* copy_file_range() works between source and sink */
	uint64_t unflushed;    /* bytes copied since writeback was last started */
	struct progress progress;
};

/** Set up `w` for tree `t` and params `p` (borrowed); `k` may be NULL when only sizing. */
void ext4fs_init(struct ext4fs *w, const struct imgtree *t, const struct image_params *p,
		 struct sink *k);
/** Free what ext4fs_init and the others allocated (closing w->fs without writing). */
void ext4fs_release(struct ext4fs *w);
/** ceil(a / b). */
uint64_t ext4fs_div_up(uint64_t a, uint64_t b);
/** Whether a directory with `bytes` of entries gets an htree (more than one block). */
int ext4fs_wants_htree(uint64_t bytes);
/** Refuse a recipe UUID or hash seed that is not a UUID. */
int ext4fs_check_ids(const struct recipe_image *im);
/** Fill w->need_blocks, w->need_inodes, w->dir_bytes and w->subdirs from the tree. */
int ext4fs_estimate(struct ext4fs *w);
/** The first size tried, in blocks: image.size, or for "auto" a guess from the estimate. */
uint64_t ext4fs_first_blocks(const struct ext4fs *w);
/** Log a libext2fs failure (`what` on `path`): -MKI_E_IMAGE, or -MKI_E_NOSPACE when full. */
int ext4fs_lib_fail(const char *what, const char *path, errcode_t err);
/** Create the filesystem with mke2fs in w->k, sized (or checked) for the tree; open w->fs. */
int ext4fs_create(struct ext4fs *w);
/** Stamp the superblock's times with the epoch and write and close w->fs. */
int ext4fs_finish(struct ext4fs *w);
/** Close w->fs without writing (after a failure). */
void ext4fs_close(struct ext4fs *w);

#endif
