/*
 * The layer cache: a build's configured tree (the staging tree right after configuration, with
 * the stage's manifest and the dpkg database in it) kept in the shared cache, so that a rebuild
 * that changes only what comes later - identity, overlays, hooks, the image settings - restores
 * it in seconds instead of unpacking and configuring again.
 *
 * A layer is named by the SHA-256 of its key (layer_key_text, layer_internal.h): everything that
 * determines the configured tree and nothing that comes after it. It lives in the cache as
 * layers/KEY (layerfile.h), written through a temp file under the cache's writer lock of KEY and
 * renamed into place; a reader claims KEY first (cachegc.h) so that --cache-gc never removes a
 * layer in use, and checks the file's digest before using it: a truncated or corrupt layer is
 * warned about, ignored, and replaced by the build that found it.
 */
#ifndef MKI_LAYER_H
#define MKI_LAYER_H

#include "debian/dep5.h"
#include "debian/plan.h"
#include "lib/settings.h"
#include "recipe/recipe.h"
#include "tree/staging.h"

struct layer;

/** unpack_plan()'s signature (unpack.h): the pipeline (stage_tree.c) passes it in. */
typedef int layer_unpack_fn(struct staging *out, const struct plan *p, const struct recipe *r,
			    const struct settings *st);

/**
 * The unpack stage with the layer cache in front of it: when the cache holds an intact layer for
 * `p` (with `twins`, the native tools' plan), `r` and `st`, restore it into <work_dir>/root and
 * fill `s` as `unpack` would have (root, manifest, manifest_file, lint_file, filtered); else run
 * `unpack`. Either way *lp gets the layer, also on error: it says which (layer_restored), for
 * the configure stage, and what became of it, for the report; the caller frees it (layer_free).
 * Disabled by st->no_layer_cache. Returns what `unpack` returns, 0 after a restore, or
 * -MKI_E_INTERRUPTED; a layer that cannot be used is never an error.
 */
int layer_unpack(struct staging *s, struct layer **lp, const struct plan *p,
		 const struct plan *twins, const struct recipe *r, const struct settings *st,
		 layer_unpack_fn *unpack);

/** 1 when the tree `l` describes was restored from the cache: it is already configured. */
int layer_restored(const struct layer *l);

/** sbom_capture()'s signature (sbom.h): the pipeline (stage_tree.c) passes it in. */
typedef int layer_capture_fn(struct dep5_texts *t, const struct plan *p, const char *root);

/**
 * The packages' copyright files as shipped, into `out` (the caller releases it with
 * dep5_texts_release()): after a restore the texts the layer kept (a restored tree is the
 * configured one, scripts had their way); else what `capture` (sbom_capture()) reads from the
 * unpacked tree `root`, kept to be stored with the layer by layer_save() (`out` is borrowed
 * until then). `l` may be NULL. 0, or what `capture` returns.
 */
int layer_shipped(struct layer *l, struct dep5_texts *out, const struct plan *p, const char *root,
		  layer_capture_fn *capture);

/**
 * The layer point (the configure stage): right after configuration, before anything that
 * depends on more than the package set. Store the tree `rootfd` of `s` as its layer, unless it was restored, the
 * cache is off, or another build stores or stored it. Never fails the build: a layer that cannot
 * be stored is a warning. `l` may be NULL (nothing to do).
 */
void layer_save(struct layer *l, const struct staging *s, int rootfd);

/**
 * For the build report: "reused", "pulled" (from the layer registry, layerreg.h), "stored",
 * "present" (another build stored it meanwhile),
 * "not stored" or "off"; and the key (64 hex digits). NULL when `l` is NULL.
 */
const char *layer_outcome(const struct layer *l);
const char *layer_key(const struct layer *l);

void layer_free(struct layer *l);

#endif
