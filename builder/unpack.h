/* Unpack: verified .debs -> staging tree in canonical multiarch paths + manifest + dpkg database. */
#ifndef MKI_UNPACK_H
#define MKI_UNPACK_H

#include "manifest.h"
#include "plan.h"
#include "recipe.h"
#include "settings.h"

struct stage {
	char *root;               /* absolute path of the staging tree */
	struct manifest manifest;
};

/** Unpack every plan entry into a new tree under st->work_dir. */
int unpack_plan(struct stage *out, const struct plan *p, const struct recipe *r,
		const struct settings *st);
void stage_release(struct stage *s);

#endif
