/* What only layer.c's unit tests use. */
#ifndef MKI_LAYER_INTERNAL_H
#define MKI_LAYER_INTERNAL_H

#include "layer.h"
#include "lib/str.h"

/**
 * The text whose SHA-256 names the layer of `p`, `twins`, `r`, `st` in a sandbox of id mode
 * `single_id` (1: one id, the tree holds no owners). Appended to `out`.
 */
void layer_key_text(const struct plan *p, const struct plan *twins, const struct recipe *r,
		    const struct settings *st, int single_id, struct buf *out);

#endif
