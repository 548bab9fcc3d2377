/* Hooks: configure packages and run the recipe's hooks inside the target (QEMU when foreign). */
#ifndef MKI_HOOKS_H
#define MKI_HOOKS_H

#include "plan.h"
#include "recipe.h"
#include "settings.h"
#include "unpack.h"

/** Configure every package, run the hooks, reconcile the manifest with the tree. */
int hooks_run(struct stage *s, const struct plan *p, const struct recipe *r,
	      const struct settings *st);

#endif
