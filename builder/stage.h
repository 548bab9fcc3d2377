/* The staging tree: what unpack produces and later stages (hooks, verify, image) work on. */
#ifndef MKI_STAGE_H
#define MKI_STAGE_H

#include "manifest.h"

struct stage {
	char *root;               /* absolute path of the staging tree: <work_dir>/root */
	char *manifest_file;      /* <work_dir>/manifest: the manifest as saved after unpacking */
	char *lint_file;          /* <work_dir>/multiarch-lint: files outside triplet paths */
	struct manifest manifest;
};

/** Free what `s` holds (the tree on disk stays) and zero it. */
void stage_release(struct stage *s);

#endif
