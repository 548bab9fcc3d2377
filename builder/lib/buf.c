#include "buf.h"

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
