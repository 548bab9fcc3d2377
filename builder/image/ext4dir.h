/* The ext4 writer's directories (on ext4inode.h): linear or htree, and the finishing pass. */
#ifndef MKI_EXT4DIR_H
#define MKI_EXT4DIR_H

#include "ext4fs.h"

/** Create directory node `i` (an htree when its entries need more than one block). */
int ext4dir_add(struct ext4fs *w, size_t i);
/** Node `i` names the lost+found mke2fs made: it must be a directory; take its metadata. */
int ext4dir_reuse_lost_found(struct ext4fs *w, size_t i);
/** Directory link counts and deterministic htree padding, once every entry is in. */
int ext4dir_finish(struct ext4fs *w);

#endif
