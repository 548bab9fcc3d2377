/* SBOM: an SPDX 2.3 JSON document listing every package of the image. */
#ifndef MKI_SBOM_H
#define MKI_SBOM_H

#include <stdint.h>

#include "debian/plan.h"
#include "lib/buf.h"
#include "recipe/recipe.h"

/*
 * The packages' copyright files as they were unpacked, before any maintainer script ran: what
 * the SBOM declares, since a script may rewrite another package's file (mkimage(7), "Output
 * integrity"). One per plan entry; err[i] is 0 or why there is none (dep5_read()).
 */
struct sbom_texts {
	struct buf *v;
	int *err;
	size_t n;
};

/**
 * Read the copyright file of every package of `p` from the unpacked tree `root` into `t`, before
 * configuration. A missing or unreadable file is no error (the SBOM declares nothing for it):
 * 0, -MKI_E_INTERRUPTED or a negative errno when the tree cannot be opened (logged).
 */
int sbom_capture(struct sbom_texts *t, const struct plan *p, const char *root);
void sbom_texts_release(struct sbom_texts *t);

/**
 * Write the SPDX 2.3 document for the image built from `p` to `file` (atomically). The document
 * is deterministic: its creation time is `sde` and its namespace derives from `image_sha256`.
 * Each package's licenseDeclared comes from its DEP-5 copyright file (dep5.h): as `shipped`
 * holds it (sbom_capture()) or, when `shipped` is NULL (a tree restored from the layer cache),
 * from the staging tree `root` (NULL: no tree, every licence NOASSERTION). Returns 0,
 * -MKI_E_INTERRUPTED or a negative errno.
 */
int sbom_write(const struct plan *p, const struct recipe *r, const struct sbom_texts *shipped,
	       const char *root,
	       const char *image_name, const char *image_sha256, int64_t sde, const char *file);

#endif
