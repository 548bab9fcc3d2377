/*
 * The configure stage, in the sandbox main entered: register the plan's archs, install the build
 * guards, configure the packages (with native tools when there are twins) - the layer point -
 * then write the identity, copy the overlays, run the recipe's hooks, remove the guards and the
 * build's traces, reconcile the manifest. Each of those is its own module; this file only orders
 * them and owns the tree's fd.
 */
#include "configure.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel.h"
#include "bootcfg.h"
#include "execprof.h"
#include "guards.h"
#include "identity.h"
#include "initramfs.h"
#include "debian/arch.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/log.h"
#include "overlay.h"
#include "recipehooks.h"
#include "reconcile.h"
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
static int configure_with_tools(struct target *t, const struct plan *p, const struct plan *twins,
				const struct recipe *r, const struct settings *st,
				struct strv *python_emulated)
{
	struct accel a = { 0 };
	int ret = configure_has_dpkg(t), ret2;

	if (ret)
		return ret;
	if (!st->no_native_tools)
		ret = accel_prepare(&a, p, twins, &st->emulated_tools, t->root, st->work_dir);
	t->bind_src = a.active ? a.dir : NULL;
	t->bind_profile = a.active ? a.profile : NULL;
	if (!ret)
		ret = configure_once(t, p, r, st);
	if (a.profiling)
		execprof_log(t->bind_profile, EXECPROF_TOP);
	if (!ret && a.active && python_emulated)
		accel_python_emulated(&a, python_emulated);
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

/*
 * The architectures programs in the tree may be of: the plan's; with st->native_only (an SDK,
 * whose other architectures' packages hold headers and libraries) only those the host runs
 * natively, so that a script running another one's program fails as on a host without
 * binfmt_misc instead of being emulated.
 */
static int setup_archs(struct configure *c, const struct plan *p, const struct settings *st)
{
	struct strv native = { 0 };
	size_t i;
	int ret;

	if (!st->native_only)
		return target_setup_archs(&c->t, &p->archs);
	for (i = 0; i < p->archs.n; i++)
		if (arch_runs_natively(arch_find(p->archs.v[i])))
			strv_push(&native, p->archs.v[i]);
		else
			log_info("%s programs are not run in this tree (no emulation)", p->archs.v[i]);
	ret = target_setup_archs(&c->t, &native);
	strv_release(&native);
	return ret;
}

int configure_init(struct configure *c, struct staging *s, const struct plan *p,
		   const struct recipe *r, const struct settings *st)
{
	int ret;

	*c = (struct configure){ .s = s, .p = p, .r = r, .st = st, .rootfd = open_tree(s->root) };
	if (c->rootfd < 0)
		return c->rootfd;
	target_init(&c->t, s->root, c->rootfd, p, r, st);
	c->guards_pending = 1;
	ret = overlay_precheck(r, s, c->rootfd);
	return ret ? ret : setup_archs(c, p, st);
}

int configure_tree(struct configure *c, const struct plan *twins, struct strv *python_emulated)
{
	int ret = guards_install(&c->g, c->rootfd);

	if (ret) {
		log_error("cannot install the build guards in '%s': %s", c->s->root, strerror(-ret));
		return -MKI_E_SANDBOX;
	}
	ret = identity_prepare(c->rootfd, c->st->source_date_epoch);
	/* before the kernel's postinst builds the initramfs */
	if (!ret)
		ret = bootcfg_prepare(c->s, c->r, c->rootfd, c->st->source_date_epoch);
	return ret ? ret : configure_with_tools(&c->t, c->p, twins, c->r, c->st, python_emulated);
}

void configure_adopt(struct configure *c)
{
	guards_adopt(&c->g, c->rootfd); /* a layer is stored with the guards in place */
}

/* What follows the layer point depends on more than the package set (layer.c's key). */
int configure_finish(struct configure *c, struct overlay_report **overlays)
{
	const struct settings *st = c->st;
	int ret = identity_write(c->r, c->rootfd, st->source_date_epoch), ret2;

	if (!ret)
		ret = overlay_apply(c->r, c->s, c->rootfd, st->source_date_epoch, overlays);
	if (!ret)
		ret = recipehooks_run(&c->t, c->r);
	ret2 = guards_remove(&c->g, c->rootfd, c->s->root);
	c->guards_pending = 0;
	if (!ret && ret2)
		ret = -MKI_E_HOOK;
	/* after the hooks, which may add a kernel; the layer above holds none of it (bootcfg.h) */
	if (!ret)
		ret = bootcfg_write(c->s, c->r, c->rootfd, st);
	return ret ? ret : finish(c->s, c->r, c->rootfd, st);
}

void configure_release(struct configure *c)
{
	if (c->rootfd < 0)
		return;
	if (c->guards_pending)
		guards_remove(&c->g, c->rootfd, c->s->root);
	close(c->rootfd);
	target_release(&c->t);
	c->rootfd = -1;
	c->guards_pending = 0;
}
