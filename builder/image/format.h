/*
 * Image formats behind one interface: each declares its name, what its image can carry, its
 * size estimate for a staged tree, and how it writes one to a sink (sink.h): a whole output
 * file or a region of a larger one. Callers name a format only as a string (image.format), or
 * as a partition's filesystem (recipe/fstype.h): the row of the same name writes it, whether
 * it is the image or a partition of a disk (disk.c).
 */
#ifndef MKI_FORMAT_H
#define MKI_FORMAT_H

#include <stdint.h>

#include "imgtree.h"
#include "lib/buf.h"
#include "params.h"
#include "recipe/recipe.h"
#include "sink.h"

struct format {
	const char *name;  /* as image.format names it; also the default output's extension */
	const char *noun;  /* what messages call its output: "image", "archive" */
	int labelled;      /* the image has a filesystem label: /etc/fstab names the root by it */
	/** The bytes the image of `t` takes, or for a size found while writing, a first guess. */
	int (*estimate)(const struct imgtree *t, const struct image_params *p, uint64_t *bytes);
	/** Write the image of `t` into `k`, begun by the writer and committed by its owner. */
	int (*write)(const struct imgtree *t, const struct image_params *p, struct sink *k);
	int image;         /* image.format may name it; 0: a partition's filesystem only (vfat) */
	/* As a partition's filesystem (disk.c): 0 and NULL for a format that is none (tar). */
	int partition;     /* a filesystem recipe/fstype.h names */
	int sized_first;   /* placed at its estimate, then written to fill its partition */
	int fills;         /* written to the size it is given (im->size): a fixed partition's */
	const char *too_small; /* "partition 'x' (N MiB) cannot hold TOO_SMALL"; NULL: it says */
	/** The bytes the filesystem just written at `offset` of `fd` takes (an auto partition's). */
	int (*size_back)(int fd, uint64_t offset, const char *file, uint64_t *bytes);
};

/** The image format called `name` (NULL: the default, ext4), or NULL when there is none. */
const struct format *format_find(const char *name);
/** What writes filesystem `f` into a partition; NULL for none (raw bytes). */
const struct format *format_partition(enum partition_format f);
/**
 * For recipe_load (recipe_format_fn): 1 for a format with a filesystem label, 0 for one
 * without, -ENOENT for no format, with the names as messages list them appended to `known`.
 */
int format_recipe_check(const char *name, struct buf *known);
/**
 * Estimate the image of `s` (borrowed) for `p` in `f`'s format: see struct format. Returns 0 or
 * a logged negative code (-MKI_E_IMAGE for an inconsistent manifest or a tree it cannot hold).
 */
int format_estimate(const struct format *f, const struct staging *s, const struct image_params *p,
		    uint64_t *bytes);
/**
 * Write the image of `s` (borrowed) for `p` in `f`'s format into `k`, which its owner then
 * commits (sink_commit) or drops (sink_release). Returns as image_write.
 */
int format_write(const struct format *f, const struct staging *s, const struct image_params *p,
		 struct sink *k);

#endif
