/* What only bootexport's unit tests use. */
#ifndef MKI_BOOTEXPORT_INTERNAL_H
#define MKI_BOOTEXPORT_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/hash.h"

/**
 * Copy the first `size` bytes of `in` to the same offsets of the empty file `out`, writing only
 * what SEEK_DATA finds (holes stay holes, a trailing one by ftruncate), and feed every byte,
 * holes as zeros, to `h` (may be NULL). The data written is added to `*data`; past `max_data`
 * the copy stops with -EFBIG. 0 or a negative errno (-EIO when `in` is shorter than `size`).
 */
int bootexport_copy(int in, int out, off_t size, struct hash *h, uint64_t *data,
		    uint64_t max_data);

#endif
