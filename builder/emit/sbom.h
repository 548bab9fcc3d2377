/* SBOM: an SPDX 2.3 JSON document listing every package of the image. */
#ifndef MKI_SBOM_H
#define MKI_SBOM_H

#include <stdint.h>

#include "debian/dep5.h"
#include "debian/plan.h"
#include "lib/buf.h"
#include "recipe/recipe.h"

/**
 * Read the copyright file of every package of `p` from the unpacked tree `root` into `t`
 * (struct dep5_texts, released with dep5_texts_release()), before configuration. A missing or unreadable file is no error (the SBOM declares nothing for it):
 * 0, -MKI_E_INTERRUPTED or a negative errno when the tree cannot be opened (logged).
 */
int sbom_capture(struct dep5_texts *t, const struct plan *p, const char *root);

/**
 * What package `e` is, as SPDX's primaryPackagePurpose (a static string): FIRMWARE, LIBRARY,
 * OPERATING_SYSTEM (a kernel image) or APPLICATION, by the rule documented in mkimage(7), "Outputs".
 */
const char *sbom_purpose(const struct plan_entry *e);

/* An output beside the image the document also describes: an update bundle made from it. */
struct sbom_bundle {
	const char *name;    /* its file name */
	const char *sha256;
	const char *comment; /* what it is, for a reader */
};

/**
 * Write the SPDX 2.3 document for the image built from `p` to `file` (atomically). The document
 * is deterministic: its creation time is `sde` and its namespace is the recipe's sbom_namespace (default
 * RECIPE_SBOM_NAMESPACE) followed by /NAME-`image_sha256`.
 * Each package's licenseDeclared comes from its DEP-5 copyright file (dep5.h): as `shipped`
 * holds it (sbom_capture()) or, when `shipped` is NULL (a tree restored from the layer cache),
 * from the staging tree `root` (NULL: no tree, every licence NOASSERTION). Returns 0,
 * -MKI_E_INTERRUPTED or a negative errno. With `bundle` (NULL: none) the document describes it
 * too, as a package GENERATED_FROM the image.
 */
int sbom_write(const struct plan *p, const struct recipe *r, const struct dep5_texts *shipped,
	       const struct sbom_bundle *bundle, const char *root,
	       const char *image_name, const char *image_sha256, int64_t sde, const char *file);

#endif
