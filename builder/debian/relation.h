/*
 * relation: the value of a Debian relation field (Depends, Pre-Depends, Recommends, Provides,
 * Conflicts, Breaks, Replaces) read as groups of alternatives, one relation at a time.
 *
 *   value    := group ("," group)*           an empty group (blanks only) is skipped
 *   group    := relation ("|" relation)*
 *   relation := name [":" arch] ["(" op version ")"] ["[" archs "]"] ("<" profiles ">")*
 *
 * The reader allocates nothing: every relation points into the value (the hot path reads every
 * dependency of a whole archive). Architecture lists and build profiles only belong in source
 * packages; they are skipped as dpkg skips them for binary ones. Every part is bounded.
 */
#ifndef MKI_RELATION_H
#define MKI_RELATION_H

#include <stddef.h>

#define RELATION_NAME_MAX 256 /* names and versions are shorter than this */
#define RELATION_ARCH_MAX 64  /* architecture qualifiers are shorter than this */

enum relation_op {
	RELATION_ANY = 0, /* no version constraint */
	RELATION_LT,      /* << */
	RELATION_LE,      /* <=, and the obsolete < */
	RELATION_EQ,      /* = */
	RELATION_GE,      /* >=, and the obsolete > */
	RELATION_GT,      /* >> */
};

struct relation {
	const char *name; /* not NUL-terminated: name_len bytes */
	const char *arch; /* the qualifier after ':', or NULL */
	const char *version;
	size_t name_len, arch_len, version_len;
	enum relation_op op;
	int alt; /* 1: an alternative of the relation before it ('|'); 0: the first of a group */
};

struct relation_iter {
	const char *p, *end;
	int in_group;    /* the last relation read was not the last of its group */
	const char *why; /* after an error: what is wrong (a static string) */
};

/** Read `len` bytes at `value` (borrowed, must outlive the reader). */
void relation_iter_init(struct relation_iter *it, const char *value, size_t len);
/**
 * The next relation into `r` (pointing into the value). Returns 1, 0 at the end, or -MKI_E_PARSE
 * with `it->why` saying what is wrong (the caller names the field, its package and its file).
 */
int relation_next(struct relation_iter *it, struct relation *r);
/** Does a version comparison's result `cmp` (<0, 0, >0: have vs wanted) satisfy `op`? */
int relation_op_holds(enum relation_op op, int cmp);

#endif
