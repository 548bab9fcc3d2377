/*
 * xz (and legacy .lzma) streams decoded with liblzma under a memory limit. libarchive's own xz
 * reader lets a stream declare a dictionary of up to 1 GiB and touches as much of it as the
 * stream decompresses to: a 5 MB Packages.xz declaring 768 MiB held 792 MB resident. Here the
 * headers are checked against the 'xz-memory' limit before anything is decoded.
 */
#ifndef MKI_XZ_H
#define MKI_XZ_H

#include <stddef.h>
#include <stdint.h>

struct xz;

/** Whether `p` (`n` bytes) starts an .xz stream. */
int xz_is_xz(const void *p, size_t n);

/**
 * A decoder of concatenated .xz streams (`lzma_alone` 0) or of one legacy .lzma stream (1) that
 * may use at most `memlimit` bytes. NULL when out of memory.
 */
struct xz *xz_new(uint64_t memlimit, int lzma_alone);

/**
 * Decode from `*in` (`*in_len` bytes; both advanced past what was consumed) into `out` (`*out_len`
 * bytes; set to the bytes produced). `finish`: no input will follow. Returns 1 at the end of the
 * data, 0 when more input or output room is wanted, -MKI_E_LIMIT when the stream needs more
 * memory than allowed (xz_memneed() says how much), -MKI_E_PARSE for corrupt or truncated data.
 */
int xz_decode(struct xz *x, const uint8_t **in, size_t *in_len, uint8_t *out, size_t *out_len,
	      int finish);

/** The memory the stream asked for when xz_decode() returned -MKI_E_LIMIT. */
uint64_t xz_memneed(const struct xz *x);

/** liblzma's words for the last -MKI_E_PARSE. */
const char *xz_error(const struct xz *x);

void xz_free(struct xz *x);

#endif
