/* The only module that includes liblzma. */
#include "xz.h"

#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "str.h"

struct xz {
	lzma_stream s;
	uint64_t memneed;
	const char *error;
};

int xz_is_xz(const void *p, size_t n)
{
	return n >= 6 && !memcmp(p, "\xfd" "7zXZ\0", 6);
}

struct xz *xz_new(uint64_t memlimit, int lzma_alone)
{
	struct xz *x = xcalloc(1, sizeof(*x));
	lzma_ret r;

	x->s = (lzma_stream)LZMA_STREAM_INIT;
	r = lzma_alone ? lzma_alone_decoder(&x->s, memlimit)
		       : lzma_stream_decoder(&x->s, memlimit, LZMA_CONCATENATED);
	if (r != LZMA_OK) {
		free(x);
		return NULL;
	}
	return x;
}

static int fail(struct xz *x, lzma_ret r)
{
	switch (r) {
	case LZMA_MEMLIMIT_ERROR:
		x->memneed = lzma_memusage(&x->s);
		return -MKI_E_LIMIT;
	case LZMA_FORMAT_ERROR: x->error = "not in the .xz format"; break;
	case LZMA_OPTIONS_ERROR: x->error = "unsupported compression options"; break;
	case LZMA_DATA_ERROR: x->error = "compressed data is corrupt"; break;
	case LZMA_BUF_ERROR: x->error = "compressed data ends early (truncated)"; break;
	case LZMA_MEM_ERROR: x->error = "out of memory"; break;
	default: x->error = "decompression failed"; break;
	}
	return -MKI_E_PARSE;
}

int xz_decode(struct xz *x, const uint8_t **in, size_t *in_len, uint8_t *out, size_t *out_len,
	      int finish)
{
	lzma_ret r;

	x->s.next_in = *in;
	x->s.avail_in = *in_len;
	x->s.next_out = out;
	x->s.avail_out = *out_len;
	r = lzma_code(&x->s, finish ? LZMA_FINISH : LZMA_RUN);
	*in = x->s.next_in;
	*in_len = x->s.avail_in;
	*out_len -= x->s.avail_out;
	if (r == LZMA_STREAM_END)
		return 1;
	if (r == LZMA_OK || (r == LZMA_BUF_ERROR && (*out_len || !finish)))
		return 0;
	return fail(x, r);
}

uint64_t xz_memneed(const struct xz *x)
{
	return x->memneed;
}

const char *xz_error(const struct xz *x)
{
	return x->error ? x->error : "decompression failed";
}

void xz_free(struct xz *x)
{
	if (!x)
		return;
	lzma_end(&x->s);
	free(x);
}
