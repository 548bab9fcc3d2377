/* Small string helpers: growable buffer, string vector, allocation that dies on OOM (as git's). */
#ifndef MKI_STR_H
#define MKI_STR_H

#include <stdarg.h>
#include <stddef.h>

/** malloc/realloc/strdup that abort with a message when memory is exhausted. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/** Newly allocated formatted string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/** Grow an array `p` of `*alloc` elements so that it holds at least `need`. */
#define ALLOC_GROW(p, need, alloc)                                                     \
	do {                                                                           \
		if ((need) > (alloc)) {                                                \
			(alloc) = (alloc) * 2 > (need) ? (alloc) * 2 : (need) + 8;     \
			(p) = xrealloc((p), (alloc) * sizeof(*(p)));                   \
		}                                                                      \
	} while (0)

/** A NULL-terminated vector of owned strings. */
struct strv {
	char **v;
	size_t n, alloc;
};

void strv_push(struct strv *s, const char *str);          /* copies str */
void strv_push_take(struct strv *s, char *str);           /* takes str */
int strv_contains(const struct strv *s, const char *str);
void strv_release(struct strv *s);
/** Join with `sep` into a new string. */
char *strv_join(const struct strv *s, const char *sep);

/** A growable byte buffer, always NUL-terminated. */
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

int str_starts_with(const char *s, const char *prefix);
int str_ends_with(const char *s, const char *suffix);
/**
 * Append `s` to `b` with control characters, backslash and double quote escaped C-style
 * (\n, \t, \\, \", \xHH), so a hostile name prints on one line and cannot forge log lines.
 */
void buf_add_escaped(struct buf *b, const char *s);
/** Levenshtein distance, for "did you mean" suggestions. */
unsigned str_distance(const char *a, const char *b);

#include "banned.h"
#endif
