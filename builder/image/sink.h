/*
 * Where an image goes: a whole output file or a region of a larger one. A whole file is written
 * under a temporary name beside the output, which its owner commits (fsync, rename) or drops
 * (removed); a region (fd, offset, length) belongs to a larger file - a disk image's partition -
 * that its owner commits, and nothing outside it is ever written.
 */
#ifndef MKI_SINK_H
#define MKI_SINK_H

#include <stddef.h>
#include <stdint.h>

struct sink {
	int fd;            /* whole file: -1 until sink_begin; region: borrowed */
	uint64_t offset;   /* the region's first byte in fd (0 for a whole file) */
	uint64_t length;   /* the region's length; 0 for a whole file, which has no bound */
	char *tmp;         /* whole file: the temporary beside `output`; region: NULL */
	char *output;      /* whole file: the final path; region: NULL */
	char *name;        /* what messages call it: the temporary, or the region's name */
	int committed;
};

/** A whole-file sink for `output` (copied): nothing is created before sink_begin. */
void sink_init_file(struct sink *k, const char *output);
/**
 * A sink on `length` bytes of `fd` (borrowed, opened read-write) from `offset`; `name` (copied)
 * is what messages call it.
 */
void sink_init_region(struct sink *k, int fd, uint64_t offset, uint64_t length, const char *name);
/**
 * (Re)start writing an image of `size` bytes (0: a stream of unknown length). A whole file is
 * created (or emptied) and made `size` bytes long, sparse; a region has its first `size` bytes
 * zeroed, so both read as zeros where the writer writes nothing. Returns 0, or a logged
 * -MKI_E_NOSPACE when `size` exceeds the region, or a logged negative errno.
 */
int sink_begin(struct sink *k, uint64_t size);
/**
 * Write all `n` bytes at `off` from the sink's start (short writes are continued). 0, -EFBIG
 * past the end of a region (nothing written), or a negative errno; not logged.
 */
int sink_pwrite(struct sink *k, const void *buf, size_t n, uint64_t off);
/**
 * A path another program (or libext2fs) can open to reach the sink's file: the temporary, or
 * /proc/PID/fd/N for a region. Newly allocated.
 */
char *sink_path(const struct sink *k);
/** Start writing back what was written so far, without waiting (a hint; errors are ignored). */
void sink_writeback(struct sink *k);
/**
 * Whole file: fsync, mode 0666 less the umask, rename over the output (logged on failure); a
 * large output replaced is freed on a thread of its own. Region: nothing, its owner commits the
 * larger file. Returns 0 or a negative errno.
 */
int sink_commit(struct sink *k);
/** Free `k`; a whole file not committed is closed and its temporary removed. */
void sink_release(struct sink *k);

#endif
