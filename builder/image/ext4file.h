/* The ext4 writer's regular files (on ext4inode.h): extents per data range, bytes copied in. */
#ifndef MKI_EXT4FILE_H
#define MKI_EXT4FILE_H

#include "ext4fs.h"

/** Create regular file node `i`: its extents, holes kept, and its bytes from the staging tree. */
int ext4file_add(struct ext4fs *w, size_t i);

#endif
