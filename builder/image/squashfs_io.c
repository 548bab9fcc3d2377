/*
 * libsquashfs writes through a sqfs_file_t: ours writes into a sink (a whole file or a region of
 * a disk, never a path), reads back what it wrote (its block writer and fragment deduplication
 * compare candidates byte by byte) and keeps a region's bytes past a truncation zero, so the
 * partition hashes the same whatever the library wrote and took back.
 */
#include "squashfs_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/str.h"

#define ZERO_CHUNK 65536u

/*
 * A write past a region's end is counted, not failed: libsquashfs 1.2 leaks the blocks in flight
 * when a write fails, so the writer lets it finish (nothing lands past the region) and then
 * refuses the image, which its overflow flag says does not fit.
 */
static int io_write(sqfs_file_t *f, sqfs_u64 off, const void *buf, size_t n)
{
	struct squashfs_io *io = (struct squashfs_io *)f;
	int ret = sink_pwrite(io->k, buf, n, off);

	if (ret == -EFBIG) {
		io->overflow = 1;
		ret = 0;
	}
	if (ret) {
		if (!io->err)
			io->err = ret;
		return SQFS_ERROR_IO;
	}
	if (off + n > io->size)
		io->size = off + n;
	return 0;
}

/* What was written; past a region's end (written nowhere, see io_write) zeros. */
static int io_read(sqfs_file_t *f, sqfs_u64 off, void *buf, size_t n)
{
	struct squashfs_io *io = (struct squashfs_io *)f;
	uint64_t len = io->k->length;
	size_t done = 0;
	ssize_t got;

	if (off > io->size || n > io->size - off)
		return SQFS_ERROR_OUT_OF_BOUNDS;
	if (len && off + n > len) {
		size_t keep = off < len ? (size_t)(len - off) : 0;

		memset((char *)buf + keep, 0, n - keep);
		n = keep;
	}
	while (done < n) {
		got = pread(io->k->fd, (char *)buf + done, n - done,
			    (off_t)(io->k->offset + off + done));
		if (got <= 0) {
			if (!io->err)
				io->err = got ? -errno : -EIO;
			return SQFS_ERROR_IO;
		}
		done += (size_t)got;
	}
	return 0;
}

static sqfs_u64 io_get_size(const sqfs_file_t *f)
{
	return ((const struct squashfs_io *)f)->size;
}

/* Bytes given back read as zeros again: a whole file is cut, a region's bytes are cleared. */
static int io_truncate(sqfs_file_t *f, sqfs_u64 size)
{
	struct squashfs_io *io = (struct squashfs_io *)f;
	static const uint8_t zero[ZERO_CHUNK];
	uint64_t at = size;
	int ret = 0;

	if (io->k->output && size <= io->size) {
		if (ftruncate(io->k->fd, (off_t)size))
			ret = -errno;
	} else {
		uint64_t end = io->k->length && io->k->length < io->size ? io->k->length : io->size;

		for (; !ret && at < end; at += ZERO_CHUNK)
			ret = sink_pwrite(io->k, zero, end - at < ZERO_CHUNK ?
					  (size_t)(end - at) : ZERO_CHUNK, at);
	}
	if (ret) {
		if (!io->err)
			io->err = ret;
		return SQFS_ERROR_IO;
	}
	io->size = size;
	return 0;
}

static void io_destroy(sqfs_object_t *o)
{
	(void)o; /* embedded in its owner's state */
}

void squashfs_io_init(struct squashfs_io *io, struct sink *k)
{
	memset(io, 0, sizeof(*io));
	io->base.base.destroy = io_destroy;
	io->base.read_at = io_read;
	io->base.write_at = io_write;
	io->base.get_size = io_get_size;
	io->base.truncate = io_truncate;
	io->k = k;
}

/* ---- compressors ---------------------------------------------------------------------------- */

/*
 * Around libsquashfs's compressor (or none, for compression = "none"): a block that does not
 * get smaller is stored as it is. libsquashfs 1.2's metadata writer keeps a "compressed" block
 * that grew (lz4 makes 5 bytes of a 4-byte id table), which unsquashfs refuses to read.
 */
struct wrap {
	sqfs_compressor_t base;
	sqfs_compressor_t *inner; /* owned; NULL: store */
	int uncompress;
};

static void wrap_get_configuration(const sqfs_compressor_t *c, sqfs_compressor_config_t *cfg)
{
	const struct wrap *w = (const struct wrap *)c;

	if (w->inner) {
		w->inner->get_configuration(w->inner, cfg);
		return;
	}
	memset(cfg, 0, sizeof(*cfg));
	cfg->id = SQFS_COMP_GZIP;
	cfg->block_size = SQFS_DEFAULT_BLOCK_SIZE;
}

static int wrap_write_options(sqfs_compressor_t *c, sqfs_file_t *f)
{
	struct wrap *w = (struct wrap *)c;

	return w->inner ? w->inner->write_options(w->inner, f) : 0;
}

static int wrap_read_options(sqfs_compressor_t *c, sqfs_file_t *f)
{
	struct wrap *w = (struct wrap *)c;

	return w->inner ? w->inner->read_options(w->inner, f) : 0;
}

/* 0: "not smaller", so the caller stores the block as it is and flags it uncompressed. */
static sqfs_s32 wrap_block(sqfs_compressor_t *c, const sqfs_u8 *in, sqfs_u32 size, sqfs_u8 *out,
			   sqfs_u32 outsize)
{
	struct wrap *w = (struct wrap *)c;
	sqfs_s32 ret;

	if (w->inner) {
		ret = w->inner->do_block(w->inner, in, size, out, outsize);
		return !w->uncompress && ret >= (sqfs_s32)size ? 0 : ret;
	}
	if (!w->uncompress)
		return 0;
	if (size > outsize)
		return SQFS_ERROR_OVERFLOW;
	memcpy(out, in, size);
	return (sqfs_s32)size;
}

static void wrap_destroy(sqfs_object_t *o)
{
	struct wrap *w = (struct wrap *)o;

	sqfs_destroy(w->inner);
	free(w);
}

static sqfs_object_t *wrap_copy(const sqfs_object_t *o)
{
	const struct wrap *w = (const struct wrap *)o;
	struct wrap *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	memcpy(c, w, sizeof(*c));
	c->inner = w->inner ? sqfs_copy(w->inner) : NULL;
	if (w->inner && !c->inner) {
		free(c);
		return NULL;
	}
	return (sqfs_object_t *)c;
}

sqfs_compressor_t *squashfs_io_compressor(sqfs_compressor_t *inner, int uncompress)
{
	struct wrap *w = calloc(1, sizeof(*w));

	if (!w) {
		sqfs_destroy(inner);
		return NULL;
	}
	w->base.base.destroy = wrap_destroy;
	w->base.base.copy = wrap_copy;
	w->base.get_configuration = wrap_get_configuration;
	w->base.write_options = wrap_write_options;
	w->base.read_options = wrap_read_options;
	w->base.do_block = wrap_block;
	w->inner = inner;
	w->uncompress = uncompress;
	return &w->base;
}
