/* Image: staging tree + manifest -> an image in the recipe's format (format.h), reproducibly. */
#ifndef MKI_IMAGE_H
#define MKI_IMAGE_H

#include <stdint.h>

#include "params.h"
#include "tree/staging.h"

/**
 * Write the image described by `p` from `s` (both borrowed) in the format p->im->format names.
 *
 * The manifest is the list of what goes in and wins over lstat() for type, owner, mode, mtime,
 * device numbers and xattrs; regular files take their bytes (and holes) from s->root. The
 * recipe's device table is added (replacing a manifest entry of the same path). Every
 * timestamp is the effective epoch (p->source_date_epoch, or the newest manifest mtime when it
 * is -1); file mtimes newer than it are clamped to it. The UUID and directory hash seed derive
 * from p->seed unless the recipe sets them. Same inputs give the same bytes.
 *
 * The output is written beside p->output under a temporary name and renamed over it when
 * complete; on any failure nothing is left behind (an existing output stays as it was).
 * Returns 0, -MKI_E_NOSPACE (logged with the size the tree needs) when a fixed size is too
 * small, -MKI_E_INTERRUPTED, or -MKI_E_IMAGE for everything else (inconsistent manifest,
 * unreadable tree, library or I/O failure; logged with the path concerned).
 */
int image_write(const struct staging *s, const struct image_params *p);

struct sparsehash;

/**
 * image_write(), and before the rename what `digests` asks (its want_whole, want_map: the
 * image's sha256 and block map, lib/sparsehash.h) from the temporary, in one pass over its data
 * while its writeback goes on: nobody reads the image again for them. `digests` may be NULL;
 * its map is the caller's to release.
 */
int image_write_digests(const struct staging *s, const struct image_params *p,
			struct sparsehash *digests);

/**
 * The UUID of the file system that starts `offset` bytes into `file` (an image this process
 * wrote), as blkid prints it: an ext4 superblock's UUID, a FAT volume id "ABCD-1234". 0, or -1
 * (out = "") for another or no file system (squashfs and tar have none).
 */
int image_fs_uuid(const char *file, uint64_t offset, char out[37]);

#endif
