/* Running commands in the staging tree (or beside it, on the host) through the sandbox. */
#ifndef MKI_TARGET_H
#define MKI_TARGET_H

#include "debian/plan.h"
#include "lib/runlimits.h"
#include "lib/settings.h"
#include "lib/str.h"
#include "recipe/recipe.h"
#include "sandbox/watchdog.h"

#define TARGET_TAIL_LINES 20 /* lines of a failing command's output shown */
#define TARGET_CAUSE_LINES 5 /* and of its first lines that look like errors */

struct target {
	const char *root;            /* the staging tree (borrowed) */
	int rootfd;                  /* an fd on it (borrowed); host-side access uses beneath.h */
	const struct limits *limits; /* borrowed from the settings */
	struct strv env;             /* the clean environment of every target command */
	struct strv hook_env;        /* what hooks learn beyond it: MKIMAGE_NAME, _ARCH, _ARCHS */
	struct watchdog_opts watch;  /* bounds on every command run in the tree */
	const char *bind_src;        /* non-NULL: bound at ACCEL_MOUNT in the tree (native tools) */
	const char *bind_profile;    /* non-NULL: bound writable at ACCEL_PROFILE (execprof.h) */
	struct progress *progress;   /* non-NULL: ticked while a command runs (log.h) */
	/* non-NULL: the command's fd 3 is a status pipe, each line passed here (sandbox.h) */
	void (*on_status)(void *ctx, const char *line);
	void *status_ctx;
};

/**
 * Set up `t` for the tree `root` (`rootfd` on it; both borrowed): the environment (PATH, HOME,
 * LC_ALL=C.UTF-8, noninteractive debconf, SOURCE_DATE_EPOCH), the hooks' variables from `p` and
 * `r`, and the watchdog's bounds from `r` and `st`. Release with target_release().
 */
void target_init(struct target *t, const char *root, int rootfd, const struct plan *p,
		 const struct recipe *r, const struct settings *st);
void target_release(struct target *t);
/** t->env plus `extra` (NULL-terminated, may be NULL), appended to `out`. */
void target_env(const struct target *t, const char *const *extra, struct strv *out);
/**
 * Run `argv` as root in the tree (`root` != NULL: t->root) or on the host (`root` NULL, with
 * network), with t->env plus `extra_env`, killed after `timeout` seconds. A failure (exit status,
 * signal, timeout, a watchdog verdict) is logged once as `what` with the last lines of output
 * and the first ones that look like errors (dpkg's own error reports too): -MKI_E_HOOK;
 * -MKI_E_INTERRUPTED; else 0. The whole output goes into the build log (log_output).
 */
int target_run(const struct target *t, const char *root, const char *const *argv,
	       const char *const *extra_env, unsigned timeout, const char *what);
/**
 * target_run() for a recipe hook: besides its `timeout`, a hook that makes no progress (no CPU
 * time used, no process started or ended) for the stall bound (t->watch.stall_timeout) is ended
 * as stalled, inside or outside the tree. An outside hook gets only that bound. Its progress is
 * shown as the step "hook" (a bar, or a heartbeat without a terminal).
 */
int target_run_hook(const struct target *t, const char *root, const char *const *argv,
		    const char *const *extra_env, unsigned timeout, const char *what);
/**
 * Register every arch of `archs` with the sandbox (qemu for foreign ones), then make sure each
 * one's libc in the tree actually starts. -MKI_E_SANDBOX when one does not (logged).
 */
int target_setup_archs(const struct target *t, const struct strv *archs);

#endif
