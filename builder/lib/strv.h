/* strv: a NULL-terminated vector of owned strings. */
#ifndef MKI_STRV_H
#define MKI_STRV_H

#include <stddef.h>

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

#endif
