/*
 * The squashfs format, in libsquashfs's order: the superblock's place and the compressor's
 * options; every regular file's data through the block processor (path order; its inode grows
 * as blocks land); then the inode table - every other inode in path order, the directories
 * deepest first (reverse path order puts every subdirectory before its parent, so each
 * directory's entries know their inodes) - and the directory table; the fragment, id and xattr
 * tables; the superblock; zeros to the next 4096 bytes. Inode numbers are fixed before anything
 * is written: the non-directories 1..M in path order, the directories after them, the root last.
 */
#include "squashfs.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqfs/block_processor.h>
#include <sqfs/block_writer.h>
#include <sqfs/dir_writer.h>
#include <sqfs/error.h>
#include <sqfs/frag_table.h>
#include <sqfs/id_table.h>
#include <sqfs/inode.h>
#include <sqfs/meta_writer.h>
#include <sqfs/super.h>
#include <sqfs/xattr_writer.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"
#include "squashfs_internal.h"

#define BLOCK_SIZE SQFS_DEFAULT_BLOCK_SIZE /* 128 KiB */
#define DEV_BLOCK 4096u                     /* the image is padded to it; dm-verity's block */
#define MAX_THREADS 16u
#define NO_XATTR 0xffffffffu

struct sqw {
	const struct imgtree *t;
	const char *name;               /* what messages call the output */
	struct squashfs_io io;
	sqfs_compressor_t *cmp, *uncmp;
	sqfs_super_t super;
	sqfs_block_writer_t *bw;
	sqfs_frag_table_t *frag;
	sqfs_block_processor_t *proc;
	sqfs_id_table_t *ids;
	sqfs_xattr_writer_t *xw;
	sqfs_meta_writer_t *im, *dm;    /* the inode table; the directory table (kept in memory) */
	sqfs_dir_writer_t *dw;
	sqfs_inode_generic_t **file;    /* per node: a regular file's inode, the processor's */
	uint32_t *num;                  /* per node carrying an inode: its number */
	uint64_t *ref;                  /* per node carrying an inode: where it is written */
	uint8_t *buf;
};

static const struct {
	SQFS_COMPRESSOR id;
	const char *name;
} comps[] = {
	[FS_COMP_ZSTD] = { SQFS_COMP_ZSTD, "zstd" },
	[FS_COMP_XZ] = { SQFS_COMP_XZ, "xz" },
	[FS_COMP_LZ4] = { SQFS_COMP_LZ4, "lz4" },
	[FS_COMP_GZIP] = { SQFS_COMP_GZIP, "gzip" },
	[FS_COMP_NONE] = { SQFS_COMP_GZIP, "none" },
};

/* A libsquashfs failure: the sink's own errno when it was the cause, else the library's word. */
static int fail(struct sqw *w, int sq, const char *what)
{
	if (w->io.overflow) {
		log_error("squashfs '%s': the image does not fit its region of %" PRIu64 " bytes",
			  w->name, w->io.k->length);
		return -MKI_E_NOSPACE;
	}
	if (w->io.err)
		return log_errno(w->io.err, "squashfs '%s': cannot %s: %m", w->name, what);
	log_error("squashfs '%s': cannot %s: libsquashfs error %d", w->name, what, sq);
	return sq == SQFS_ERROR_ALLOC ? -ENOMEM : -MKI_E_IMAGE;
}

