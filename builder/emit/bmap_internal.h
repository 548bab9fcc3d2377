/* What only the unit tests of bmap.c use. */
#ifndef MKI_BMAP_INTERNAL_H
#define MKI_BMAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Blocks first..last (inclusive) of BMAP_BLOCK_SIZE bytes hold data. */
struct bmap_range {
	uint64_t first, last;
};

/**
 * The data ranges of `fd` (`size` bytes) in blocks, from SEEK_DATA/SEEK_HOLE: each rounded out to
 * whole blocks, touching ones merged, in order. New array in *v (free it), count in *n.
 * 0 or -errno.
 */
int bmap_ranges(int fd, uint64_t size, struct bmap_range **v, size_t *n);

/** bmap-tools' human size: "512 bytes", "1.5 KiB", "300.0 MiB" (into `out`, `len` bytes). */
void bmap_human_size(uint64_t size, char *out, size_t len);

#endif
