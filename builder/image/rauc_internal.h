/* rauc.c's parts that its unit tests check alone. */
#ifndef MKI_RAUC_INTERNAL_H
#define MKI_RAUC_INTERNAL_H

#include <stdint.h>

#include "lib/buf.h"
#include "rauc.h"

/* The verity fields of the signed manifest; NULL for the one inside the squashfs. */
struct rauc_verity {
	char hash[65];
	char salt[65];
	uint64_t size;
};

/* One slot image of the bundle: its slot class, its name in the bundle, digest and size. */
struct rauc_image {
	const char *class;
	const char *file;
	char sha256[65];
	uint64_t size;
};

/**
 * The manifest, as RAUC's GKeyFile writes it: [update] compatible, version; [bundle] format
 * (and with `v` the verity fields); [image.CLASS] sha256, size, filename for each of the `n`
 * images, in order. Appended to `b`.
 */
void rauc_manifest_images(struct buf *b, const struct recipe_update *u,
			  const struct rauc_image *img, size_t n, const struct rauc_verity *v);
/** rauc_manifest_images() of the one image `image` for RAUC_SLOT_CLASS. */
void rauc_manifest(struct buf *b, const struct recipe_update *u, const char *image,
		   const char *sha256, uint64_t size, const struct rauc_verity *v);
/** The 32-byte verity salt: sha256 of a label, `seed` (the slot image's sha256) and `sde`. */
void rauc_salt(const char *seed, int64_t sde, uint8_t salt[32]);
/** `v` as 8 bytes, most significant first (the trailer after the signature). */
void rauc_put_be64(uint8_t out[8], uint64_t v);

#endif
