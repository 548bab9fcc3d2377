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
/**
 * Append `n` bytes of `s` to `b` with every byte a terminal acts on escaped as buf_add_escaped()
 * does (\n, \t, \r, \xHH): control characters, DEL, C1 controls (raw or UTF-8 encoded) and
 * bytes that are not part of valid UTF-8; NUL too. Backslash and quotes are kept: this is the
 * log's last line of defence (log.c passes every message through it), not a quoting.
 */
void buf_add_printable(struct buf *b, const char *s, size_t n);

#endif
