/*
 * The disk writer: partitions in disk order, each into its region of the temporary, placed by
 * disklayout.h as it goes (an ext4 "auto" learns its size by being written: its region reaches
 * as far as the disk may, and the partitions after it start where it ends); then the layout's
 * checks, the table, the commit. Byte-reproducible: every identifier derives from the recipe
 * (partuuid.h), every timestamp from the epoch, and the temporary starts as one hole.
 */
#include "disk.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disklayout.h"
#include "format.h"
#include "image.h"
#include "imgtree.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/sparsehash.h"
#include "parttable.h"
#include "recipe/board.h"
#include "recipe/fstype.h"
#include "recipe/partuuid.h"
#include "sink.h"
#include "verity.h"

#define COPY_CHUNK (1u << 20)

struct disk_ctx {
	const struct staging *s;
	const struct disk_params *dp;
	const struct recipe_disk *d;
	struct sink k;                 /* the whole disk's temporary */
	struct disklayout_part *v;     /* per partition */
	char (*sha)[65];               /* per partition: sha256 of its region */
	char (*roothash)[65];          /* per partition: its dm-verity root hash, or "" */
	uint64_t *used;                /* per partition: the bytes its squashfs takes, or 0 */
	uint64_t cursor;               /* the end of the partitions placed so far */
	uint64_t size;                 /* the disk's, once every partition is placed */
	size_t root;                   /* index of the root partition */
};

/* ---- checks before configuring -------------------------------------------------------------- */

static int open_file(int root_fd, const struct recipe_partition *p)
{
	const char *kind = NULL;
	int fd = beneath_open_regular(root_fd, p->path, 1, &kind);

	if (fd == -EINVAL && kind)
		log_error("partition '%s' holds '/%s', which is %s in the tree, not a regular file",
			  p->name, p->path, kind);
	else if (fd == -ENOENT)
		log_error("partition '%s' holds '/%s', which is not in the tree: install the package "
			  "that ships it or fix 'contents'", p->name, p->path);
	else if (fd < 0)
		log_error("partition '%s' holds '/%s', which cannot be read from the tree: %s%s",
			  p->name, p->path, strerror(-fd),
			  fd == -ELOOP ? " (a symlink: name the file it points to)" : "");
	return fd < 0 ? -MKI_E_IMAGE : fd;
}

/* A file written outside the table into a slot of fixed size (a boot loader's) fits it. */
static int check_slot(int fd, const struct recipe *r, const struct recipe_partition *p)
{
	const struct board *b = board_get(r->board);
	struct stat st;

	if (fstat(fd, &st)) {
		log_error("cannot read '/%s' of partition '%s': %s", p->path, p->name,
			  strerror(errno));
		return -MKI_E_IMAGE;
	}
	if (p->table_entry || !p->size || (uint64_t)st.st_size <= p->size)
		return 0;
	if (b)
		log_error("partition '%s' holds '/%s', %lld bytes, larger than its %" PRIu64
			  "-byte slot at byte %" PRIu64 " (board '%s': %s)", p->name, p->path,
			  (long long)st.st_size, p->size, p->offset, b->name, b->rule);
	else
		log_error("partition '%s' holds '/%s', %lld bytes, larger than its %" PRIu64
			  "-byte slot at byte %" PRIu64 ": raise its 'size'", p->name, p->path,
			  (long long)st.st_size, p->size, p->offset);
	return -MKI_E_IMAGE;
}

int disk_check_files(const struct staging *s, const struct recipe *r)
{
	int root_fd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd, ret = 0;
	size_t i;

	if (root_fd < 0) {
		log_error("cannot open the staging tree '%s': %s", s->root, strerror(errno));
		return -MKI_E_IMAGE;
	}
	for (i = 0; !ret && i < r->disk.n_partitions; i++) {
		if (r->disk.partitions[i].contents != PART_FILE)
			continue;
		fd = open_file(root_fd, &r->disk.partitions[i]);
		if (fd < 0)
			ret = fd;
		else
			ret = check_slot(fd, r, &r->disk.partitions[i]);
		if (fd >= 0)
			close(fd);
	}
	close(root_fd);
	return ret;
}

/* ---- one partition -------------------------------------------------------------------------- */

static char *region_name(const struct disk_ctx *c, size_t i)
{
	return xasprintf("%s, partition %s", c->k.tmp, c->d->partitions[i].name);
}

