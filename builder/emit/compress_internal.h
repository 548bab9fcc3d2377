/* What only the unit tests of compress.c use. */
#ifndef MKI_COMPRESS_INTERNAL_H
#define MKI_COMPRESS_INTERNAL_H

#include "compress.h"

/** compress_file() with `threads` workers (0 as 1): the tests show the bytes do not change. */
int compress_file_threads(const char *in, const char *out, enum compress_kind k,
			  unsigned threads);

#endif