static uint32_t clamp_time(int64_t t)
{
	return t < 0 ? 0 : t > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static int open_compressors(struct sqw *w, int comp)
{
	sqfs_compressor_config_t cfg;
	sqfs_compressor_t *c = NULL, *u = NULL;
	int ret = 0;

	if (comp != FS_COMP_NONE) {
		ret = sqfs_compressor_config_init(&cfg, comps[comp].id, BLOCK_SIZE, 0);
		if (!ret)
			ret = sqfs_compressor_create(&cfg, &c);
		cfg.flags |= SQFS_COMP_FLAG_UNCOMPRESS;
		if (!ret)
			ret = sqfs_compressor_create(&cfg, &u);
		if (ret) {
			sqfs_destroy(c);
			return ret;
		}
	}
	w->cmp = squashfs_io_compressor(c, 0);
	w->uncmp = squashfs_io_compressor(u, 1);
	return w->cmp && w->uncmp ? 0 : SQFS_ERROR_ALLOC;
}

/* Everything up to the data: the superblock's place, the compressor's options, the writers. */
static int open_writers(struct sqw *w, int comp, unsigned threads)
{
	sqfs_block_processor_desc_t d = { .size = sizeof(d), .max_block_size = BLOCK_SIZE };
	int ret = open_compressors(w, comp);

	if (!ret)
		ret = sqfs_super_init(&w->super, BLOCK_SIZE, clamp_time(w->t->sde), comps[comp].id);
	if (!ret)
		ret = sqfs_super_write(&w->super, &w->io.base);
	if (!ret && (ret = w->cmp->write_options(w->cmp, &w->io.base)) > 0) {
		w->super.flags |= SQFS_FLAG_COMPRESSOR_OPTIONS;
		ret = 0;
	}
	if (ret)
		return fail(w, ret, comp == FS_COMP_NONE ? "start" : "start the compressor");
	if (comp == FS_COMP_NONE)
		w->super.flags |= SQFS_FLAG_UNCOMPRESSED_INODES | SQFS_FLAG_UNCOMPRESSED_DATA |
				  SQFS_FLAG_UNCOMPRESSED_FRAGMENTS | SQFS_FLAG_UNCOMPRESSED_IDS |
				  SQFS_FLAG_UNCOMPRESSED_XATTRS;
	w->bw = sqfs_block_writer_create(&w->io.base, DEV_BLOCK, 0);
	w->frag = sqfs_frag_table_create(0);
	w->ids = sqfs_id_table_create(0);
	w->xw = sqfs_xattr_writer_create(0);
	w->im = sqfs_meta_writer_create(&w->io.base, w->cmp, 0);
	w->dm = sqfs_meta_writer_create(&w->io.base, w->cmp, SQFS_META_WRITER_KEEP_IN_MEMORY);
	w->dw = w->dm ? sqfs_dir_writer_create(w->dm, 0) : NULL;
	if (!w->bw || !w->frag || !w->ids || !w->xw || !w->im || !w->dw)
		return fail(w, SQFS_ERROR_ALLOC, "start");
	d.num_workers = threads;
	d.max_backlog = 8 * (threads ? threads : 1);
	d.cmp = w->cmp;
	d.wr = w->bw;
	d.tbl = w->frag;
	d.file = &w->io.base;  /* fragments deduplicated only after a byte-by-byte comparison */
	d.uncmp = w->uncmp;
	ret = sqfs_block_processor_create_ex(&d, &w->proc);
	return ret ? fail(w, ret, "start the block processor") : 0;
}

/* ---- data ----------------------------------------------------------------------------------- */

static int append(struct sqw *w, const void *data, size_t n)
{
	int ret = sqfs_block_processor_append(w->proc, data, n);

	return ret ? fail(w, ret, "write file data") : 0;
}

/*
 * [from, to) of the file: data as read; a hole as zeros from memory, which the block processor
 * stores as sparse blocks like the zero blocks it finds in the data.
 */
static int feed_range(struct sqw *w, int fd, off_t from, off_t to, int hole, const char *path)
{
	ssize_t got;
	size_t want;
	int ret = 0;

	for (; !ret && from < to; from += (off_t)want) {
		want = to - from < BLOCK_SIZE ? (size_t)(to - from) : BLOCK_SIZE;
		if (hole) {
			memset(w->buf, 0, want);
		} else {
			got = pread(fd, w->buf, want, from);
			if (got < 0)
				return log_errno(-errno, "cannot read '%s': %m", path);
			if ((size_t)got < want) /* the file shrank: keep the size it had */
				memset(w->buf + got, 0, want - (size_t)got);
		}
		ret = append(w, w->buf, want);
	}
	return ret;
}

static int feed_file(struct sqw *w, int fd, off_t size, const char *path)
{
	off_t at = 0, next;
	int ret = 0, hole;

	while (!ret && at < size) {
		next = lseek(fd, at, SEEK_DATA);
		hole = next != at;
		if (next < 0 || next > size)
			next = size; /* ENXIO: a hole to the end */
		if (!hole) {
			next = lseek(fd, at, SEEK_HOLE);
			if (next < 0 || next > size)
				next = size;
		}
		ret = feed_range(w, fd, at, next, hole, path);
		at = next;
	}
	return ret;
}

static int add_data(struct sqw *w, size_t i)
{
	const char *path = w->t->v[i].e->path;
	struct stat st;
	int fd = imgtree_open(w->t, i), ret;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		ret = log_errno(-errno, "cannot read '%s': %m", path);
		goto out;
	}
	ret = sqfs_block_processor_begin_file(w->proc, &w->file[i], NULL, 0);
	if (ret) {
		ret = fail(w, ret, "start a file");
		goto out;
	}
	ret = feed_file(w, fd, st.st_size, path);
	if (!ret && (ret = sqfs_block_processor_end_file(w->proc)))
		ret = fail(w, ret, "end a file");
out:
	close(fd);
	return ret;
}

