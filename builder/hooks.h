/* Hooks: configure packages and run the recipe's hooks inside the target (QEMU when foreign). */
#ifndef MKI_HOOKS_H
#define MKI_HOOKS_H

#include <stdint.h>

#include "plan.h"
#include "recipe.h"
#include "settings.h"
#include "unpack.h"

/**
 * Configure every package of the unpacked tree `s->root` and run the recipe's hooks, inside the
 * sandbox (entered here if main did not already): register qemu for the plan's foreign archs and
 * check that each arch's libc runs; set up native tools from `twins` (accel.h; may be empty); install the guards (usr/sbin/policy-rc.d exiting 101,
 * start-stop-daemon replaced by a no-op); run `preinst install` of every package in plan order,
 * base-passwd first; run the target's `dpkg --configure -a` (triggers included) and require every
 * package "install ok installed" and `dpkg --audit` clean; write the identity files and copy the
 * overlays (identity.h, overlay.h; s->overlays gets the overlays' report); run the hooks in
 * recipe order; remove the guards; reset /etc/machine-id; reconcile `s->manifest` with the tree. A failing or hanging script or hook is
 * -MKI_E_HOOK (logged with its name, status and last lines of output).
 */
int hooks_run(struct stage *s, const struct plan *p, const struct plan *twins,
	      const struct recipe *r, const struct settings *st);

struct hooks_changes {
	size_t added, changed, removed;
};

/**
 * Make `s->manifest` describe the tree exactly as seen from inside the sandbox: new paths are
 * added, changed ones updated (type, owner, mode, size, link target, xattrs including
 * security.capability, hardlink groups), vanished ones removed - except device nodes, which only
 * the manifest holds. Owning packages are kept. With a single-id sandbox, owners of existing
 * entries come from the manifest (the tree cannot hold them). mtimes later than
 * `source_date_epoch` (when >= 0) are clamped to it. `ch` (may be NULL) gets the counts.
 */
int hooks_reconcile(struct stage *s, int64_t source_date_epoch, struct hooks_changes *ch);

#endif
