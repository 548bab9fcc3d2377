/* Reproducibility check: compare two builds' staging trees and images, name the first difference. */
#ifndef MKI_VERIFY_H
#define MKI_VERIFY_H

#include "tree/staging.h"

/**
 * Compare build `a` with build `b` (trees + manifests) and their images. Returns 0 when the images
 * are identical; otherwise logs the first differing path and field (type, mode, owner, mtime,
 * size, link target, xattrs, contents), or the first differing image offset when the trees agree,
 * and returns -MKI_E_IMAGE.
 */
int verify_builds(const struct staging *a, const char *image_a, const struct staging *b,
		  const char *image_b);

#endif