static int write_data(struct sqw *w)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < w->t->n; i++) {
		if (w->t->v[i].e->type == MF_REG)
			ret = add_data(w, i);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	if (!ret && (ret = sqfs_block_processor_finish(w->proc)))
		ret = fail(w, ret, "write the data blocks");
	return ret;
}

/* ---- inodes and directories ----------------------------------------------------------------- */

static uint16_t type_bits(char type)
{
	switch (type) {
	case MF_DIR: return S_IFDIR;
	case MF_SYMLINK: return S_IFLNK;
	case MF_CHR: return S_IFCHR;
	case MF_BLK: return S_IFBLK;
	case MF_FIFO: return S_IFIFO;
	case MF_SOCK: return S_IFSOCK;
	default: return S_IFREG;
	}
}

/* Non-directories 1..M in path order, directories M+1..N deepest first: the root is N. */
static void number_inodes(struct sqw *w)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < w->t->n; i++)
		if (w->t->v[i].e->type != MF_DIR && w->t->v[i].e->type != MF_HARDLINK)
			w->num[i] = ++n;
	for (i = w->t->n; i-- > 0;)
		if (w->t->v[i].e->type == MF_DIR)
			w->num[i] = ++n;
	w->super.inode_count = n;
}

static int set_xattrs(struct sqw *w, size_t i, uint32_t *idx)
{
	const struct manifest_entry *e = w->t->v[i].e;
	size_t k;
	int ret;

	*idx = NO_XATTR;
	if (!e->n_xattrs)
		return 0;
	ret = sqfs_xattr_writer_begin(w->xw, 0);
	for (k = 0; !ret && k < e->n_xattrs; k++) {
		ret = sqfs_xattr_writer_add(w->xw, e->xattrs[k].name, e->xattrs[k].value,
					    e->xattrs[k].len);
		if (ret == SQFS_ERROR_UNSUPPORTED) {
			log_error("'/%s' has the extended attribute '%s', which squashfs "
				  "cannot hold (only user., trusted. and security.): remove it "
				  "in a hook or write ext4", e->path, e->xattrs[k].name);
			return -MKI_E_IMAGE;
		}
	}
	if (!ret)
		ret = sqfs_xattr_writer_end(w->xw, idx);
	return ret ? fail(w, ret, "record extended attributes") : 0;
}

