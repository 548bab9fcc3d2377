/*
 * The stages' steps (pipeline.c's table runs them in order): each takes what the rows above it
 * gave in `b` and adds its own, calling the family that does the work. 0, BUILD_DONE (the build
 * is complete before the image), or a negative code, logged where it arose.
 */
#ifndef MKI_STAGE_H
#define MKI_STAGE_H

#include "build.h"
#include "recipe/recipe.h"

typedef int stage_fn(struct build_opts *o, const struct recipe *r, struct build *b);

/* stage_fetch.c: from the network, before the sandbox (repo, resolve, store) */
stage_fn stage_sources;       /* recipe, --source -> b->sources */
stage_fn stage_indexes;       /* sources -> verified b->indexes */
stage_fn stage_resolve;       /* indexes -> b->plan, the epoch; --plan and --lock end here */
stage_fn stage_room;          /* plan -> room for the image, before downloading */
stage_fn stage_fetch;         /* plan -> verified .debs, the native tools' twins */

/* stage_tree.c: in the sandbox, the staging tree (sandbox, layer, unpack, configure) */
stage_fn stage_sandbox_check; /* -> subordinate ids, before downloading */
stage_fn stage_sandbox;       /* -> in the user namespace, old work directories gone */
stage_fn stage_unpack;        /* plan -> b->staging, b->layer */
stage_fn stage_unpacked;      /* staging -> a disk's files and kernels checked, the licences */
stage_fn stage_configure;     /* staging -> configured tree (the layer point) */

/* stage_sdk.c: --sdk only (sdk.h) */
stage_fn stage_sdk_request;   /* indexes -> the SDK's request: -dev packages at the image's versions */
stage_fn stage_sdk_files;     /* configured tree -> the SDK's wrappers and toolchain files */

/* stage_image.c: the image (image, emit) */
stage_fn stage_image_setup;   /* plan -> b->ip, a disk's outputs named, boot files' export */
stage_fn stage_image;         /* configured tree -> the image or disk */
stage_fn stage_image_extras;  /* image -> a second build compared, root hash, boot, bmap, copy */

/* stage_emit.c: beside the image (emit) */
stage_fn stage_outputs;       /* image -> lock, SBOM, report, the summary line */

#endif
