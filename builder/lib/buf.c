#include "buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "x.h"

void buf_add(struct buf *b, const void *data, size_t n)
{
	ALLOC_GROW(b->p, b->len + n + 1, b->alloc);
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
}

void buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	ALLOC_GROW(b->p, b->len + (size_t)n + 1, b->alloc);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_release(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->alloc = 0;
}

char *buf_detach(struct buf *b)
{
	char *p = b->p ? b->p : xstrdup("");

	b->p = NULL;
	b->len = b->alloc = 0;
	return p;
}

void buf_add_escaped(struct buf *b, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '\n')
			buf_adds(b, "\\n");
		else if (*p == '\t')
			buf_adds(b, "\\t");
		else if (*p == '\\' || *p == '"')
			buf_addf(b, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			buf_addf(b, "\\x%02x", *p);
		else
			buf_add(b, p, 1);
	}
	if (!b->p)
		buf_add(b, "", 0);
}

/*
 * Length of the valid UTF-8 sequence at `p` (at most `n` bytes) when it encodes a printable
 * character, else 0: overlong forms, surrogates, values past U+10FFFF and the C1 controls
 * U+0080..U+009F (which some terminals obey like ESC [) are not.
 */
static size_t utf8_printable(const unsigned char *p, size_t n)
{
	size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
	uint32_t c = p[0] & (0x7f >> len), min = len == 4 ? 0x10000 : len == 3 ? 0x800 : 0xa0;
	size_t i;

	if (!len || p[0] > 0xf4 || len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

void buf_add_printable(struct buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t len = 1;

	while (p < end) {
		if (*p >= 0x20 && *p < 0x7f)
			len = 1;
		else if (*p < 0x80 || !(len = utf8_printable(p, (size_t)(end - p)))) {
			if (*p == '\n' || *p == '\t' || *p == '\r')
				buf_addf(b, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
			else
				buf_addf(b, "\\x%02x", *p);
			p++;
			continue;
		}
		buf_add(b, p, len);
		p += len;
	}
	if (!b->p)
		buf_add(b, "", 0);
}
