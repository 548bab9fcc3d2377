/*
 * What every image format is asked to write: the recipe's image section and the build's
 * reproducibility inputs. Data only, below every module of the family (image.h, format.h and
 * the writers include it), so no writer needs image.h.
 */
#ifndef MKI_PARAMS_H
#define MKI_PARAMS_H

#include <stdint.h>

#include "recipe/recipe.h"

struct image_params {
	const struct recipe_image *im; /* size, label, uuid, devices ... */
	const char *output;            /* final path; written to a temp name beside it, then renamed */
	int64_t source_date_epoch;     /* every timestamp; -1: the newest mtime in the manifest */
	char seed[65];                 /* hex digest the UUID and hash seed derive from (the lock's) */
	uint32_t volume_id;            /* a FAT partition's serial, derived by the disk writer */
	unsigned level;                /* squashfs: the compressor's level; 0: libsquashfs's default */
};

#endif