/* Subtrees other partitions hold below partition i's own: empty mount points in its view. */
static void exclusions(const struct disk_ctx *c, size_t i, struct strv *out)
{
	const struct recipe_partition *p = &c->d->partitions[i];
	size_t j, n = p->contents == PART_SUBTREE ? strlen(p->path) : 0;

	for (j = 0; j < c->d->n_partitions; j++) {
		const struct recipe_partition *q = &c->d->partitions[j];

		if (j == i || q->contents != PART_SUBTREE)
			continue;
		if (p->contents == PART_ROOT ||
		    (p->contents == PART_SUBTREE && !strncmp(q->path, p->path, n) && q->path[n] == '/'))
			strv_push(out, q->path);
	}
}

/* The view partition i writes: the root less the others' subtrees, a subtree, or nothing. */
static int build_view(const struct disk_ctx *c, size_t i, const struct image_params *pp,
		      struct imgtree *t)
{
	const struct recipe_partition *p = &c->d->partitions[i];
	struct staging empty = *c->s;
	struct strv ex = { 0 };
	struct imgtree_scope sc = { 0 };
	int ret;

	if (p->contents == PART_EMPTY) {
		manifest_init(&empty.manifest); /* an empty filesystem: the root directory alone */
		ret = imgtree_build(t, &empty, pp);
		manifest_release(&empty.manifest);
		return ret;
	}
	exclusions(c, i, &ex);
	sc.subtree = p->contents == PART_SUBTREE ? p->path : NULL;
	sc.exclude = (const char *const *)ex.v;
	sc.n_exclude = ex.n;
	ret = imgtree_build_scoped(t, c->s, pp, &sc);
	strv_release(&ex);
	return ret;
}

/* How far a partition whose size is found while writing may reach: the disk's end or limit. */
static uint64_t reach(const struct disk_ctx *c, uint64_t offset)
{
	uint64_t end = disklayout_usable_end(c->d);

	if (!end)
		end = runlimits_get(c->dp->lim, LIMIT_DISK_SIZE);
	return end > offset ? end - offset : 0;
}

/* An auto size that outgrew how far the disk may reach: the limit's refusal (exit 7). */
static int over_limit(const struct disk_ctx *c, const char *name)
{
	log_error("partition '%s' would take the disk past the %s disk-size limit (%s)", name,
		  runlimits_format(LIMIT_DISK_SIZE, runlimits_get(c->dp->lim, LIMIT_DISK_SIZE)).s,
		  runlimits_hint(c->dp->lim, LIMIT_DISK_SIZE).s);
	return -MKI_E_HOOK;
}

/*
 * Place partition i (disklayout_place) and refuse, before anything is written there, a partition
 * that would take the disk past --limit disk-size.
 */
static int place(struct disk_ctx *c, size_t i, uint64_t need)
{
	int ret = disklayout_place(c->d, i, c->cursor, need, &c->v[i]);

	if (!ret && c->v[i].offset + c->v[i].size > runlimits_get(c->dp->lim, LIMIT_DISK_SIZE))
		ret = over_limit(c, c->d->partitions[i].name);
	return ret;
}

/* The ext4 partitions other than the root get a UUID and hash seed of their own. */
static void part_seed(const struct disk_ctx *c, size_t i, struct image_params *pp)
{
	struct hash h;

	if (i == c->root || hash_init(&h, HASH_SHA256))
		return;
	hash_update(&h, c->dp->ip->seed, strlen(c->dp->ip->seed));
	hash_update(&h, "\0partition ", 11);
	hash_update(&h, c->d->partitions[i].name, strlen(c->d->partitions[i].name));
	hash_final_hex(&h, pp->seed);
}

/*
 * The image section partition i's filesystem is written with: the root's own (its size, label,
 * ids, device table) unless the partition's size says otherwise; the others', its size and label.
 */
static void part_image(const struct disk_ctx *c, size_t i, struct recipe_image *im)
{
	const struct recipe_partition *p = &c->d->partitions[i];

	*im = *c->dp->ip->im;
	im->compression = p->compression;
	if (i != c->root) {
		im->size = 0;
		im->uuid = NULL;
		im->hash_seed = NULL;
		im->n_devices = 0;
		im->devices = NULL;
		im->label = p->label;
	} else if (p->label) {
		im->label = p->label;
	}
	if (p->size || p->grow)
		im->size = 0; /* set from the layout */
}

