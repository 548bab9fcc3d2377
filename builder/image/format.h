/*
 * Image formats behind one interface: each declares its name, what its image can carry, its
 * size estimate for a staged tree, and how it writes one to a sink (sink.h): a whole output
 * file or a region of a larger one. Callers name a format only as a string (image.format).
 */
#ifndef MKI_FORMAT_H
#define MKI_FORMAT_H

#include <stdint.h>

#include "params.h"
#include "imgtree.h"
#include "sink.h"

struct format {
	const char *name;  /* as image.format names it; also the default output's extension */
	const char *noun;  /* what messages call its output: "image", "archive" */
	int labelled;      /* the image has a filesystem label: /etc/fstab names the root by it */
	/** The bytes the image of `t` takes, or for a size found while writing, a first guess. */
	int (*estimate)(const struct imgtree *t, const struct image_params *p, uint64_t *bytes);
	/** Write the image of `t` into `k`, begun by the writer and committed by its owner. */
	int (*write)(const struct imgtree *t, const struct image_params *p, struct sink *k);
};

/** The format called `name` (NULL: the default, ext4), or NULL when there is none. */
const struct format *format_find(const char *name);
/**
 * For recipe_load (recipe_format_fn): 1 for a format with a filesystem label, 0 for one
 * without, -ENOENT for no format, with `*known` set to the names as messages list them.
 */
int format_recipe_check(const char *name, const char **known);
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
