/*
 * The ext4 writer's shared state and its internal contract (image.c orchestrates; ext4fs.c sizes
 * and creates the empty filesystem; ext4inode.c writes inodes, symlinks, devices and xattrs in
 * path order; ext4dir.c directories and their htrees; ext4file.c regular files' extents and
 * data). Only these modules include libext2fs. Errors are logged where they happen, with the
 * path concerned, and returned as -MKI_E_IMAGE, -MKI_E_NOSPACE or -MKI_E_INTERRUPTED.
 */
#ifndef MKI_EXT4W_H
#define MKI_EXT4W_H

#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2fs.h>
#include <stdint.h>

#include "image.h"
#include "imgtree.h"
#include "lib/log.h"

#define BLOCK_SIZE 4096u
#define INODE_SIZE 256u
#define COPY_BLOCKS 256u       /* 1 MiB per write */
#define MIN_BLOCKS 4096u       /* 16 MiB: room for a 4 MiB journal and the metadata */
#define MAX_SIZE_TRIES 6
#define WRITEBACK_BYTES (32u << 20)

#define EXT4W_FEATURES \
	"none,has_journal,ext_attr,resize_inode,dir_index,filetype,"\
	"extent,64bit,flex_bg,sparse_super,large_file,huge_file,dir_nlink,extra_isize,metadata_csum"

struct ext4w {
	const struct imgtree *t;
	const struct image_params *p;
	ext2_filsys fs;
	char *tmp;             /* temporary image beside the output */
	ext2_ino_t *ino;       /* per node */
	uint64_t *dir_bytes;   /* per directory node: bytes of directory entries */
	uint32_t *subdirs;     /* per directory node: subdirectories */
	uint64_t need_blocks;  /* data, directories, symlinks, xattr blocks */
	uint64_t need_inodes;
	uint64_t blocks;       /* filesystem size in blocks */
	uint8_t *buf;          /* COPY_BLOCKS blocks */
	int img_fd;            /* the temporary image, for file data (libext2fs never caches it) */
	int kernel_copy;       /* copy_file_range() works between source and image */
	uint64_t unflushed;    /* bytes copied since writeback was last started */
	struct progress progress;
};

/* --- ext4fs.c: sizing and the empty filesystem --- */

/** ceil(a / b). */
uint64_t ext4w_div_up(uint64_t a, uint64_t b);
/** Whether a directory with `bytes` of entries gets an htree (more than one block). */
int ext4w_wants_htree(uint64_t bytes);
/** Fill w->need_blocks, w->need_inodes, w->dir_bytes and w->subdirs from the tree. */
int ext4w_estimate(struct ext4w *w);
/** Refuse a recipe UUID or hash seed that is not a UUID. */
int ext4w_check_ids(const struct recipe_image *im);
/** Log a libext2fs failure (`what` on `path`): -MKI_E_IMAGE. */
int ext4w_lib_fail(const char *what, const char *path, errcode_t err);
/** Create w->tmp with mke2fs, sized (or checked) for the tree, and open it as w->fs. */
int ext4w_create_fs(struct ext4w *w);
/** Close w->fs without writing (after a failure). */
void ext4w_close_fs(struct ext4w *w);

/* --- ext4inode.c: inodes and the tree --- */

/** Owner, mode and times of node `nd` into `in` (`sde`: the effective epoch). */
void ext4w_apply_meta(struct ext2_inode_large *in, const struct imgtree_node *nd, int64_t sde);
int ext4w_read_inode(struct ext4w *w, ext2_ino_t ino, struct ext2_inode_large *in,
		     const char *path);
int ext4w_write_inode(struct ext4w *w, ext2_ino_t ino, struct ext2_inode_large *in,
		      const char *path);
/** Rewrite node `i`'s inode metadata from the manifest. */
int ext4w_update_meta(struct ext4w *w, size_t i);
/** Link `ino` as `name` (of `type`, EXT2_FT_*) in directory `dir`; `path` for messages. */
int ext4w_link_name(struct ext4w *w, ext2_ino_t dir, const char *name, ext2_ino_t ino,
		    int type, const char *path);
/** Allocate node `i`'s inode (w->ino[i]); `mark` it in use in the bitmap. */
int ext4w_new_inode(struct ext4w *w, size_t i, int mark);
/** Whether node `i` is the root's lost+found, which mke2fs created. */
int ext4w_is_lost_found(const struct ext4w *w, size_t i);
/** Write every node of the tree in path order. */
int ext4w_populate(struct ext4w *w);

/* --- ext4dir.c: directories --- */

/** Create directory node `i` (an htree when its entries need more than one block). */
int ext4w_add_dir(struct ext4w *w, size_t i);
/** Directory link counts, deterministic htree padding, superblock stamps; close w->fs. */
int ext4w_finish(struct ext4w *w);

/* --- ext4file.c: regular files --- */

/** Create regular file node `i`: its extents, holes kept, and its bytes from the staging tree. */
int ext4w_add_file(struct ext4w *w, size_t i);

#endif
