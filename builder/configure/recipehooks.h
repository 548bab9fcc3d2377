/* The recipe's hooks, run in the sandbox inside the tree or on the host beside it. */
#ifndef MKI_RECIPEHOOKS_H
#define MKI_RECIPEHOOKS_H

#include "recipe/recipe.h"
#include "target.h"

/**
 * Run the hooks of `r` in recipe order (each with its own timeout and t->hook_env; an outside
 * hook also gets MKIMAGE_ROOT). An inside hook's script is copied to the tree's root and removed
 * afterwards. 0, -MKI_E_HOOK (logged with the hook's name and recipe line) or -MKI_E_INTERRUPTED.
 */
int recipehooks_run(const struct target *t, const struct recipe *r);

#endif
