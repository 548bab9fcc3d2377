/*
 * The layer cache's remote side (layer.h): a miss in the local cache is looked up in an OCI
 * registry (registry.h) and a tree this build stored is pushed there, so the machines of a farm
 * configure each package set once. A pulled layer is used only when its manifest is signed by a
 * key the recipe trusts (layersign.h), its blob is the one the manifest names and its own trailer
 * checks; anything else - a registry down, slow, refusing, lying - is one warning and the build
 * unpacks and configures as it would without a registry. Every pull and push is over within its
 * bound: MKIMAGE_REGISTRY_GRACE seconds plus its blob's size at MKIMAGE_REGISTRY_MIN_RATE
 * (settings.h), from its first request. Never fails a build.
 */
#ifndef MKI_LAYERREG_H
#define MKI_LAYERREG_H

#include <stdint.h>

#include "lib/settings.h"
#include "recipe/recipe.h"

struct layerreg;

/**
 * The registry `st` or the recipe names (the option wins), with the signing and trusted keys;
 * NULL when none is named, with --offline, or when it cannot be used (said once, at info or
 * warning level).
 */
struct layerreg *layerreg_open(const struct recipe *r, const struct settings *st);
void layerreg_free(struct layerreg *lr);

/**
 * Pull layer `key` into the cache `cache_dir` as `path` (its layer file) under the layer's writer
 * lock. 1 when `path` now holds a layer (pulled, or stored meanwhile by another build), 0 when
 * not (said why; nothing is left in the cache), -MKI_E_INTERRUPTED. At most `max` bytes are
 * accepted.
 */
int layerreg_pull(struct layerreg *lr, const char *cache_dir, const char *key, const char *path,
		  uint64_t max);

/**
 * Push the layer file `path` of `key`, signed; with `if_missing` only when the registry has no
 * layer of `key` yet (a layer this machine had before it shared them). A failure is a warning;
 * a registry that failed a pull of this build (down, refusing, cut at its bound) is not pushed
 * to (said at info level). `lr` may be NULL.
 */
void layerreg_push(struct layerreg *lr, const char *key, const char *path, int if_missing);

#endif
