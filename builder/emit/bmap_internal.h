/* What only the unit tests of bmap.c use. */
#ifndef MKI_BMAP_INTERNAL_H
#define MKI_BMAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/** bmap-tools' human size: "512 bytes", "1.5 KiB", "300.0 MiB" (into `out`, `len` bytes). */
void bmap_human_size(uint64_t size, char *out, size_t len);

#endif
