/*
 * The in-tree step of the pipeline, in the sandbox main entered: register the plan's archs,
 * install the build guards, configure the packages (with native tools when there are twins),
 * run the recipe's hooks, remove the guards and the build's traces, reconcile the manifest.
 * Each of those is its own module; this file only orders them and owns the tree's fd.
 */
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel.h"
#include "bootcfg.h"
#include "configure.h"
#include "execprof.h"
#include "guards.h"
#include "identity.h"
#include "initramfs.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/log.h"
#include "overlay.h"
#include "recipehooks.h"
#include "reconcile.h"
#include "store/layer.h"
#include "target.h"

/*
 * Logs and caches that record the wall clock of this build, not the system: without them two
 * builds of one lock are byte-identical. dpkg, update-alternatives and ldconfig recreate them on
 * the device (mmdebstrap drops the same files).
 */
static void scrub_build_traces(int rootfd)
{
	int r;

	static const char *const traces[] = { "var/log/dpkg.log", "var/log/alternatives.log",
		"var/log/apt/history.log", "var/log/apt/term.log", "var/log/apt/eipp.log.xz",
		"var/cache/ldconfig/aux-cache", NULL };
	const char *const *t;

	/* A script may have made /var/log a link (to /srv/x, say): it is followed in the tree. */
	for (t = traces; *t; t++)
		if ((r = beneath_unlink(rootfd, *t, 0)) && r != -ENOENT && r != -ENOTDIR)
			log_warn("cannot remove build trace '/%s': %s", *t, strerror(-r));
}

/*
 * The packages configured with update-initramfs diverted (initramfs.h), put back before anything
 * reads the tree: the layer stored after configure() never holds the shim.
 */
static int configure_once(struct target *t, const struct plan *p, const struct recipe *r,
			  const struct settings *st)
{
	struct initramfs d = { 0 };
	int ret = 0, ret2;

	if (!st->no_initramfs_once && (ret = initramfs_divert(&d, t->rootfd))) {
		log_error("cannot divert update-initramfs in '%s': %s", t->root, strerror(-ret));
		return -MKI_E_SANDBOX;
	}
	ret = configure_packages(t, p, r);
	ret2 = initramfs_restore(&d, t->rootfd, t->root);
	ret = ret ? ret : ret2;
	if (!ret)
		ret = initramfs_check(&d, t->rootfd, t->root);
	initramfs_release(&d);
	return ret;
}

/*
 * Maintainer scripts with native tools (accel.h) bound at ACCEL_MOUNT while they run; the checks
 * afterwards run without them, as every later command does.
 */
static int configure(struct target *t, const struct plan *p, const struct plan *twins,
		     const struct recipe *r, const struct settings *st)
{
	struct accel a = { 0 };
	int ret = configure_has_dpkg(t), ret2;

	if (ret)
		return ret;
	if (!st->no_native_tools)
		ret = accel_prepare(&a, p, twins, t->root, st->work_dir);
	t->bind_src = a.active ? a.dir : NULL;
	t->bind_profile = a.active ? a.profile : NULL;
	if (!ret)
		ret = configure_once(t, p, r, st);
	if (t->bind_profile)
		execprof_log(t->bind_profile, EXECPROF_TOP);
	t->bind_src = t->bind_profile = NULL;
	ret2 = accel_release(&a);
	ret = ret ? ret : ret2;
	return ret ? ret : configure_verify(t);
}

static int open_tree(const char *root)
{
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (rootfd < 0) {
		log_error("cannot open the staging tree '%s': %s", root, strerror(errno));
		return -MKI_E_HOOK;
	}
	if (beneath_supported(rootfd)) {
		log_error("this kernel lacks openat2 (Linux >= 5.6), which mkimage needs to touch the "
			  "tree after its scripts ran without following their symlinks out of it");
		close(rootfd);
		return -MKI_E_SANDBOX;
	}
	return rootfd;
}

static int finish(struct staging *s, const struct recipe *r, int rootfd, const struct settings *st)
{
	struct reconcile_changes ch = { 0 };
	int ret;

	scrub_build_traces(rootfd);
	ret = identity_finish(r, rootfd, st->source_date_epoch);
	if (!ret)
		ret = reconcile_manifest(s, st->source_date_epoch, &st->limits, &ch);
	if (!ret)
		log_info("manifest reconciled: %zu new, %zu changed, %zu removed", ch.added,
			 ch.changed, ch.removed);
	return ret;
}

int hooks_run(struct staging *s, struct layer *l, const struct plan *p, const struct plan *twins,
	      const struct recipe *r, const struct settings *st, struct overlay_report **overlays)
{
	struct guards g = { 0 };
	struct target t;
	int rootfd = open_tree(s->root), ret, ret2;

	if (rootfd < 0)
		return rootfd;
	target_init(&t, s->root, rootfd, p, r, st);
	ret = overlay_precheck(r, s, rootfd);
	if (!ret)
		ret = target_setup_archs(&t, &p->archs);
	if (!ret && layer_restored(l)) {
		guards_adopt(&g, rootfd); /* a layer is stored with the guards in place */
	} else if (!ret && (ret = guards_install(&g, rootfd))) {
		log_error("cannot install the build guards in '%s': %s", s->root, strerror(-ret));
		ret = -MKI_E_SANDBOX;
	}
	if (!ret && !layer_restored(l))
		ret = identity_prepare(rootfd, st->source_date_epoch);
	/* before the kernel's postinst builds the initramfs */
	if (!ret && !layer_restored(l))
		ret = bootcfg_prepare(s, r, rootfd, st->source_date_epoch);
	if (!ret && !layer_restored(l))
		ret = configure(&t, p, twins, r, st);
	/* The layer point: what follows depends on more than the package set (layer.c's key). */
	if (!ret)
		layer_save(l, s, rootfd);
	if (!ret)
		ret = identity_write(r, rootfd, st->source_date_epoch);
	if (!ret)
		ret = overlay_apply(r, s, rootfd, st->source_date_epoch, overlays);
	if (!ret)
		ret = recipehooks_run(&t, r);
	ret2 = guards_remove(&g, rootfd, s->root);
	if (!ret && ret2)
		ret = -MKI_E_HOOK;
	/* after the hooks, which may add a kernel; the layer above holds none of it (bootcfg.h) */
	if (!ret)
		ret = bootcfg_write(s, r, rootfd, st);
	if (!ret)
		ret = finish(s, r, rootfd, st);
	close(rootfd);
	target_release(&t);
	return ret;
}
