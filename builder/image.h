/* Image: staging tree + manifest -> ext4 (libext2fs) or tar (libarchive), reproducibly. */
#ifndef MKI_IMAGE_H
#define MKI_IMAGE_H

#include <stdint.h>

#include "recipe.h"
#include "unpack.h"

struct image_params {
	const struct recipe_image *im; /* size, label, uuid, devices ... */
	const char *output;            /* final path; written to a temp name beside it, then renamed */
	int64_t source_date_epoch;     /* every timestamp */
	char seed[65];                 /* hex digest the UUID and hash seed derive from (the lock's) */
};

/** Write the image described by `p` from `s`. */
int image_write(const struct stage *s, const struct image_params *p);

#endif
