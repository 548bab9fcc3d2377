/*
 * Shell assignment files (/etc/default/u-boot, which u-boot-update sources with `.`): read as sh
 * splits them, and rewritten whole. A statement is everything sh reads as one command line: up to
 * a newline that is neither quoted nor escaped, so a quoted value or a backslash continuation
 * spanning lines is one statement. An assignment mkimage sets replaces its whole statement; every
 * other byte is kept as it was. What cannot be rewritten so that sh reads exactly mkimage's value
 * (a NUL byte, an unclosed quote, the key set inside a compound command) is refused, naming the
 * file and the line.
 */
#ifndef MKI_ENVFILE_H
#define MKI_ENVFILE_H

#include <stddef.h>

#include "lib/buf.h"

enum envfile_kind {
	ENVFILE_BLANK,   /* blanks only */
	ENVFILE_COMMENT, /* "# ...": one physical line, whatever it holds */
	ENVFILE_ASSIGN,  /* one simple NAME=WORD, with at most a comment after it */
	ENVFILE_OTHER,   /* anything else sh would run: several commands, export, if... */
};

struct envfile_stmt {
	enum envfile_kind kind;
	size_t start, end; /* its bytes [start, end) of the text, its newline included */
	unsigned line;     /* its first line, from 1 */
	char *key;         /* ASSIGN: NAME; COMMENT: NAME of a "#NAME=..." line; else NULL */
	char *value;       /* ASSIGN: the value as sh reads it; NULL when it expands something */
};

struct envfile {
	struct envfile_stmt *v;
	size_t n;
};

/**
 * Split `len` bytes of `text` (the contents of `file`, named in messages) into statements.
 * 0, or -MKI_E_IMAGE logged as FILE:LINE (a NUL byte, a quote or a command substitution
 * never closed, nesting deeper than 32); `out` is then empty.
 */
int envfile_parse(const char *text, size_t len, const char *file, struct envfile *out);
void envfile_release(struct envfile *e);

/** `v` in double quotes, escaped so that sh reads back exactly `v`. */
void envfile_quote(const char *v, struct buf *out);

/**
 * `text` (`len` bytes of `file`; NULL: a new file whose first line is `head`) with each KEY of
 * `kv` (KEY, VALUE pairs ending with NULL; at most 16 keys) set to VALUE: its first assignment's
 * whole statement, else its first "#KEY=" comment line, becomes KEY="VALUE"; later assignments
 * of KEY go; a key found nowhere is appended. Everything else is kept byte for byte (a last line
 * without a newline gets one). 0, or -MKI_E_IMAGE logged (as envfile_parse, a statement sh
 * would run that names KEY, a VALUE with a control character).
 */
int envfile_set(const char *text, size_t len, const char *file, const char *head,
		const char *const *kv, struct buf *out);

#endif
