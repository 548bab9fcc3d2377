/* buf: a growable byte buffer, always NUL-terminated. */
#ifndef MKI_BUF_H
#define MKI_BUF_H

#include <stddef.h>

struct buf {
	char *p;
	size_t len, alloc;
};

void buf_add(struct buf *b, const void *data, size_t n);
void buf_adds(struct buf *b, const char *s);
void buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_release(struct buf *b);
/** Detach the string; the buffer is reset. */
char *buf_detach(struct buf *b);
/**
 * Append `s` to `b` with control characters, backslash and double quote escaped C-style
 * (\n, \t, \\, \", \xHH), so a hostile name prints on one line and cannot forge log lines.
 */
void buf_add_escaped(struct buf *b, const char *s);

#endif
