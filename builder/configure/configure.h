/*
 * The configure stage: the unpacked tree configured with the target's own dpkg, then what the
 * recipe adds, in the sandbox (configure_stage.c orders the steps, configure.c runs dpkg).
 */
#ifndef MKI_CONFIGURE_H
#define MKI_CONFIGURE_H

#include "debian/plan.h"
#include "guards.h"
#include "lib/settings.h"
#include "overlay.h"
#include "recipe/recipe.h"
#include "target.h"
#include "tree/staging.h"

/**
 * The stage's state from configure_init() to configure_release(): the staging tree, an fd on
 * it and the target that runs commands in it, the build guards. Everything is borrowed but the
 * fd, the target and the guards.
 */
struct configure {
	struct staging *s;
	const struct plan *p;
	const struct recipe *r;
	const struct settings *st;
	int rootfd;        /* -1: not open */
	struct target t;
	struct guards g;
	int guards_pending; /* guards_remove() is still to run */
};

/**
 * Open the unpacked tree `s->root` for the stage, inside the sandbox, which the caller has
 * entered (sandbox_enter): check the recipe's overlays against it (overlay_precheck), register
 * qemu for the plan's foreign archs and check that each arch's libc runs. 0, or a negative code
 * (logged); either way the caller ends with configure_release(). All four are borrowed.
 */
int configure_init(struct configure *c, struct staging *s, const struct plan *p,
		   const struct recipe *r, const struct settings *st);
/**
 * To the layer point (layer.h): install the guards (guards.h), prepare the identity and a disk's
 * boot configuration, set up native tools from `twins` (accel.h; may be empty) for the
 * maintainer scripts and configure the packages (configure_packages, configure_verify) with a
 * kernel's initramfs built once (initramfs.h). A failing or hanging script is -MKI_E_HOOK
 * (logged with its name, status and last lines of output). The packages whose byte code a
 * native python left to the emulated one go to `python_emulated` (may be NULL; accel.h).
 */
int configure_tree(struct configure *c, const struct plan *twins, struct strv *python_emulated);
/**
 * Instead of configure_tree(), for a tree restored from the layer cache: configured already,
 * stored with the guards in place.
 */
void configure_adopt(struct configure *c);
/**
 * After the layer point: write the identity files and copy the overlays (identity.h, overlay.h;
 * *overlays gets the overlays' report, as overlay_apply() gives it), run the recipe's hooks
 * (recipehooks.h), remove the guards, write a disk's boot configuration (bootcfg.h: -MKI_E_IMAGE
 * when it cannot be), remove the build's traces, reset /etc/machine-id and reconcile
 * `s->manifest` with the tree (reconcile.h). A failing or hanging hook is -MKI_E_HOOK.
 */
int configure_finish(struct configure *c, struct overlay_report **overlays);
/** Remove the guards if they are still in place (after a failure), close the tree. */
void configure_release(struct configure *c);

/** 0 if the tree has the target's dpkg, else -MKI_E_NOTYET (logged): nothing can configure it. */
int configure_has_dpkg(const struct target *t);
/**
 * Run `preinst install` of every package of `p` in plan order, base-passwd first (dpkg runs it
 * at unpack), then in the tree `dpkg --configure` of the essential set (plan_essential_set())
 * when the plan has more besides, then `dpkg --configure -a` (triggers included). A failing or
 * hanging script is -MKI_E_HOOK (logged with its name, status and last lines of output).
 */
int configure_packages(const struct target *t, const struct plan *p, const struct recipe *r);
/**
 * After configure_packages() (and with the native tools gone: `dpkg --audit` runs emulated),
 * require every package "install ok installed" and `dpkg --audit` clean: else -MKI_E_HOOK.
 */
int configure_verify(const struct target *t);

#endif