/*
 * A filesystem that outgrew its region of `len` bytes: a fixed partition too small for `what`,
 * a disk too small, or the disk-size limit (exit 7). Logged; returns the code.
 */
static int no_space(struct disk_ctx *c, size_t i, uint64_t len, const char *what)
{
	const struct recipe_partition *p = &c->d->partitions[i];

	if (p->size || p->grow)
		log_error("partition '%s' (%" PRIu64 " MiB) cannot hold %s", p->name,
			  c->v[i].size >> 20, what);
	else if (c->d->size)
		log_error("partition '%s' needs more than the %" PRIu64 " MiB from its start at %"
			  PRIu64 " MiB to the disk's end: raise disk.size", p->name, len >> 20,
			  c->v[i].offset >> 20);
	else
		return over_limit(c, p->name);
	return -MKI_E_NOSPACE;
}

/*
 * Partition i's filesystem, written by its format's row (format.h) into the partition's region:
 * one sized first (vfat) is placed at its estimate and fills it; the others are written into the
 * partition when its size is fixed, else into a region that reaches as far as the disk may, and
 * are then placed at the size they took. A read-only filesystem's size is what its hash tree
 * covers: the rest of its partition is no filesystem.
 */
static int write_fs(struct disk_ctx *c, size_t i, const struct format *f, struct imgtree *t,
		    struct image_params *pp, struct recipe_image *im)
{
	const struct recipe_partition *p = &c->d->partitions[i];
	char *name = region_name(c, i);
	uint64_t need = 0, len, fs = 0;
	struct sink rk;
	int fixed = p->size || p->grow || f->sized_first, ret = 0;

	if (f->sized_first)
		ret = f->estimate(t, pp, &need);
	if (!ret)
		ret = place(c, i, need);
	if (!ret && fixed && f->fills)
		im->size = c->v[i].size;
	if (!ret && !fixed && f->fills && p->min_size && !im->size &&
	    !f->estimate(t, pp, &need) && need <= p->min_size)
		im->size = p->min_size; /* the filesystem fills the partition it asked for */
	len = fixed ? c->v[i].size : reach(c, c->v[i].offset);
	sink_init_region(&rk, c->k.fd, c->v[i].offset, len, name);
	if (!ret)
		ret = f->write(t, pp, &rk);
	if (ret == -MKI_E_NOSPACE && f->too_small)
		ret = no_space(c, i, len, f->too_small);
	if (!ret && f->size_back && (!fixed || fstype_get(p->format)->read_only))
		ret = f->size_back(c->k.fd, c->v[i].offset, c->k.tmp, &fs);
	if (!ret && !fixed)
		ret = place(c, i, fs);
	if (fstype_get(p->format)->read_only)
		c->used[i] = fs;
	sink_release(&rk);
	free(name);
	return ret;
}

/*
 * Copy bytes [from, from + size) of `fd` to `dst` at `to`, holes kept: only the data SEEK_DATA
 * finds is written, and `dst` (a fresh temporary) reads as zeros elsewhere.
 */