/* The inode of a node that is neither a directory nor a regular file. */
static sqfs_inode_generic_t *other_inode(const struct manifest_entry *e)
{
	size_t len = e->type == MF_SYMLINK ? strlen(e->target) : 0;
	sqfs_inode_generic_t *in = xcalloc(1, sizeof(*in) + len);

	switch (e->type) {
	case MF_SYMLINK:
		in->base.type = SQFS_INODE_SLINK;
		in->data.slink.nlink = 1;
		in->data.slink.target_size = (sqfs_u32)len;
		in->payload_bytes_available = in->payload_bytes_used = (sqfs_u32)len;
		memcpy(in->extra, e->target, len);
		break;
	case MF_CHR:
	case MF_BLK:
		in->base.type = e->type == MF_CHR ? SQFS_INODE_CDEV : SQFS_INODE_BDEV;
		in->data.dev.nlink = 1;
		/* the kernel's new_encode_dev: minor's low byte, major, minor's high bits */
		in->data.dev.devno = (e->minor & 0xff) | (e->major & 0xfff) << 8 |
				     (e->minor & ~0xffu) << 12;
		break;
	default:
		in->base.type = e->type == MF_FIFO ? SQFS_INODE_FIFO : SQFS_INODE_SOCKET;
		in->data.ipc.nlink = 1;
		break;
	}
	return in;
}

static void set_nlink(sqfs_inode_generic_t *in, uint32_t nlink)
{
	switch (in->base.type) {
	case SQFS_INODE_EXT_FILE: in->data.file_ext.nlink = nlink; break;
	case SQFS_INODE_EXT_SLINK: in->data.slink_ext.nlink = nlink; break;
	case SQFS_INODE_EXT_BDEV:
	case SQFS_INODE_EXT_CDEV: in->data.dev_ext.nlink = nlink; break;
	case SQFS_INODE_EXT_FIFO:
	case SQFS_INODE_EXT_SOCKET: in->data.ipc_ext.nlink = nlink; break;
	case SQFS_INODE_DIR: in->data.dir.nlink = nlink; break;
	case SQFS_INODE_EXT_DIR: in->data.dir_ext.nlink = nlink; break;
	case SQFS_INODE_SLINK: in->data.slink.nlink = nlink; break;
	case SQFS_INODE_BDEV:
	case SQFS_INODE_CDEV: in->data.dev.nlink = nlink; break;
	case SQFS_INODE_FIFO:
	case SQFS_INODE_SOCKET: in->data.ipc.nlink = nlink; break;
	default: break; /* a basic file has none: one with more links was made extended */
	}
}

/* Owner, mode, time, number, links and xattrs of node i into `in`, then `in` to the table. */
static int write_inode(struct sqw *w, size_t i, sqfs_inode_generic_t *in, uint32_t nlink)
{
	const struct manifest_entry *e = w->t->v[i].e;
	sqfs_u64 block;
	sqfs_u32 offset, xattr;
	int ret = set_xattrs(w, i, &xattr);

	if (ret)
		return ret;
	if (nlink > 1 && (in->base.type == SQFS_INODE_FILE))
		ret = sqfs_inode_make_extended(in);
	if (!ret && xattr != NO_XATTR)
		ret = sqfs_inode_set_xattr_index(in, xattr);
	set_nlink(in, nlink);
	in->base.mode = (sqfs_u16)(type_bits(e->type) | (e->mode & 07777));
	in->base.mod_time = clamp_time(w->t->v[i].mtime);
	in->base.inode_number = w->num[i];
	if (!ret)
		ret = sqfs_id_table_id_to_index(w->ids, e->uid, &in->base.uid_idx);
	if (!ret)
		ret = sqfs_id_table_id_to_index(w->ids, e->gid, &in->base.gid_idx);
	sqfs_meta_writer_get_position(w->im, &block, &offset);
	w->ref[i] = block << 16 | offset;
	if (!ret)
		ret = sqfs_meta_writer_write_inode(w->im, in);
	return ret ? fail(w, ret, "write an inode") : 0;
}

static int write_others(struct sqw *w)
{
	sqfs_inode_generic_t *in;
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < w->t->n; i++) {
		char type = w->t->v[i].e->type;

		if (type == MF_DIR || type == MF_HARDLINK)
			continue;
		in = type == MF_REG ? w->file[i] : other_inode(w->t->v[i].e);
		w->file[i] = NULL;
		ret = write_inode(w, i, in, w->t->v[i].nlink);
		free(in);
	}
	return ret;
}

