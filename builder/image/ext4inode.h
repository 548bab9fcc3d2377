/*
 * The ext4 writer's inodes (on ext4fs.h, below the directory and file writers): reading and
 * writing them, their metadata from the manifest, links, and the nodes that are an inode
 * alone - symlinks, device nodes, FIFOs, sockets, hard links - with their xattrs.
 */
#ifndef MKI_EXT4INODE_H
#define MKI_EXT4INODE_H

#include "ext4fs.h"

/** A full-size inode buffer for ext2fs_read/write_inode_full. */
union ext4inode_buf {
	struct ext2_inode_large in;
	uint8_t raw[INODE_SIZE];
};

/** Owner, mode and times of node `nd` into `in` (`sde`: the effective epoch). */
void ext4inode_apply_meta(struct ext2_inode_large *in, const struct imgtree_node *nd,
			  int64_t sde);
int ext4inode_read(struct ext4fs *w, ext2_ino_t ino, struct ext2_inode_large *in,
		   const char *path);
int ext4inode_write(struct ext4fs *w, ext2_ino_t ino, struct ext2_inode_large *in,
		    const char *path);
/** Rewrite node `i`'s inode metadata from the manifest. */
int ext4inode_update_meta(struct ext4fs *w, size_t i);
/** Link `ino` as `name` (of `type`, EXT2_FT_*) in directory `dir`; `path` for messages. */
int ext4inode_link(struct ext4fs *w, ext2_ino_t dir, const char *name, ext2_ino_t ino,
		   int type, const char *path);
/** Allocate node `i`'s inode (w->ino[i]); `mark` it in use in the bitmap. */
int ext4inode_new(struct ext4fs *w, size_t i, int mark);
/** Whether node `i` is the root's lost+found, which mke2fs created. */
int ext4inode_is_lost_found(const struct ext4fs *w, size_t i);
/** mke2fs's own inodes (root, resize, journal, lost+found) get the epoch's times. */
int ext4inode_stamp_reserved(struct ext4fs *w);
/** Create symlink node `i`. */
int ext4inode_add_symlink(struct ext4fs *w, size_t i);
/** Create device, FIFO or socket node `i`. */
int ext4inode_add_special(struct ext4fs *w, size_t i);
/** Link hard-link node `i` to the inode of the node it names (created before). */
int ext4inode_add_hardlink(struct ext4fs *w, size_t i);
/** Set node `i`'s extended attributes from the manifest. */
int ext4inode_set_xattrs(struct ext4fs *w, size_t i);

#endif