static int copy_raw(struct sink *dst, int fd, uint64_t from, uint64_t size, uint64_t to,
		    const char *what)
{
	uint8_t *buf = xmalloc(COPY_CHUNK);
	off_t at = (off_t)from, end, last = (off_t)(from + size);
	ssize_t got;
	int ret = 0;

	while (!ret && at < last) {
		at = lseek(fd, at, SEEK_DATA);
		if (at < 0 || at >= last)
			break; /* ENXIO: only a hole is left */
		end = lseek(fd, at, SEEK_HOLE);
		if (end < 0 || end > last)
			end = last; /* never past what the layout gave it */
		while (!ret && at < end) {
			got = pread(fd, buf, end - at < COPY_CHUNK ? (size_t)(end - at) : COPY_CHUNK, at);
			if (got <= 0) {
				ret = log_errno(got ? -errno : -EIO, "cannot read '%s': %m", what);
				break;
			}
			ret = sink_pwrite(dst, buf, (size_t)got, to + (uint64_t)at - from);
			if (ret)
				ret = log_errno(ret, "cannot write '%s': %m", dst->name);
			at += got;
		}
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	free(buf);
	return ret;
}

static int write_file(struct disk_ctx *c, size_t i)
{
	const struct recipe_partition *p = &c->d->partitions[i];
	int root_fd = open(c->s->root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1, ret;
	struct stat st;
	char *what = xasprintf("/%s", p->path);

	ret = root_fd < 0 ? log_errno(-errno, "cannot open the staging tree '%s': %m", c->s->root)
			  : (fd = open_file(root_fd, p)) < 0 ? fd : 0;
	if (!ret && fstat(fd, &st))
		ret = log_errno(-errno, "cannot read '%s' from the tree: %m", what);
	if (!ret)
		ret = place(c, i, (uint64_t)st.st_size);
	if (!ret)
		ret = copy_raw(&c->k, fd, 0, (uint64_t)st.st_size, c->v[i].offset, what);
	if (fd >= 0)
		close(fd);
	if (root_fd >= 0)
		close(root_fd);
	free(what);
	return ret;
}

/*
 * Partition i holds the hash tree of an earlier partition, already written in the temporary:
 * hashed from there into i's region (auto: as large as the tree), its root hash kept. A squashfs
 * is hashed as far as it reaches: the rest of its partition is no filesystem.
 */
static int write_verity(struct disk_ctx *c, size_t i)
{
	const struct recipe_partition *p = &c->d->partitions[i];
	size_t d = p->verity_of;
	struct verity_params vp = { .name = c->d->partitions[d].name };
	uint64_t data = c->used[d] ? c->used[d] : c->v[d].size;
	char *name = region_name(c, i);
	struct sink rk;
	int ret;

	partuuid_verity(c->dp->r, c->dp->ip->source_date_epoch, vp.name, vp.salt, vp.uuid);
	if (p->size && p->size < verity_hash_size(data)) {
		log_error("partition '%s' (%" PRIu64 " MiB) is too small for the hash tree of "
			  "'%s' (%" PRIu64 " bytes for its %" PRIu64 " MiB): raise its size or use "
			  "\"auto\"", p->name, p->size >> 20, vp.name,
			  verity_hash_size(data), data >> 20);
		free(name);
		return -MKI_E_NOSPACE;
	}
	ret = place(c, i, verity_hash_size(data));
	sink_init_region(&rk, c->k.fd, c->v[i].offset, c->v[i].size, name);
	if (!ret)
		ret = verity_write(c->k.fd, c->v[d].offset, data, &vp, &rk, c->roothash[d]);
	sink_release(&rk);
	free(name);
	return ret;
}

/* A FAT partition's serial, from the recipe and the epoch as its PARTUUID (partuuid.h). */
static uint32_t volume_id(const struct disk_ctx *c, size_t i)
{
	char what[64 + 4 * 36];

	snprintf(what, sizeof(what), "fat:%s", c->d->partitions[i].name);
	return partuuid_u32(c->dp->r, c->dp->ip->source_date_epoch, what);
}

static int write_part(struct disk_ctx *c, size_t i)
{
	const struct recipe_partition *p = &c->d->partitions[i];
	const struct format *f = format_partition(p->format);
	struct recipe_image im;
	struct image_params pp = *c->dp->ip;
	struct imgtree t;
	int ret;

	if (p->contents == PART_FILE)
		return write_file(c, i);
	if (p->contents == PART_VERITY)
		return write_verity(c, i);
	if (!f)
		return place(c, i, 0);
	part_image(c, i, &im);
	pp.im = &im;
	part_seed(c, i, &pp);
	pp.volume_id = volume_id(c, i);
	ret = build_view(c, i, &pp, &t);
	if (ret)
		return ret > -MKI_E_BASE && ret < 0 ? -MKI_E_IMAGE : ret;
	ret = write_fs(c, i, f, &t, &pp, &im);
	imgtree_release(&t);
	return ret > -MKI_E_BASE && ret < 0 ? -MKI_E_IMAGE : ret;
}

/* ---- the whole disk ------------------------------------------------------------------------- */

static int write_table(struct disk_ctx *c)
{
	const struct recipe *r = c->dp->r;
	int64_t sde = c->dp->ip->source_date_epoch;
	struct parttable_entry *e = xcalloc(c->d->n_partitions + 1, sizeof(*e));
	char (*uuid)[37] = xcalloc(c->d->n_partitions + 1, sizeof(*uuid)), disk_id[37];
	struct parttable t = { c->d->table == DISK_MBR, disk_id, 0, e, 0 };
	size_t i;
	int ret;

	partuuid_disk(r, sde, disk_id);
	t.gpt_entries = disklayout_gpt_entries(c->d, c->v);
	for (i = 0; i < c->d->n_partitions; i++) {
		const struct recipe_partition *p = &c->d->partitions[i];

		if (!p->table_entry)
			continue;
		partuuid_partition(r, sde, i, uuid[t.n]);
		e[t.n] = (struct parttable_entry){ p->name, p->type_guid, p->mbr_type, uuid[t.n],
						    c->v[i].offset, c->v[i].size, p->legacy_boot,
						    p->read_only };
		t.n++;
	}
	ret = parttable_write(c->k.fd, c->k.tmp, &t);
	free(e);
	free(uuid);
	return ret;
}

static int by_offset(const void *a, const void *b)
{
	const struct sparsehash_span *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/*
 * Every partition's sha256 (holes hashed as zeros), and what dp->digests asks - the whole disk's,
 * the block map's - in one pass over the temporary: its data read once, its holes not at all.
 */
static int hash_disk(struct disk_ctx *c)
{
	struct sparsehash own = { 0 }, *sh = c->dp->digests ? c->dp->digests : &own;
	size_t i, j, n = c->d->n_partitions;
	struct sparsehash_span *v = xcalloc(n ? n : 1, sizeof(*v));
	int ret;

	for (i = 0; i < n; i++)
		v[i] = (struct sparsehash_span){ .from = c->v[i].offset,
					       .to = c->v[i].offset + c->v[i].size };
	qsort(v, n, sizeof(*v), by_offset); /* disklayout_finish: they do not overlap */
	sh->spans = v;
	sh->n_spans = n;
	sh->want_whole = sh == c->dp->digests;
	sh->want_map = sh == c->dp->digests && c->dp->bmap;
	ret = sparsehash_file(c->k.fd, c->size, sh);
	for (i = 0; !ret && i < n; i++)
		for (j = 0; j < n; j++)
			if (v[j].from == c->v[i].offset && v[j].to == c->v[i].offset + c->v[i].size)
				memcpy(c->sha[i], v[j].sha256, sizeof(c->sha[i]));
	sh->spans = NULL;
	sh->n_spans = 0;
	sparsehash_release(&own);
	free(v);
	if (ret && ret != -MKI_E_INTERRUPTED)
		ret = log_errno(ret, "cannot read back '%s' to hash it: %s", c->k.tmp,
				ret == -ESTALE ? "it changed while being read" : strerror(-ret));
	return ret;
}

/* The first `len` bytes of partition i, holes kept, at their own path (atomically). */
static int write_part_image(struct disk_ctx *c, size_t i, uint64_t len, const char *path)
{
	struct sink out;
	int ret;

	sink_init_file(&out, path);
	ret = sink_begin(&out, len);
	if (!ret)
		ret = copy_raw(&out, c->k.fd, c->v[i].offset, len, 0, c->k.tmp);
	if (!ret)
		ret = sink_commit(&out);
	sink_release(&out);
	return ret;
}

/* The root partition's bytes at their own path. */
static int write_root_image(struct disk_ctx *c, const char *path)
{
	return write_part_image(c, c->root, c->v[c->root].size, path);
}

/*
 * A verified root's slot images for an update bundle: the squashfs as far as its hash tree
 * covers it, the tree as large as it is, the boot partition whole (recipe_update_child()).
 */
static int write_slot_images(struct disk_ctx *c)
{
	const struct disk_params *dp = c->dp;
	int hash = recipe_update_child(dp->r, c->root, UPDATE_PART_HASH);
	int boot = recipe_update_child(dp->r, c->root, UPDATE_PART_BOOT);
	uint64_t data = c->used[c->root] ? c->used[c->root] : c->v[c->root].size;
	int ret;

	if (hash < 0)
		return write_root_image(c, dp->slot_output);
	ret = write_part_image(c, c->root, data, dp->slot_output);
	if (!ret && dp->slot_hash_output)
		ret = write_part_image(c, (size_t)hash, verity_hash_size(data), dp->slot_hash_output);
	if (!ret && dp->slot_boot_output && boot >= 0)
		ret = write_part_image(c, (size_t)boot, c->v[boot].size, dp->slot_boot_output);
	return ret;
}

static void json_str_or_null(struct buf *b, const char *s)
{
	if (s)
		json_str(b, s);
	else
		buf_adds(b, "null");
}

static void report_part(const struct disk_ctx *c, size_t i, struct buf *b)
{
	const struct recipe_partition *p = &c->d->partitions[i];
	const struct fstype *fs = fstype_get(p->format);
	char uuid[37], mbr[8];

	buf_adds(b, "      { \"name\": ");
	json_str(b, p->name);
	buf_adds(b, ", \"type\": ");
	json_str(b, p->type);
	if (c->d->table == DISK_GPT) {
		buf_adds(b, ", \"type_guid\": ");
		json_str(b, p->type_guid);
	} else {
		snprintf(mbr, sizeof(mbr), "0x%02x", p->mbr_type);
		buf_adds(b, ", \"mbr_type\": ");
		json_str(b, mbr);
	}
	buf_adds(b, ", \"partuuid\": ");
	if (p->table_entry)
		partuuid_partition(c->dp->r, c->dp->ip->source_date_epoch, i, uuid);
	json_str_or_null(b, p->table_entry ? uuid : NULL);
	buf_addf(b, ", \"offset\": %" PRIu64 ", \"size\": %" PRIu64 ", \"format\": \"%s\", "
		 "\"label\": ", c->v[i].offset, c->v[i].size, fs->name);
	json_str_or_null(b, !fs->label_max ? NULL : i == c->root && !p->label ?
			 c->dp->ip->im->label : p->label);
	buf_adds(b, ", \"fs_uuid\": ");
	json_str_or_null(b, image_fs_uuid(c->dp->output, c->v[i].offset, uuid) ? NULL : uuid);
	buf_adds(b, ", \"sha256\": ");
	json_str(b, c->sha[i]);
	if (c->roothash[i][0]) {
		buf_adds(b, ", \"roothash\": ");
		json_str(b, c->roothash[i]);
	}
	if (p->contents == PART_VERITY) {
		buf_adds(b, ", \"verity_of\": ");
		json_str(b, c->d->partitions[p->verity_of].name);
	}
	buf_addf(b, " }%s\n", i + 1 < c->d->n_partitions ? "," : "");
}

static void report_json(const struct disk_ctx *c, struct buf *b)
{
	char id[37];
	size_t i;

	partuuid_disk(c->dp->r, c->dp->ip->source_date_epoch, id);
	buf_adds(b, "  \"disk\": { \"path\": ");
	json_str(b, c->dp->output);
	buf_addf(b, ", \"table\": \"%s\", \"id\": ", c->d->table == DISK_MBR ? "mbr" : "gpt");
	json_str(b, id);
	buf_addf(b, ", \"bytes\": %" PRIu64 ",\n    \"bmap\": ", c->size);
	json_str_or_null(b, c->dp->bmap);
	buf_adds(b, ", \"compressed\": ");
	json_str_or_null(b, c->dp->compressed);
	buf_adds(b, ", \"root_image\": ");
	json_str_or_null(b, c->dp->root_output);
	buf_adds(b, ",\n    \"partitions\": [\n");
	for (i = 0; i < c->d->n_partitions; i++)
		report_part(c, i, b);
	buf_adds(b, "    ] },\n");
}

/* The partition holding dp->entry_path: the deepest directory of the tree containing it. */
static size_t entry_partition(const struct disk_ctx *c)
{
	const char *e = c->dp->entry_path;
	size_t i, n, best = SIZE_MAX, len = 0;

	for (i = 0; e && i < c->d->n_partitions; i++) {
		const struct recipe_partition *p = &c->d->partitions[i];

		if (p->contents != PART_SUBTREE)
			continue;
		n = strlen(p->path);
		if (!strncmp(e, p->path, n) && (e[n] == '/' || !e[n]) && n >= len) {
			best = i;
			len = n;
		}
	}
	return best;
}

/*
 * The partition holding a verified root's boot entry, placed in its turn at `cursor` (its size
 * is fixed: recipe_disk.c), written now that the root hash is known.
 */
static int write_entry_partition(struct disk_ctx *c, size_t i, uint64_t cursor)
{
	uint64_t end = c->cursor;
	int ret = c->dp->entry(c->dp->entry_ctx, c->roothash[c->root]);

	c->cursor = cursor;
	if (!ret)
		ret = write_part(c, i);
	c->cursor = end;
	return ret;
}

static int write_all(struct disk_ctx *c)
{
	size_t late = c->dp->entry ? entry_partition(c) : SIZE_MAX;
	uint64_t late_cursor = 0;
	uint64_t max = runlimits_get(c->dp->lim, LIMIT_DISK_SIZE);
	double t0 = log_now();
	size_t i;
	int ret = 0;

	if (c->d->size > max) {
		log_error("disk.size %" PRIu64 " MiB is more than the %s disk-size limit (%s)",
			  c->d->size >> 20, runlimits_format(LIMIT_DISK_SIZE, max).s,
			  runlimits_hint(c->dp->lim, LIMIT_DISK_SIZE).s);
		return -MKI_E_HOOK;
	}
	ret = sink_begin(&c->k, 0);

	for (i = 0; !ret && i < c->d->n_partitions; i++) {
		if (i == late) {
			late_cursor = c->cursor;
			ret = place(c, i, 0);
		} else {
			ret = write_part(c, i);
		}
		if (!ret && c->v[i].offset + c->v[i].size > c->cursor)
			c->cursor = c->v[i].offset + c->v[i].size;
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
		log_debug("disk: partition '%s' at %" PRIu64 ", %" PRIu64 " bytes (%.2fs)",
			  c->d->partitions[i].name, c->v[i].offset, c->v[i].size, log_now() - t0);
	}
	if (!ret && late != SIZE_MAX)
		ret = write_entry_partition(c, late, late_cursor);
	if (!ret)
		ret = disklayout_finish(c->d, c->v, c->dp->lim, &c->size);
	if (!ret && ftruncate(c->k.fd, (off_t)c->size))
		ret = log_errno(-errno, "cannot size '%s': %m", c->k.tmp);
	if (!ret)
		ret = write_table(c);
	log_debug("disk: table written, %" PRIu64 " bytes (%.2fs)", c->size, log_now() - t0);
	if (!ret)
		ret = hash_disk(c);
	log_debug("disk: partitions hashed (%.2fs)", log_now() - t0);
	return ret;
}

/*
 * The root hash NAME.roothash holds: the root partition's, or else that of the first partition
 * whose tree is in a partition of type root-verity (the root filesystem written raw).
 */
static void root_hash(const struct disk_ctx *c, char out[65])
{
	size_t i, d;

	out[0] = 0;
	if (c->roothash[c->root][0]) {
		memcpy(out, c->roothash[c->root], 65);
		return;
	}
	for (i = 0; i < c->d->n_partitions; i++) {
		d = c->d->partitions[i].verity_of;
		if (c->d->partitions[i].contents == PART_VERITY &&
		    !strcmp(c->d->partitions[i].type, "root-verity") && c->roothash[d][0]) {
			memcpy(out, c->roothash[d], 65);
			return;
		}
	}
}

int disk_write(const struct staging *s, const struct disk_params *dp, struct buf *report)
{
	struct disk_ctx c = { .s = s, .dp = dp, .d = &dp->r->disk };
	size_t i;
	int ret;

	for (i = 0; i < c.d->n_partitions; i++)
		if (c.d->partitions[i].contents == PART_ROOT)
			c.root = i;
	c.v = xcalloc(c.d->n_partitions, sizeof(*c.v));
	c.sha = xcalloc(c.d->n_partitions, sizeof(*c.sha));
	c.roothash = xcalloc(c.d->n_partitions, sizeof(*c.roothash));
	c.used = xcalloc(c.d->n_partitions, sizeof(*c.used));
	sink_init_file(&c.k, dp->output);
	ret = write_all(&c);
	if (!ret && dp->root_hash)
		root_hash(&c, dp->root_hash);
	if (!ret)
		ret = sink_commit(&c.k);
	if (!ret && dp->root_output)
		ret = write_root_image(&c, dp->root_output);
	if (!ret && dp->slot_output)
		ret = write_slot_images(&c);
	if (!ret)
		report_json(&c, report);
	if (ret == -MKI_E_INTERRUPTED && c.k.fd >= 0)
		log_error("interrupted: the unfinished disk '%s' is removed", c.k.tmp);
	sink_release(&c.k);
	free(c.v);
	free(c.sha);
	free(c.roothash);
	free(c.used);
	return ret > -MKI_E_BASE && ret < 0 ? -MKI_E_IMAGE : ret;
}
