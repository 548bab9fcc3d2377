/*
 * The FAT format: check and name the subtree (every name FAT can hold, short names made per
 * directory), lay it out (each directory and file one contiguous run of clusters, in sorted
 * path order), size the filesystem, then write it front to back: reserved region, both FATs,
 * the root directory, and every directory and file in the order they were laid out.
 */
#include "fat.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fatdir.h"
#include "fatfs.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"

#define MIB ((uint64_t)1 << 20)
#define COPY_CHUNK (1u << 20)
#define WRITEBACK_BYTES (32ull << 20)
#define FILE_MAX 0xffffffffull
#define DIR_ENTRIES_MAX 65536u
#define SIZE_TRIES 200

struct fat_node {
	size_t ti;          /* its index in the imgtree */
	size_t src;         /* files: the entry whose bytes it holds (a hard link's file) */
	size_t parent;      /* local index */
	uint64_t size;      /* files: bytes */
	uint32_t first;     /* first cluster, 0 for none (an empty file, the FAT12/16 root) */
	uint32_t clusters;
	uint32_t entries;   /* directories: 32-byte entries */
	size_t kid0, nkids; /* directories: their children in ctx->kids */
	uint8_t sname[11];
	uint16_t *lname;    /* NULL when the short name is the name */
	size_t llen;
	int dir;
	int fixed;          /* its short name follows from its name: not generated */
};

struct fat_ctx {
	const struct imgtree *t;
	const struct fat_params *fp;
	const char *where;   /* the subtree as messages name it */
	size_t base, n;      /* the subtree's root in t, and its node count */
	struct fat_node *v;
	size_t *kids;
	uint8_t label[11];
	int has_label;
	uint64_t file_bytes;
	struct fatfs g;
	uint64_t used;       /* clusters laid out */
	struct sink *k;
	uint8_t *buf;
	struct progress pr;
	uint64_t unflushed;
	int kernel_copy;
};

static const char *path_of(const struct fat_ctx *c, size_t i)
{
	return c->t->v[c->v[i].ti].e->path;
}

/* --- the label and the subtree -------------------------------------------------------------- */

static int set_label(struct fat_ctx *c)
{
	const char *l = c->fp->label ? c->fp->label : "";
	size_t i, len = strlen(l);

	memcpy(c->label, "NO NAME    ", 11);
	c->has_label = len > 0;
	if (!len)
		return 0;
	for (i = 0; i < len && len <= 11; i++)
		if (l[i] < 0x20 || l[i] > 0x7e || strchr("*?.,;:/\\|+=<>[]\"", l[i]))
			break;
	if (len > 11 || i < len || l[0] == ' ') {
		log_error("FAT volume label '%s' is not usable: use up to 11 letters, digits, spaces "
			  "(not first) or !#$%%&'()-@^_`{}~", l);
		return -MKI_E_IMAGE;
	}
	memset(c->label, ' ', 11);
	for (i = 0; i < len; i++)
		c->label[i] = (uint8_t)(l[i] >= 'a' && l[i] <= 'z' ? l[i] - 'a' + 'A' : l[i]);
	return 0;
}

/* The subtree's root and how many nodes follow it (paths with one prefix sort together). */
static int find_subtree(struct fat_ctx *c, const char *sub)
{
	const struct imgtree *t = c->t;
	size_t i, len = strlen(sub), end;

	for (i = 0; i < t->n && strcmp(t->v[i].e->path, sub); i++)
		;
	if (i == t->n || t->v[i].e->type != MF_DIR) {
		log_error("the FAT filesystem's directory '%s' %s in the image tree: create it there "
			  "(a package, an overlay or a hook) or name another one", sub,
			  i == t->n ? "is not" : "is not a directory");
		return -MKI_E_IMAGE;
	}
	c->base = i;
	for (end = i + 1; end < t->n; end++)
		if (len && (strncmp(t->v[end].e->path, sub, len) || t->v[end].e->path[len] != '/'))
			break;
	c->n = end - i;
	return 0;
}

