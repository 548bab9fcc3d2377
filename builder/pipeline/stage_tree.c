/*
 * The stages in the sandbox that make the tree (stage.h): the user namespace, unpack with the
 * layer cache in front of it, the unpacked tree's checks and licences, configure. The layer cache
 * meets the stages here alone: layer_unpack() in front of unpack, layer_shipped() after it,
 * layer_restored() and layer_save() at the layer point.
 */
#include "stage.h"
#include "stage_ctx.h"

#include "configure/bootcfg.h"
#include "configure/configure.h"
#include "emit/sbom.h"
#include "image/disk.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "sandbox/sandbox.h"
#include "unpack/unpack.h"

/* Before downloading too: a machine without subordinate ids is said up front. */
int stage_sandbox_check(struct build_opts *o, const struct recipe *r, struct build *b)
{
	struct sandbox_opts so = { .allow_single_id = o->st.single_id };

	return o->until >= ST_UNPACK ? sandbox_check(&so) : 0;
}

/*
 * Work directories of builds that were killed (SIGKILL cannot be cleaned up after). Inside the
 * namespace, so trees owned by subordinate ids can be removed as well.
 */
static void sweep_work_dirs(const struct build_opts *o, const struct build *b)
{
	unsigned n = fsutil_workdir_sweep(b->tmp_dir, o->st.work_dir);

	if (n)
		log_info("removed %u work director%s in '%s' left by killed builds", n,
			 n == 1 ? "y" : "ies", b->tmp_dir);
}

/* Unpack, configure and the image writer run in one user namespace (sandbox.h). */
int stage_sandbox(struct build_opts *o, const struct recipe *r, struct build *b)
{
	struct sandbox_opts so = { .allow_single_id = o->st.single_id };
	int ret = sandbox_enter(&so);

	if (!ret)
		sweep_work_dirs(o, b);
	return ret;
}

int stage_unpack(struct build_opts *o, const struct recipe *r, struct build *b)
{
	o->st.no_layer_cache |= o->until < ST_CONFIGURE; /* --until unpack: the unconfigured tree */
	return layer_unpack(&b->staging, &b->layer, &b->plan, &b->twins, r, &o->st, unpack_plan);
}

/*
 * What configuring needs of the unpacked tree, before it takes minutes: a disk's raw files, the
 * kernels a disk boots; and the licences as shipped, since a maintainer script may rewrite any
 * copyright file (a restored tree is the configured one: its layer kept them).
 */
int stage_unpacked(struct build_opts *o, const struct recipe *r, struct build *b)
{
	int ret = r->disk.set ? disk_check_files(&b->staging, r) : 0;

	if (!ret)
		ret = bootcfg_check_kernels(&b->staging, r);
	return ret ? ret : layer_shipped(b->layer, &b->shipped, &b->plan, b->staging.root,
					 sbom_capture);
}

int stage_configure_tree(struct staging *s, struct layer *l, const struct plan *p,
			 const struct plan *twins, const struct recipe *r,
			 const struct settings *st, struct overlay_report **overlays,
			 struct strv *python_emulated)
{
	struct configure c;
	int ret = configure_init(&c, s, p, r, st);

	if (!ret && layer_restored(l))
		configure_adopt(&c);
	else if (!ret)
		ret = configure_tree(&c, twins, python_emulated);
	if (!ret)
		layer_save(l, s, c.rootfd);
	if (!ret)
		ret = configure_finish(&c, overlays);
	configure_release(&c);
	return ret;
}

int stage_configure(struct build_opts *o, const struct recipe *r, struct build *b)
{
	b->configured_here = !layer_restored(b->layer);
	return stage_configure_tree(&b->staging, b->layer, &b->plan, &b->twins, r, &o->st,
				    &b->overlays, &b->python_emulated);
}