/* The children of every directory, in path order (name order within a directory). */
struct kids {
	size_t *parent, *head, *next, *tail;
};

#define NONE ((size_t)-1)

static void kids_init(struct kids *c, const struct imgtree *t)
{
	size_t i, p;

	c->parent = xcalloc(t->n, sizeof(size_t));
	c->head = xmalloc(t->n * sizeof(size_t));
	c->next = xmalloc(t->n * sizeof(size_t));
	c->tail = xmalloc(t->n * sizeof(size_t));
	memset(c->head, 0xff, t->n * sizeof(size_t));
	memset(c->next, 0xff, t->n * sizeof(size_t));
	for (i = 1; i < t->n; i++) {
		p = c->parent[i] = imgtree_parent(t, i);
		if (c->head[p] == NONE)
			c->head[p] = i;
		else
			c->next[c->tail[p]] = i;
		c->tail[p] = i;
	}
}

static void kids_release(struct kids *c)
{
	free(c->parent);
	free(c->head);
	free(c->next);
	free(c->tail);
}

/* Directory d's entries, then its inode: nlink 2 + its subdirectories. */
static int write_dir(struct sqw *w, size_t d, const struct kids *c)
{
	const struct imgtree *t = w->t;
	sqfs_inode_generic_t *in;
	uint32_t subdirs = 0;
	size_t i, o;
	uint16_t mode;
	int ret = sqfs_dir_writer_begin(w->dw, 0);

	for (i = c->head[d]; !ret && i != NONE; i = c->next[i]) {
		o = t->v[i].e->type == MF_HARDLINK ? t->v[i].link : i;
		subdirs += t->v[i].e->type == MF_DIR;
		mode = type_bits(t->v[o].e->type) | (t->v[o].e->mode & 07777);
		ret = sqfs_dir_writer_add_entry(w->dw, imgtree_name(t, i), w->num[o], w->ref[o],
						mode);
	}
	if (!ret)
		ret = sqfs_dir_writer_end(w->dw);
	if (ret)
		return fail(w, ret, "write a directory");
	in = sqfs_dir_writer_create_inode(w->dw, 0, NO_XATTR,
					  d ? w->num[c->parent[d]] : w->super.inode_count + 1);
	if (!in)
		return fail(w, SQFS_ERROR_ALLOC, "write a directory");
	ret = write_inode(w, d, in, 2 + subdirs);
	free(in);
	return ret;
}