/* --- scanning: what FAT can hold ------------------------------------------------------------ */

static const char *kind_of(char type)
{
	switch (type) {
	case MF_SYMLINK: return "a symbolic link";
	case MF_CHR: return "a character device";
	case MF_BLK: return "a block device";
	case MF_FIFO: return "a FIFO";
	default: return "a socket";
	}
}

/* A file's size, from the tree (what will be copied), checked against FAT's 4 GiB. */
static int file_size(struct fat_ctx *c, size_t i)
{
	struct fat_node *v = &c->v[i];
	struct stat st;
	int fd = imgtree_open(c->t, v->src), ret = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st))
		ret = log_errno(-errno, "cannot stat '%s' in the staging tree: %m",
				c->t->v[v->src].e->path);
	else if ((uint64_t)st.st_size > FILE_MAX)
		ret = log_errno(-MKI_E_IMAGE, "'%s' is %" PRIu64 " bytes: a FAT file holds at most "
				"4 GiB - 1; leave it out of '%s'", path_of(c, i),
				(uint64_t)st.st_size, c->where);
	v->size = (uint64_t)st.st_size;
	c->file_bytes += v->size;
	close(fd);
	return ret;
}

static int scan_node(struct fat_ctx *c, size_t i)
{
	const struct imgtree_node *tn = &c->t->v[c->v[i].ti];
	uint16_t u16[FATDIR_NAME_MAX];
	int ret;

	c->v[i].parent = imgtree_parent(c->t, c->v[i].ti) - c->base;
	switch (tn->e->type) {
	case MF_DIR: c->v[i].dir = 1; break;
	case MF_REG: c->v[i].src = c->v[i].ti; break;
	case MF_HARDLINK: c->v[i].src = tn->link; break;
	default:
		log_error("'%s' is %s: FAT cannot hold it; leave it out of '%s' or replace it by a "
			  "copy of what it names", tn->e->path, kind_of(tn->e->type), c->where);
		return -MKI_E_IMAGE;
	}
	ret = fatdir_decode(imgtree_name(c->t, c->v[i].ti), u16, &c->v[i].llen);
	if (ret) {
		log_error("the name of '%s' holds %s: FAT cannot hold it; rename it or leave it out "
			  "of '%s'", tn->e->path, fatdir_decode_error(ret), c->where);
		return -MKI_E_IMAGE;
	}
	c->v[i].lname = xmalloc(c->v[i].llen * sizeof(*u16));
	memcpy(c->v[i].lname, u16, c->v[i].llen * sizeof(*u16));
	return c->v[i].dir ? 0 : file_size(c, i);
}

/* Each directory's children, in sorted order, as one array indexed by kid0/nkids. */
static void link_kids(struct fat_ctx *c)
{
	size_t i, at = 0;

	for (i = 1; i < c->n; i++)
		c->v[c->v[i].parent].nkids++;
	for (i = 0; i < c->n; i++) {
		c->v[i].kid0 = at;
		at += c->v[i].nkids;
		c->v[i].nkids = 0;
	}
	c->kids = xcalloc(c->n, sizeof(*c->kids));
	for (i = 1; i < c->n; i++) {
		struct fat_node *p = &c->v[c->v[i].parent];

		c->kids[p->kid0 + p->nkids++] = i;
	}
}

/* --- names per directory -------------------------------------------------------------------- */

struct folded {
	uint16_t *u;
	size_t len, node;
};

