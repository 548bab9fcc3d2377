/*
 * The image stages (stage.h): what the image is written with, the image or disk itself, and what
 * completes it - a second build compared, the verified root's hash, the boot files, the block
 * map and the compressed copy.
 */
#include "stage.h"
#include "stage_ctx.h"
#include "sdk.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/bootcfg.h"
#include "configure/overlay.h"
#include "emit/bmap.h"
#include "emit/compress.h"
#include "emit/verify.h"
#include "image/disk.h"
#include "image/image.h"
#include "image/rauc.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/x.h"
#include "recipe/fstype.h"
#include "unpack/unpack.h"

/* The update bundle's slot image: the root partition's filesystem, named as RAUC's handlers know. */
static const char *update_slot_name(const struct recipe *r)
{
	return r->disk.partitions[r->update.root].format == PART_FS_SQUASHFS ? "rootfs.squashfs"
									      : "rootfs.ext4";
}

static char *update_slot_path(const struct recipe *r, const struct build *b)
{
	return xasprintf("%s/%s", b->update_dir, update_slot_name(r));
}

/*
 * A verified root's child slot images (recipe_update_child()): its hash tree, raw, and its
 * slot's boot partition, named for its filesystem as RAUC's handlers know them.
 */
static const char *const update_child_class[] = { "verity", "boot" };

static size_t update_children(const struct recipe *r, const char *name[2])
{
	int boot = recipe_update_child(r, r->update.root, UPDATE_PART_BOOT);

	if (!r->update.verity)
		return 0;
	name[0] = "rootfs.verity.img";
	if (boot < 0)
		return 1;
	name[1] = r->disk.partitions[boot].format == PART_FS_VFAT ? "boot.vfat" : "boot.ext4";
	return 2;
}

static char *update_child_path(const struct recipe *r, const struct build *b, size_t i)
{
	const char *name[2] = { NULL, NULL };

	if (!b->update_dir || i >= update_children(r, name))
		return NULL;
	return xasprintf("%s/%s", b->update_dir, name[i]);
}

/* What the disk writer calls back with a verified root's hash (disk.h, bootcfg.h). */
struct entry_ctx {
	struct staging *s;
	const struct recipe *r;
	const struct settings *st;
};

static int write_entry(void *ctx, const char *roothash)
{
	struct entry_ctx *e = ctx;
	int rootfd = open(e->s->root, O_PATH | O_DIRECTORY | O_CLOEXEC), ret;

	if (rootfd < 0)
		return log_errno(-MKI_E_IMAGE, "cannot open the staging tree '%s': %m", e->s->root);
	ret = bootcfg_write_roothash(e->s, e->r, rootfd, e->st, roothash);
	close(rootfd);
	return ret;
}

/*
 * The image, or with a disk section the whole disk at `output` (its root partition also at
 * b->root_image when asked, and the report's "disk" member into `report` when not NULL).
 */
static int write_image(const struct build_opts *o, const struct recipe *r, struct build *b,
		       struct staging *s, const struct image_params *ip, const char *output,
		       struct buf *report)
{
	struct buf none = { 0 };
	struct entry_ctx e = { s, r, &o->st };
	char *slot = report && b->update_dir ? update_slot_path(r, b) : NULL;
	char *hash = slot ? update_child_path(r, b, 0) : NULL;
	char *boot = slot ? update_child_path(r, b, 1) : NULL;
	struct disk_params dp = { r, ip, output, report ? b->root_image : NULL, slot, b->bmap,
				  b->compressed, &o->st.limits, report ? b->root_hash : NULL,
				  bootcfg_entry_path(r), write_entry, &e,
				  report ? &b->digests : NULL, hash, boot };
	int ret;

	if (!r->disk.set && report) { /* the image's sha256 (and map) from its temporary */
		b->digests.want_whole = 1;
		b->digests.want_map = b->bmap != NULL;
		return image_write_digests(s, ip, &b->digests);
	}
	if (!r->disk.set)
		return image_write(s, ip);
	ret = disk_write(s, &dp, report ? report : &none);
	buf_release(&none);
	free(slot);
	free(hash);
	free(boot);
	return ret;
}

/*
 * --verify-reproducible: unpack, configure and write the image a second time from the same plan
 * in a separate work directory, then compare. Same namespace, same cache: what differs can only
 * come from the build itself.
 */
static int verify_again(struct build_opts *o, const struct recipe *r, struct build *b,
			const struct image_params *first)
{
	struct settings st2 = o->st;
	struct image_params ip = *first;
	struct staging again = { 0 };
	struct overlay_report *overlays = NULL;
	char *out2 = xasprintf("%s.verify", o->output);
	int ret;

	st2.work_dir = xasprintf("%s/verify", o->st.work_dir);
	ip.output = out2;
	ret = fsutil_mkdirs(st2.work_dir);
	fsutil_spread(st2.work_dir); /* as the work directory is (fsutil.h) */
	if (!ret)
		ret = unpack_plan(&again, &b->plan, r, &st2);
	if (!ret)
		ret = stage_configure_tree(&again, NULL, &b->plan, &b->twins, r, &st2, &overlays, NULL);
	if (!ret)
		ret = stage_sdk_tree(o, r, b, &again);
	if (!ret)
		ret = write_image(o, r, b, &again, &ip, out2, NULL);
	if (!ret) {
		manifest_sort(&b->staging.manifest);
		manifest_sort(&again.manifest);
		ret = verify_builds(&b->staging, o->output, &again, out2);
	}
	unlink(out2);
	staging_release(&again);
	overlay_report_free(overlays);
	free(st2.work_dir);
	free(out2);
	return ret;
}

