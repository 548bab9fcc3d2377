/*
 * What squashfs.c builds on and only its unit tests use besides it: libsquashfs's file over a
 * sink and a compressor that stores every block as it is.
 */
#ifndef MKI_SQUASHFS_INTERNAL_H
#define MKI_SQUASHFS_INTERNAL_H

#include <sqfs/compressor.h>
#include <sqfs/error.h>
#include <sqfs/io.h>

#include "sink.h"

/* libsquashfs's output: a sink, its length the end of what was written. */
struct squashfs_io {
	sqfs_file_t base;
	struct sink *k;
	uint64_t size;  /* bytes written so far, from the sink's start */
	int overflow;   /* a write went past the sink's region (and was dropped) */
	int err;        /* the first negative errno of a write or read, else 0 */
};

/** Set up `io` to write into `k` (borrowed, begun). */
void squashfs_io_init(struct squashfs_io *io, struct sink *k);
/**
 * `inner` (taken; NULL for compression = "none") behind a compressor that stores a block as it
 * is unless it gets smaller (with `uncompress`, it only decompresses; with no `inner` it copies).
 * NULL when out of memory. With no `inner` its id is gzip's, as mksquashfs writes an
 * uncompressed image.
 */
sqfs_compressor_t *squashfs_io_compressor(sqfs_compressor_t *inner, int uncompress);

#endif