static int folded_cmp(const void *pa, const void *pb)
{
	const struct folded *a = pa, *b = pb;
	size_t i;

	for (i = 0; i < a->len && i < b->len; i++)
		if (a->u[i] != b->u[i])
			return a->u[i] < b->u[i] ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* Equal names in tree order, so the message names them the same way every time. */
static int folded_order(const void *pa, const void *pb)
{
	const struct folded *a = pa, *b = pb;
	int c = folded_cmp(a, b);

	return c ? c : a->node < b->node ? -1 : 1;
}

/* Two names FAT would take for one (case is not significant) are an error naming both. */
static int check_case(struct fat_ctx *c, const struct fat_node *d)
{
	struct folded *f = xcalloc(d->nkids + 1, sizeof(*f));
	size_t i, j;
	int ret = 0;

	for (i = 0; i < d->nkids; i++) {
		const struct fat_node *k = &c->v[c->kids[d->kid0 + i]];

		f[i].u = xmalloc(k->llen * sizeof(*f[i].u) + 1);
		f[i].len = k->llen;
		f[i].node = c->kids[d->kid0 + i];
		for (j = 0; j < k->llen; j++)
			f[i].u[j] = fatdir_fold(k->lname[j]);
	}
	qsort(f, d->nkids, sizeof(*f), folded_order);
	for (i = 1; i < d->nkids && !ret; i++)
		if (!folded_cmp(&f[i - 1], &f[i]))
			ret = log_errno(-MKI_E_IMAGE, "'%s' and '%s' differ only in case: FAT cannot "
					"hold both; rename or remove one", path_of(c, f[i - 1].node),
					path_of(c, f[i].node));
	for (i = 0; i < d->nkids; i++)
		free(f[i].u);
	free(f);
	return ret;
}

/*
 * Short names: first every name a lookup would match as a short name - valid 8.3 names, and
 * names only upper-casing makes one ("readme.txt" matches README.TXT) - then the generated
 * NAME~N.EXT of the others around them, so no lookup can find two entries.
 */
static int short_names(struct fat_ctx *c, struct fat_node *d)
{
	struct fatdir_set used;
	size_t i;
	int ret = 0;

	fatdir_set_init(&used, d->nkids);
	for (i = 0; i < d->nkids; i++) {
		struct fat_node *k = &c->v[c->kids[d->kid0 + i]];
		const char *name = imgtree_name(c->t, k->ti);

		if (fatdir_short_name(name, k->sname)) {
			free(k->lname);
			k->lname = NULL;
		} else if (!fatdir_lossless(name, k->sname)) {
			continue;
		}
		fatdir_set_add(&used, k->sname); /* unique: equal ignoring case was refused */
		k->fixed = 1;
	}
	for (i = 0; i < d->nkids && !ret; i++) {
		struct fat_node *k = &c->v[c->kids[d->kid0 + i]];

		if (!k->fixed && fatdir_generate(imgtree_name(c->t, k->ti), &used, k->sname))
			ret = log_errno(-MKI_E_IMAGE, "no short name is left for '%s': rename some "
					"of its siblings", path_of(c, c->kids[d->kid0 + i]));
	}
	fatdir_set_release(&used);
	return ret;
}

static int name_dir(struct fat_ctx *c, size_t i)
{
	struct fat_node *d = &c->v[i];
	size_t j, entries = i ? 2 : (size_t)c->has_label;
	int ret = check_case(c, d);

	if (!ret)
		ret = short_names(c, d);
	for (j = 0; j < d->nkids; j++) {
		const struct fat_node *k = &c->v[c->kids[d->kid0 + j]];

		entries += k->lname ? fatdir_slots(k->llen) : 1;
	}
	if (!ret && entries > DIR_ENTRIES_MAX)
		ret = log_errno(-MKI_E_IMAGE, "directory '%s' needs %zu entries (a long name takes "
				"one per 13 characters and one more): FAT allows %u; move some of "
				"its files into subdirectories", path_of(c, i), entries,
				DIR_ENTRIES_MAX);
	d->entries = (uint32_t)entries;
	return ret;
}

static int scan(struct fat_ctx *c)
{
	char *sub = xstrdup(c->fp->subtree ? c->fp->subtree : "");
	size_t i, len;
	int ret;

	for (len = strlen(sub); len && sub[len - 1] == '/'; len--)
		sub[len - 1] = 0;
	ret = set_label(c);
	if (!ret)
		ret = find_subtree(c, sub + strspn(sub, "/"));
	free(sub);
	if (ret)
		return ret;
	c->where = c->base ? c->t->v[c->base].e->path : "/";
	c->v = xcalloc(c->n, sizeof(*c->v));
	for (i = 0; i < c->n; i++)
		c->v[i].ti = c->base + i;
	c->v[0].dir = 1;
	for (i = 1; i < c->n && !ret; i++) {
		ret = scan_node(c, i);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	if (ret)
		return ret;
	link_kids(c);
	for (i = 0; i < c->n && !ret; i++)
		if (c->v[i].dir)
			ret = name_dir(c, i);
	return ret;
}

/* --- layout and size ------------------------------------------------------------------------ */

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* One run of clusters per directory and file, in path order; FAT32's root is cluster 2. */
static void place(struct fat_ctx *c, const struct fatfs *g)
{
	uint64_t next = 2;
	size_t i;

	for (i = 0; i < c->n; i++) {
		struct fat_node *v = &c->v[i];
		uint64_t n = v->dir ? div_up((uint64_t)v->entries * FATDIR_ENTRY, g->cluster_bytes)
				    : div_up(v->size, g->cluster_bytes);

		if (v->dir && !n)
			n = 1;
		if (!i && g->bits != 32)
			n = 0; /* FAT12/16: the root has its own area */
		v->first = n && next <= UINT32_MAX ? (uint32_t)next : 0;
		v->clusters = (uint32_t)n;
		next += n;
	}
	c->used = next - 2;
}

/* Lay out for `bytes`: 0 when the tree fits (with a margin: 1/32 and 16 clusters), or why not. */
static int fit(struct fat_ctx *c, uint64_t bytes, int margin)
{
	int ret = fatfs_geometry(&c->g, bytes, c->v[0].entries);

	if (ret)
		return ret;
	place(c, &c->g);
	return c->used + (margin ? c->used / 32 + 16 : 0) <= c->g.clusters ? 0 : -ENOSPC;
}

/*
 * The smallest whole number of MiB that fits (with the margin): grown by what is missing, and
 * to FAT32's first size when the root holds more than FAT12/16's fixed area can.
 */
static int smallest(struct fat_ctx *c, int margin, uint64_t *bytes)
{
	uint64_t size = MIB, want;
	int tries, ret = -ENOSPC;

	for (tries = 0; tries < SIZE_TRIES && ret == -ENOSPC; tries++) {
		ret = fit(c, size, margin);
		if (ret == -E2BIG) {
			size = FATFS_FAT32_FROM;
			ret = -ENOSPC;
			continue;
		}
		if (ret != -ENOSPC)
			break;
		want = c->g.clusters ? (c->used + (margin ? c->used / 32 + 16 : 0) - c->g.clusters)
				       * c->g.cluster_bytes : 0;
		size = div_up(size + want + 1, MIB) * MIB;
	}
	*bytes = size;
	if (ret)
		return log_errno(-MKI_E_NOSPACE, "the FAT filesystem of '%s' would need more than "
				 "FAT's 2 TiB: leave files out of it", c->where);
	return 0;
}

/* The size to write: fp->size when the tree fits in it, else an error saying what it needs. */
static int choose_size(struct fat_ctx *c, uint64_t *bytes)
{
	uint64_t need = 0;
	int ret;

	if (!c->fp->size)
		return smallest(c, 1, bytes);
	ret = fit(c, c->fp->size, 0);
	*bytes = c->fp->size;
	if (ret == -EFBIG)
		return log_errno(-MKI_E_NOSPACE, "a FAT filesystem of %" PRIu64 " bytes is beyond "
				 "FAT's 2 TiB: make it smaller", c->fp->size);
	if (ret == -ENOSPC && !(ret = smallest(c, 0, &need)))
		ret = log_errno(-MKI_E_NOSPACE, "the FAT filesystem of '%s' does not fit in %" PRIu64
				" bytes: it needs %" PRIu64 " MiB (%" PRIu64 " bytes); make it at "
				"least that large", c->where, c->fp->size, need / MIB, need);
	else if (ret == -E2BIG)
		ret = log_errno(-MKI_E_NOSPACE, "the root of '%s' needs %" PRIu32 " entries: FAT12 "
				"and FAT16 hold at most 65520 there; make it at least %" PRIu64
				" MiB (FAT32) or move files into subdirectories", c->where,
				c->v[0].entries, FATFS_FAT32_FROM / MIB);
	return ret;
}

static void ctx_release(struct fat_ctx *c)
{
	size_t i;

	for (i = 0; c->v && i < c->n; i++)
		free(c->v[i].lname);
	free(c->v);
	free(c->kids);
	free(c->buf);
}

int fat_estimate(const struct imgtree *t, const struct fat_params *fp, uint64_t *bytes)
{
	struct fat_ctx c = { .t = t, .fp = fp };
	int ret = scan(&c);

	*bytes = 0;
	if (!ret)
		ret = choose_size(&c, bytes);
	if (ret)
		*bytes = 0;
	ctx_release(&c);
	return ret;
}

/* --- writing -------------------------------------------------------------------------------- */

static int put(struct fat_ctx *c, const void *buf, size_t n, uint64_t off, const char *what)
{
	int ret = sink_pwrite(c->k, buf, n, off);

	if (ret)
		log_error("cannot write %s into '%s': %s", what, c->k->name, strerror(-ret));
	return ret;
}

static int write_fats(struct fat_ctx *c)
{
	const struct fatfs *g = &c->g;
	size_t bytes = fatfs_fat_bytes(g, (uint32_t)(c->used + 1)), i;
	uint8_t *fat = xcalloc(1, bytes);
	uint32_t k;
	int ret;

	fatfs_fat_set(g, fat, 0, fatfs_media_entry(g));
	fatfs_fat_set(g, fat, 1, fatfs_eoc(g));
	for (i = 0; i < c->n; i++)
		for (k = 0; k < c->v[i].clusters; k++)
			fatfs_fat_set(g, fat, c->v[i].first + k, k + 1 < c->v[i].clusters ?
				      c->v[i].first + k + 1 : fatfs_eoc(g));
	ret = put(c, fat, bytes, (uint64_t)g->reserved * FATFS_SECTOR, "the first FAT");
	if (!ret)
		ret = put(c, fat, bytes, ((uint64_t)g->reserved + g->fat_sectors) * FATFS_SECTOR,
			  "the second FAT");
	free(fat);
	return ret;
}

static int write_reserved(struct fat_ctx *c)
{
	uint8_t bs[FATFS_SECTOR], info[FATFS_SECTOR];
	uint32_t hidden = (uint32_t)(c->k->offset / FATFS_SECTOR);
	int ret;

	fatfs_boot_sector(&c->g, bs, c->label, c->fp->volume_id, hidden);
	ret = put(c, bs, sizeof(bs), 0, "the boot sector");
	if (ret || c->g.bits != 32)
		return ret;
	fatfs_fsinfo(info, (uint32_t)(c->g.clusters - c->used), (uint32_t)(c->used + 2));
	ret = put(c, info, sizeof(info), FATFS_SECTOR, "the FSInfo sector");
	if (!ret)
		ret = put(c, bs, sizeof(bs), FATFS_BACKUP_BOOT * FATFS_SECTOR, "the backup boot sector");
	if (!ret)
		ret = put(c, info, sizeof(info), (FATFS_BACKUP_BOOT + 1) * FATFS_SECTOR,
			  "the backup FSInfo sector");
	return ret;
}

/* Directory `i`'s entries into `out` (zeroed, large enough): ".", "..", or the label, then kids. */
static void encode_dir(const struct fat_ctx *c, size_t i, uint8_t *out)
{
	const struct fat_node *d = &c->v[i];
	struct fatdir_entry e = { .attr = FATDIR_ATTR_DIR, .mtime = c->t->sde };
	size_t j;

	if (i) {
		memcpy(e.name, ".          ", 11);
		e.cluster = d->first;
		out += fatdir_encode(out, &e) * FATDIR_ENTRY;
		memcpy(e.name, "..         ", 11);
		e.cluster = d->parent ? c->v[d->parent].first : 0;
		out += fatdir_encode(out, &e) * FATDIR_ENTRY;
	} else if (c->has_label) {
		memcpy(e.name, c->label, 11);
		e.attr = FATDIR_ATTR_VOLUME;
		out += fatdir_encode(out, &e) * FATDIR_ENTRY;
	}
	for (j = 0; j < d->nkids; j++) {
		const struct fat_node *k = &c->v[c->kids[d->kid0 + j]];

		memcpy(e.name, k->sname, 11);
		e.lname = k->lname;
		e.llen = k->llen;
		e.attr = k->dir ? FATDIR_ATTR_DIR : FATDIR_ATTR_ARCHIVE;
		e.cluster = k->first;
		e.size = k->dir ? 0 : (uint32_t)k->size;
		e.mtime = k->dir ? c->t->sde : c->t->v[k->src].mtime;
		out += fatdir_encode(out, &e) * FATDIR_ENTRY;
	}
}

static int write_dir(struct fat_ctx *c, size_t i)
{
	const struct fatfs *g = &c->g;
	int root_area = !i && g->bits != 32;
	size_t bytes = root_area ? (size_t)g->root_sectors * FATFS_SECTOR
				 : (size_t)c->v[i].clusters * g->cluster_bytes;
	uint64_t off = root_area ? ((uint64_t)g->reserved + 2ull * g->fat_sectors) * FATFS_SECTOR
				 : fatfs_cluster_offset(g, c->v[i].first);
	uint8_t *buf = xcalloc(1, bytes);
	int ret;

	encode_dir(c, i, buf);
	ret = sink_pwrite(c->k, buf, bytes, off);
	if (ret)
		log_error("cannot write the directory '%s' into '%s': %s", path_of(c, i),
			  c->k->name, strerror(-ret));
	free(buf);
	return ret;
}

/* Bytes [from, from + len) of `fd` to `dst` from the sink's start: by the kernel when it can. */
static int copy_range(struct fat_ctx *c, int fd, uint64_t from, uint64_t len, uint64_t dst,
		      const char *path)
{
	loff_t src = (loff_t)from, out = (loff_t)(c->k->offset + dst);
	size_t n;
	ssize_t got;
	int ret = 0;

	while (len && !ret) {
		n = len < COPY_CHUNK ? (size_t)len : COPY_CHUNK;
		got = c->kernel_copy ? copy_file_range(fd, &src, c->k->fd, &out, n, 0) : -1;
		if (got < 0 && c->kernel_copy && errno != EXDEV && errno != EINVAL &&
		    errno != ENOSYS && errno != EOPNOTSUPP)
			return log_errno(-errno, "cannot copy '%s' into '%s': %m", path, c->k->name);
		if (got < 0) {
			c->kernel_copy = 0;
			got = pread(fd, c->buf, n, src);
			if (got < 0)
				return log_errno(-errno, "cannot read '%s': %m", path);
			if (got > 0 && (ret = sink_pwrite(c->k, c->buf, (size_t)got,
							  (uint64_t)out - c->k->offset)))
				return log_errno(ret, "cannot write '%s' into '%s': %m", path,
						 c->k->name);
			src += got;
			out += got;
		}
		if (got == 0 && c->kernel_copy) {
			c->kernel_copy = 0; /* some filesystems say 0 for "not here": read to know */
			continue;
		}
		if (got == 0)
			return log_errno(-MKI_E_IMAGE, "'%s' shrank while the FAT filesystem was "
					 "written: nothing may change the tree now", path);
		log_progress_add(&c->pr, (uint64_t)got);
		len -= (uint64_t)got;
		if (err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	return ret;
}

/* Only the data ranges of a sparse file: its holes read as the zeros the sink begins with. */
static int copy_file(struct fat_ctx *c, size_t i)
{
	const struct fat_node *v = &c->v[i];
	const char *path = c->t->v[v->src].e->path;
	uint64_t dst = fatfs_cluster_offset(&c->g, v->first);
	off_t pos = 0, data, hole;
	struct stat st;
	int fd = imgtree_open(c->t, v->src), ret = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || (uint64_t)st.st_size != v->size) {
		ret = log_errno(-MKI_E_IMAGE, "'%s' changed while the FAT filesystem was written: "
				"nothing may change the tree now", path);
		goto out;
	}
	while (!ret && (uint64_t)pos < v->size) {
		data = lseek(fd, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? (off_t)v->size : lseek(fd, data, SEEK_HOLE);
		if (data < 0)
			data = pos; /* no SEEK_DATA here: the whole file is data */
		if (hole < 0 || (uint64_t)hole > v->size)
			hole = (off_t)v->size;
		ret = copy_range(c, fd, (uint64_t)data, (uint64_t)(hole - data),
				 dst + (uint64_t)data, path);
		pos = hole;
	}
	c->unflushed += v->size;
	if (c->unflushed >= WRITEBACK_BYTES) {
		sink_writeback(c->k);
		c->unflushed = 0;
	}
out:
	close(fd);
	return ret;
}

static int populate(struct fat_ctx *c)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < c->n && !ret; i++) {
		if (c->v[i].dir)
			ret = write_dir(c, i);
		else if (c->v[i].size)
			ret = copy_file(c, i);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	return ret;
}

int fat_write(const struct imgtree *t, const struct fat_params *fp, struct sink *k)
{
	struct fat_ctx c = { .t = t, .fp = fp, .k = k, .kernel_copy = 1 };
	uint64_t bytes = 0;
	double t0 = log_now();
	int ret = scan(&c);

	if (!ret)
		ret = choose_size(&c, &bytes);
	if (!ret)
		ret = fit(&c, bytes, 0); /* the layout for the size chosen */
	if (!ret)
		ret = sink_begin(k, bytes);
	if (ret)
		goto out;
	log_debug("fat: %s, %" PRIu32 " clusters of %" PRIu32 " bytes, %" PRIu64 " used (%.2fs)",
		  fatfs_name(&c.g), c.g.clusters, c.g.cluster_bytes, c.used, log_now() - t0);
	c.buf = xmalloc(COPY_CHUNK);
	ret = write_reserved(&c);
	if (!ret)
		ret = write_fats(&c);
	if (!ret) {
		log_progress_begin(&c.pr, "fat", c.file_bytes, 1);
		ret = populate(&c);
		log_progress_end(&c.pr);
	}
	log_debug("fat: written (%.2fs)", log_now() - t0);
out:
	ctx_release(&c);
	return ret;
}

/* --- format.h's interface ------------------------------------------------------------------- */

static struct fat_params format_params(const struct image_params *p)
{
	return (struct fat_params){ "", p->im->label, p->volume_id, p->im->size };
}

int fat_format_estimate(const struct imgtree *t, const struct image_params *p, uint64_t *bytes)
{
	struct fat_params fp = format_params(p);

	return fat_estimate(t, &fp, bytes);
}

int fat_format_write(const struct imgtree *t, const struct image_params *p, struct sink *k)
{
	struct fat_params fp = format_params(p);

	return fat_write(t, &fp, k);
}
