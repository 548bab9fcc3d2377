/*
 * A small bounded JSON reader for what a registry and the container tools hand us: manifests,
 * token answers, docker/podman auth files. The input is hostile: its size is bounded by the
 * caller, nesting by REGJSON_DEPTH, and a document with a duplicate key, a NUL in a string or
 * trailing bytes is refused, so that no two readers can see two different documents.
 */
#ifndef MKI_REGJSON_H
#define MKI_REGJSON_H

#include <stddef.h>
#include <stdint.h>

#define REGJSON_DEPTH 16

enum regjson_type { REGJSON_NULL, REGJSON_BOOL, REGJSON_NUM, REGJSON_STR, REGJSON_ARR,
		    REGJSON_OBJ };

struct regjson {
	enum regjson_type type;
	char *s;             /* STR: the decoded string; NUM: the number as written */
	int b;               /* BOOL */
	struct regjson *v;   /* ARR, OBJ: the elements, in document order */
	char **keys;         /* OBJ: keys[i] names v[i] */
	size_t n;
};

/** Parse `len` bytes of `text` into `out`. 0, or -EBADMSG (nothing to release). */
int regjson_parse(const char *text, size_t len, struct regjson *out);
void regjson_release(struct regjson *j);

/** Member `key` of the object `j`, or NULL (also when `j` is NULL or no object). */
const struct regjson *regjson_get(const struct regjson *j, const char *key);
/** Member `key` as a string, or NULL when absent or not a string. */
const char *regjson_str(const struct regjson *j, const char *key);
/** Member `key` as a non-negative integer. 0, or -EBADMSG when absent or not one. */
int regjson_u64(const struct regjson *j, const char *key, uint64_t *out);

#endif
