/*
 * The digests of a sparse file in one pass: the SHA-256 of the whole file (what sha256sum gives),
 * of byte spans of it (a disk's partitions), and the file's data map in 4 KiB blocks with the
 * SHA-256 of each range (what a block map lists). Each byte that holds data is read once, for
 * every digest at a time; holes, and (when a map is asked) extents allocated but never written
 * (FIEMAP's "unwritten": fallocate, libext2fs's zeroing), are never read: they are zeros, fed
 * from memory to the digests that cover them. A map range covers only blocks that hold data,
 * so a hole costs a map nothing. The whole-file digest and the map's run on threads of their
 * own beside the spans': SHA-256 over a long hole is CPU work no shortcut avoids (each block's
 * state depends on the one before), and the streams then take the time of the longest, not of
 * their sum.
 */
#ifndef MKI_SPARSEHASH_H
#define MKI_SPARSEHASH_H

#include <stddef.h>
#include <stdint.h>

/* The map's unit: bmap-tools' block size on every common file system, whatever the host's is. */
#define SPARSEHASH_BLOCK 4096

/* Bytes [from, to) of the file, and their SHA-256 once hashed. */
struct sparsehash_span {
	uint64_t from, to;
	char sha256[65];
};

/* Blocks first..last (inclusive) hold data; the SHA-256 of their bytes (the last may be short). */
struct sparsehash_range {
	uint64_t first, last;
	char sha256[65];
};

struct sparsehash {
	/* What to compute (set before sparsehash_file). */
	struct sparsehash_span *spans; /* borrowed: in order, not overlapping; sha256 filled */
	size_t n_spans;
	int want_whole, want_map;
	/* What it gave. */
	char whole[65];                /* want_whole: the file's SHA-256, else "" */
	struct sparsehash_range *map;  /* want_map: the data ranges, in order (owned) */
	size_t n_map;
	uint64_t size;                 /* the bytes hashed: the file's size */
	uint64_t bytes_read;           /* what was read of it: its data, once */
};

/**
 * The data ranges of `fd` (`size` bytes) in blocks, without their digests: SEEK_DATA/SEEK_HOLE
 * less the unwritten extents, each rounded out to whole blocks, touching ones merged, in order.
 * The same bytes on any Linux file system that reports holes give the same map, whoever read
 * the file before. New array in *v (free it), count in *n. 0 or -errno.
 */
int sparsehash_ranges(int fd, uint64_t size, struct sparsehash_range **v, size_t *n);

/**
 * Hash the first `size` bytes of `fd` (a regular file at least that long) as sh asks: the
 * spans' sha256, sh->whole, sh->map. Returns 0; -ESTALE when the file got shorter while read;
 * -MKI_E_INTERRUPTED on SIGINT/SIGTERM; -EINVAL for spans out of order or past `size`; another
 * negative errno. Nothing is logged; on failure sh->map is NULL.
 */
int sparsehash_file(int fd, uint64_t size, struct sparsehash *sh);

/** Free sh->map (the spans stay the caller's). */
void sparsehash_release(struct sparsehash *sh);

#endif
