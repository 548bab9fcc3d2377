/* Hooks: the in-tree step - configure packages and run the recipe's hooks (QEMU when foreign). */
#ifndef MKI_HOOKS_H
#define MKI_HOOKS_H

#include "debian/plan.h"
#include "lib/settings.h"
#include "overlay.h"
#include "recipe/recipe.h"
#include "store/layer.h"
#include "tree/staging.h"

/**
 * Configure every package of the unpacked tree `s->root` and run the recipe's hooks, inside the
 * sandbox, which the caller has entered (sandbox_enter): register qemu for the plan's foreign
 * archs and check that each arch's libc runs; install the guards (guards.h); set up native tools
 * from `twins` (accel.h; may be empty) for the maintainer scripts; configure the packages
 * (configure.h), then store the configured tree in the layer cache as `l` (layer_save; `l` is
 * borrowed, NULL: no layer cache) - or, when `l` says the tree was restored from it, skip
 * installing the guards and configuring; write the identity files and copy the overlays
 * (identity.h, overlay.h; *overlays gets the overlays' report, as overlay_apply() gives it);
 * run the recipe's hooks (recipehooks.h); remove the guards; write a disk's boot configuration
 * (bootcfg.h: -MKI_E_IMAGE when it cannot be); reset /etc/machine-id; reconcile
 * `s->manifest` with the tree (reconcile.h). A failing or hanging script or hook is -MKI_E_HOOK
 * (logged with its name, status and last lines of output).
 */
int hooks_run(struct staging *s, struct layer *l, const struct plan *p, const struct plan *twins,
	      const struct recipe *r, const struct settings *st, struct overlay_report **overlays);

#endif
