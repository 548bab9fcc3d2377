#include "strv.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "x.h"

void strv_push_take(struct strv *s, char *str)
{
	ALLOC_GROW(s->v, s->n + 2, s->alloc);
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void strv_push(struct strv *s, const char *str)
{
	strv_push_take(s, xstrdup(str));
}

int strv_contains(const struct strv *s, const char *str)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return 1;
	return 0;
}

void strv_release(struct strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->alloc = 0;
}

char *strv_join(const struct strv *s, const char *sep)
{
	struct buf b = { 0 };
	size_t i;

	buf_adds(&b, "");
	for (i = 0; i < s->n; i++) {
		if (i)
			buf_adds(&b, sep);
		buf_adds(&b, s->v[i]);
	}
	return buf_detach(&b);
}
