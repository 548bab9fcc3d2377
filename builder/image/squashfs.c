/*
 * The squashfs format, in libsquashfs's order: the superblock's place and the compressor's
 * options; every regular file's data through the block processor (path order; its inode grows
 * as blocks land); then the inodes, directories and tables (squashfs_tree.c); the superblock;
 * zeros to the next 4096 bytes.
 */
#include "squashfs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/workpool.h"
#include "lib/str.h"
#include "squashfs_ctx.h"

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
int squashfs_fail(struct squashfs_ctx *w, int sq, const char *what)
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

uint32_t squashfs_clamp_time(int64_t t)
{
	return t < 0 ? 0 : t > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static int open_compressors(struct squashfs_ctx *w, int comp, unsigned level)
{
	sqfs_compressor_config_t cfg;
	sqfs_compressor_t *c = NULL, *u = NULL;
	int ret = 0;

	if (comp != FS_COMP_NONE) {
		ret = sqfs_compressor_config_init(&cfg, comps[comp].id, BLOCK_SIZE, 0);
		if (level)
			cfg.level = level;
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
static int open_writers(struct squashfs_ctx *w, int comp, unsigned level, unsigned threads)
{
	sqfs_block_processor_desc_t d = { .size = sizeof(d), .max_block_size = BLOCK_SIZE };
	int ret = open_compressors(w, comp, level);

	if (!ret)
		ret = sqfs_super_init(&w->super, BLOCK_SIZE, squashfs_clamp_time(w->t->sde),
				      comps[comp].id);
	if (!ret)
		ret = sqfs_super_write(&w->super, &w->io.base);
	if (!ret && (ret = w->cmp->write_options(w->cmp, &w->io.base)) > 0) {
		w->super.flags |= SQFS_FLAG_COMPRESSOR_OPTIONS;
		ret = 0;
	}
	if (ret)
		return squashfs_fail(w, ret, "start the compressor");
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
		return squashfs_fail(w, SQFS_ERROR_ALLOC, "start");
	d.num_workers = threads;
	d.max_backlog = 8 * (threads ? threads : 1);
	d.cmp = w->cmp;
	d.wr = w->bw;
	d.tbl = w->frag;
	d.file = &w->io.base;  /* fragments deduplicated only after a byte-by-byte comparison */
	d.uncmp = w->uncmp;
	ret = sqfs_block_processor_create_ex(&d, &w->proc);
	return ret ? squashfs_fail(w, ret, "start the block processor") : 0;
}

/* ---- data ----------------------------------------------------------------------------------- */

static int append(struct squashfs_ctx *w, const void *data, size_t n)
{
	int ret = sqfs_block_processor_append(w->proc, data, n);

	return ret ? squashfs_fail(w, ret, "write file data") : 0;
}

/*
 * [from, to) of the file: data as read; a hole as zeros from memory, which the block processor
 * stores as sparse blocks like the zero blocks it finds in the data.
 */
static int feed_range(struct squashfs_ctx *w, int fd, off_t from, off_t to, int hole,
		      const char *path)
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

static int feed_file(struct squashfs_ctx *w, int fd, off_t size, const char *path)
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

static int add_data(struct squashfs_ctx *w, size_t i)
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
		ret = squashfs_fail(w, ret, "start a file");
		goto out;
	}
	ret = feed_file(w, fd, st.st_size, path);
	if (!ret && (ret = sqfs_block_processor_end_file(w->proc)))
		ret = squashfs_fail(w, ret, "end a file");
out:
	close(fd);
	return ret;
}

static int write_data(struct squashfs_ctx *w)
{
	size_t i;
	int ret = 0, fin;

	for (i = 0; !ret && !w->io.overflow && i < w->t->n; i++) {
		if (w->t->v[i].e->type == MF_REG)
			ret = add_data(w, i);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	/* the blocks in flight are drained whatever happened: libsquashfs frees them only so */
	fin = sqfs_block_processor_finish(w->proc);
	if (!ret && (fin || w->io.overflow))
		ret = squashfs_fail(w, fin, "write the data blocks");
	return ret;
}

/* bytes_used into the superblock, then zeros to the next 4096 bytes. */
static int finish(struct squashfs_ctx *w)
{
	static const uint8_t zero[DEV_BLOCK];
	uint64_t pad;
	int ret;

	w->super.bytes_used = w->io.size;
	ret = sqfs_super_write(&w->super, &w->io.base);
	pad = (DEV_BLOCK - w->io.size % DEV_BLOCK) % DEV_BLOCK;
	if (!ret && pad)
		ret = w->io.base.write_at(&w->io.base, w->io.size, zero, (size_t)pad);
	return ret || w->io.overflow ? squashfs_fail(w, ret, "finish") : 0;
}

static void ctx_release(struct squashfs_ctx *w)
{
	size_t i;

	sqfs_destroy(w->proc); /* first: it may still hold the file inodes and feed the writers */
	for (i = 0; w->file && i < w->t->n; i++)
		free(w->file[i]);
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
	struct squashfs_ctx w = { .t = t, .name = k->output ? k->output : k->name };
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
	ret = open_writers(&w, comp, p->level, threads);
	if (!ret)
		ret = write_data(&w);
	log_debug("squashfs: data written, %" PRIu64 " bytes (%.2fs)", w.io.size, log_now() - t0);
	if (!ret)
		ret = squashfs_tree_write(&w);
	if (!ret)
		ret = finish(&w);
	log_debug("squashfs: %s, %u inodes, %" PRIu64 " bytes (%.2fs)", comps[comp].name,
		  w.super.inode_count, w.io.size, log_now() - t0);
	ctx_release(&w);
	return ret;
}

/* Every usable CPU, up to MAX_THREADS: the bytes do not depend on it. */
int squashfs_write(const struct imgtree *t, const struct image_params *p, struct sink *k)
{
	return squashfs_write_threads(t, p, k, workpool_threads(MAX_THREADS, MAX_THREADS));
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

int squashfs_size_back(int fd, uint64_t offset, const char *file, uint64_t *bytes)
{
	uint8_t sb[96];

	if (pread(fd, sb, sizeof(sb), (off_t)offset) != (ssize_t)sizeof(sb) ||
	    squashfs_size(sb, bytes))
		return log_errno(-MKI_E_IMAGE, "cannot read back the squashfs in '%s'", file);
	return 0;
}
