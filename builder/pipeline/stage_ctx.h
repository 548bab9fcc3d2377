/* What the stage_*.c files share (stage.h), and nothing outside them uses. */
#ifndef MKI_STAGE_CTX_H
#define MKI_STAGE_CTX_H

#include "stage.h"
#include "lib/buf.h"

/** The report's "network": which servers the build contacted and why (stage_fetch.c). */
void stage_network_json(struct buf *out);

/**
 * The tree `s` configured: by dpkg up to the layer point, where it is stored as the layer `l`,
 * or, when `l` restored it, as it is; then what the recipe adds (configure.h). `l` may be NULL
 * (stage_tree.c; the image stage's second build uses it too). The packages whose byte code the
 * py_compile guard left to the emulated python go to `python_emulated` (may be NULL).
 */
int stage_configure_tree(struct staging *s, struct layer *l, const struct plan *p,
			 const struct plan *twins, const struct recipe *r,
			 const struct settings *st, struct overlay_report **overlays,
			 struct strv *python_emulated);

/**
 * --sdk: the SDK's files written into the configured tree `s` (stage_sdk.c; the image stage's
 * second build uses it too). 0 without --sdk.
 */
int stage_sdk_tree(const struct build_opts *o, const struct recipe *r, const struct build *b,
		   struct staging *s);

#endif