static int write_tables(struct sqw *w)
{
	struct kids c;
	size_t i;
	int ret;

	w->super.inode_table_start = w->io.size;
	ret = write_others(w);
	kids_init(&c, w->t);
	for (i = w->t->n; !ret && i-- > 0;) {
		if (w->t->v[i].e->type == MF_DIR)
			ret = write_dir(w, i, &c);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	kids_release(&c);
	if (ret)
		return ret;
	if ((ret = sqfs_meta_writer_flush(w->im)) || (ret = sqfs_meta_writer_flush(w->dm)))
		return fail(w, ret, "write the inode table");
	w->super.root_inode_ref = w->ref[0];
	w->super.directory_table_start = w->io.size;
	ret = sqfs_meta_write_write_to_file(w->dm);
	if (!ret)
		ret = sqfs_frag_table_write(w->frag, &w->io.base, &w->super, w->cmp);
	if (!ret)
		ret = sqfs_id_table_write(w->ids, &w->io.base, &w->super, w->cmp);
	if (!ret)
		ret = sqfs_xattr_writer_flush(w->xw, &w->io.base, &w->super, w->cmp);
	return ret ? fail(w, ret, "write the tables") : 0;
}

/* bytes_used into the superblock, then zeros to the next 4096 bytes. */
static int finish(struct sqw *w)
{
	static const uint8_t zero[DEV_BLOCK];
	uint64_t pad;
	int ret;

	w->super.bytes_used = w->io.size;
	ret = sqfs_super_write(&w->super, &w->io.base);
	pad = (DEV_BLOCK - w->io.size % DEV_BLOCK) % DEV_BLOCK;
	if (!ret && pad)
		ret = w->io.base.write_at(&w->io.base, w->io.size, zero, (size_t)pad);
	return ret ? fail(w, ret, "finish") : 0;
}

static void sqw_release(struct sqw *w)
{
	size_t i;

	for (i = 0; w->file && i < w->t->n; i++)
		free(w->file[i]);
	sqfs_destroy(w->proc); /* before the writers and the table it feeds */
	sqfs_destroy(w->dw);
	sqfs_destroy(w->dm);
	sqfs_destroy(w->im);
	sqfs_destroy(w->xw);
	sqfs_destroy(w->ids);
	sqfs_destroy(w->frag);
	sqfs_destroy(w->bw);
	sqfs_destroy(w->uncmp);
	sqfs_destroy(w->cmp);
	free(w->file);
	free(w->num);
	free(w->ref);
	free(w->buf);
}

int squashfs_write_threads(const struct imgtree *t, const struct image_params *p, struct sink *k,
			   unsigned threads)
{
	struct sqw w = { .t = t, .name = k->output ? k->output : k->name };
	int comp = p->im->compression, ret;
	double t0 = log_now();

	if (comp < 0 || comp > FS_COMP_NONE)
		comp = FS_COMP_ZSTD;
	ret = sink_begin(k, 0);
	if (ret)
		return ret;
	squashfs_io_init(&w.io, k);
	w.file = xcalloc(t->n, sizeof(*w.file));
	w.num = xcalloc(t->n, sizeof(*w.num));
	w.ref = xcalloc(t->n, sizeof(*w.ref));
	w.buf = xmalloc(BLOCK_SIZE);
	ret = open_writers(&w, comp, threads);
	if (!ret)
		ret = write_data(&w);
	log_debug("squashfs: data written, %" PRIu64 " bytes (%.2fs)", w.io.size, log_now() - t0);
	number_inodes(&w);
	if (!ret)
		ret = write_tables(&w);
	if (!ret)
		ret = finish(&w);
	log_debug("squashfs: %s, %u inodes, %" PRIu64 " bytes (%.2fs)", comps[comp].name,
		  w.super.inode_count, w.io.size, log_now() - t0);
	sqw_release(&w);
	return ret;
}

static unsigned threads_online(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > (int)MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

int squashfs_write(const struct imgtree *t, const struct image_params *p, struct sink *k)
{
	return squashfs_write_threads(t, p, k, threads_online());
}

/*
 * At most: every file's blocks stored as they are, a block's worth of fragment tail each, and
 * per entry its inode, directory entry, name and xattrs; the tables a fraction of that.
 */
int squashfs_estimate(const struct imgtree *t, const struct image_params *p, uint64_t *bytes)
{
	uint64_t n = 96 + 2 * DEV_BLOCK;
	size_t i, k;

	for (i = 0; i < t->n; i++) {
		const struct manifest_entry *e = t->v[i].e;

		n += 64 + 2 * strlen(imgtree_name(t, i));
		if (e->type == MF_SYMLINK)
			n += strlen(e->target);
		if (e->type == MF_REG)
			n += e->size + (e->size / BLOCK_SIZE + 1) * 4;
		for (k = 0; k < e->n_xattrs; k++)
			n += 16 + strlen(e->xattrs[k].name) + e->xattrs[k].len;
	}
	n += n / 64; /* metadata block headers, the id and fragment tables */
	*bytes = (n + DEV_BLOCK - 1) / DEV_BLOCK * DEV_BLOCK;
	return 0;
}

int squashfs_size(const uint8_t *sb, uint64_t *bytes)
{
	uint64_t used = 0;
	int i;

	if (memcmp(sb, "hsqs", 4) || sb[28] != 4 || sb[30] != 0) /* magic, version 4.0 */
		return -EINVAL;
	for (i = 7; i >= 0; i--)
		used = used << 8 | sb[40 + i];
	*bytes = (used + DEV_BLOCK - 1) / DEV_BLOCK * DEV_BLOCK;
	return 0;
}
