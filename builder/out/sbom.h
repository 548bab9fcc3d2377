/* SBOM: an SPDX 2.3 JSON document listing every package of the image. */
#ifndef MKI_SBOM_H
#define MKI_SBOM_H

#include <stdint.h>

#include "debian/plan.h"
#include "recipe/recipe.h"

/**
 * Write the SPDX 2.3 document for the image built from `p` to `file` (atomically). The document
 * is deterministic: its creation time is `sde` and its namespace derives from `image_sha256`.
 * Each package's licenseDeclared comes from its DEP-5 copyright file in the staging tree `root`
 * (dep5.h; NULL: no tree, every licence NOASSERTION). Returns 0, -MKI_E_INTERRUPTED or a
 * negative errno.
 */
int sbom_write(const struct plan *p, const struct recipe *r, const char *root,
	       const char *image_name, const char *image_sha256, int64_t sde, const char *file);

#endif
