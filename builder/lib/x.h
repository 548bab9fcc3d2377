/* x: allocation that cannot fail (as git's): on exhausted memory, a message and abort(). */
#ifndef MKI_X_H
#define MKI_X_H

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

#endif
