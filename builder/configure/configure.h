/* Configure the unpacked packages with the target's own dpkg, in the sandbox. */
#ifndef MKI_CONFIGURE_H
#define MKI_CONFIGURE_H

#include "debian/plan.h"
#include "recipe/recipe.h"
#include "target.h"

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