static enum compress_kind disk_compression(const struct recipe *r)
{
	return r->disk.compress == DISK_COMPRESS_ZSTD ? COMPRESS_ZSTD
	     : r->disk.compress == DISK_COMPRESS_XZ ? COMPRESS_XZ : COMPRESS_NONE;
}

/*
 * NAME.roothash beside the disk (systemd's name for it): the root hash of the root's dm-verity
 * tree, hex and a newline, written atomically; only when the disk has one.
 */
static int write_root_hash(const struct build_opts *o, const struct build *b)
{
	char *path, text[66];
	int ret;

	if (!b->root_hash[0])
		return 0;
	path = xasprintf("%.*s.roothash", build_output_stem(o->output), o->output);
	snprintf(text, sizeof(text), "%s\n", b->root_hash);
	ret = fsutil_write_atomic(path, text, 65);
	if (ret)
		log_error("cannot write the root hash to '%s': %s", path, strerror(-ret));
	else
		log_info("dm-verity root hash %s written to '%s'", b->root_hash, path);
	free(path);
	return ret;
}

/*
 * A disk's other outputs: OUTPUT.bmap, OUTPUT.zst or .xz, the root partition at image.output
 * (default: beside the disk, its stem and .ext4).
 */
static void disk_outputs(const struct build_opts *o, const struct recipe *r, struct build *b)
{
	enum compress_kind k = disk_compression(r);

	if (r->disk.bmap)
		b->bmap = xasprintf("%s.bmap", o->output);
	if (k != COMPRESS_NONE)
		b->compressed = xasprintf("%s%s", o->output, compress_suffix(k));
	if (r->disk.root_image && r->image.output) {
		b->root_image = xstrdup(r->image.output);
	} else if (r->disk.root_image) { /* beside the disk, as the lock: images/x.img -> x.ext4 */
		const char *ext = "ext4";
		size_t i;

		for (i = 0; i < r->disk.n_partitions; i++)
			if (r->disk.partitions[i].contents == PART_ROOT) /* x.squashfs: as image.format */
				ext = fstype_get(r->disk.partitions[i].format)->name;
		b->root_image = xasprintf("%.*s.%s", build_output_stem(o->output), o->output, ext);
	}
}

/*
 * The update bundle: NAME.raucb beside the disk, made in the work directory's update/ from a
 * copy of the root partition the disk writer leaves there.
 */
static int update_outputs(struct build_opts *o, const struct recipe *r, struct build *b)
{
	int ret;

	b->bundle = xasprintf("%.*s.raucb%s", build_output_stem(o->output), o->output,
			      r->update.sign_offline ? ".unsigned" : "");
	if (r->update.sign_offline)
		b->bundle_manifest = xasprintf("%.*s.raucb.manifest", build_output_stem(o->output),
					       o->output);
	b->update_dir = xasprintf("%s/update", o->st.work_dir);
	fsutil_remove_tree(b->update_dir); /* a restarted build's leftovers */
	ret = fsutil_mkdirs(b->update_dir);
	if (ret)
		log_error("cannot create '%s': %s", b->update_dir, strerror(-ret));
	return ret ? -MKI_E_IMAGE : 0;
}

static int write_bundle(struct build_opts *o, const struct recipe *r, struct build *b)
{
	const char *name[2] = { NULL, NULL };
	struct rauc_params p = { &r->update, b->update_dir, update_slot_name(r), b->bundle,
				 b->bundle_manifest, o->st.source_date_epoch, update_child_class,
				 name, update_children(r, name) };
	int ret = rauc_write(&p, &b->bundle_info);

	fsutil_remove_tree(b->update_dir); /* a copy of the root partition: gigabytes */
	return ret;
}

/* What the image is written with; a disk's other outputs named; the boot files' export begun. */
int stage_image_setup(struct build_opts *o, const struct recipe *r, struct build *b)
{
	int ret;

	if (r->disk.set)
		disk_outputs(o, r, b);
	if (r->update.set && (ret = update_outputs(o, r, b)))
		return ret;
	if (b->sdk) /* NAME-sdk.tar.zst: the tar is compressed, then removed */
		b->compressed = xasprintf("%s%s", o->output, compress_suffix(COMPRESS_ZSTD));
	b->ip.im = &r->image;
	b->ip.output = o->output;
	b->ip.source_date_epoch = o->st.source_date_epoch;
	plan_seed(&b->plan, r->digest, b->ip.seed); /* the UUID and hash seed: what the lock pins */
	if (!r->image.export_boot)
		return 0;
	return bootexport_prepare(&b->boot, &b->staging, r, o->output, o->st.source_date_epoch,
				  &o->st.limits);
}

int stage_image(struct build_opts *o, const struct recipe *r, struct build *b)
{
	return write_image(o, r, b, &b->staging, &b->ip, o->output, &b->disk);
}

/* The image checked and completed: built again, its root hash, boot files, block map, copy. */
int stage_image_extras(struct build_opts *o, const struct recipe *r, struct build *b)
{
	int ret = o->verify ? verify_again(o, r, b, &b->ip) : 0;

	if (!ret)
		ret = write_root_hash(o, b);
	if (!ret && r->image.export_boot)
		ret = bootexport_commit(&b->boot);
	if (!ret && b->bmap)
		ret = bmap_write(o->output, b->bmap, &b->digests);
	if (!ret && b->bundle)
		ret = write_bundle(o, r, b);
	if (!ret && b->compressed)
		ret = b->sdk ? compress_file_level(o->output, b->compressed, COMPRESS_ZSTD,
						   SDK_ZSTD_LEVEL)
			     : compress_file(o->output, b->compressed, disk_compression(r));
	return ret;
}
