/*
 * deb822: a streaming reader for Debian control-style files (Packages, Release, control).
 * One stanza at a time, no recursion, every line and stanza bounded; errors name file:line.
 */
#ifndef MKI_DEB822_H
#define MKI_DEB822_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/runlimits.h"

struct deb822_field {
	const char *name;  /* as written (compare case-insensitively) */
	const char *value; /* leading/trailing blanks stripped; continuation lines joined by '\n' */
	size_t value_len;
};

struct deb822 {
	FILE *f;
	char *file;               /* for messages */
	unsigned long line;       /* lines read so far */
	off_t offset;             /* bytes read so far */
	unsigned long stanza_line;/* first line of the current stanza */
	off_t stanza_offset;      /* byte offset of the current stanza's first line */
	struct deb822_field *fields;
	size_t n_fields, alloc_fields;
	char *text;               /* the stanza's fields, NUL-separated */
	size_t text_len, text_alloc;
	char *line_buf;           /* the current line (bounded by the 'line' limit) */
	size_t line_alloc;
	size_t *offs;             /* per field: name offset, value offset (into text) */
	char *rbuf;               /* read-ahead buffer */
	size_t rpos, rlen;
	const struct limits *lim; /* borrowed; NULL: the defaults */
	size_t max_line, max_stanza, max_fields;
	int limit_err;            /* returned when a limit is hit */
	int err_level;            /* enum log_level of parse and limit messages */
};

/** Open `path` for reading. 0, or a negative errno (nothing logged: the caller knows why). */
int deb822_open(struct deb822 *d, const char *path);
/** Read from `len` bytes at `data` (borrowed, must outlive the reader); `name` is for messages. */
int deb822_open_mem(struct deb822 *d, const char *name, const void *data, size_t len);
/**
 * Bound lines, stanzas and fields by `l` (borrowed, must outlive the reader; NULL: the defaults,
 * which a reader starts with) and return `code` (-MKI_E_LIMIT_REPO, the default, or
 * -MKI_E_LIMIT_PKG for a package's control file) when one is hit.
 */
void deb822_set_limits(struct deb822 *d, const struct limits *l, int code);
/**
 * Read the next stanza into d->fields (valid until the next call). Returns 1 for a stanza, 0 at end
 * of file, or -MKI_E_PARSE (logged as "FILE:LINE: what") / the limit code (logged with the limit's
 * name and how to raise it) / negative errno.
 */
int deb822_next(struct deb822 *d);
/**
 * Log parse errors and hit limits at debug level only, for input whose failure the caller handles
 * without failing the build (a copyright file that turns out not to be machine-readable).
 */
void deb822_set_quiet(struct deb822 *d);
/** Name the file `name` in messages (e.g. the URL an index came from, not its cache path). */
void deb822_set_name(struct deb822 *d, const char *name);
/** Continue reading at byte `offset`, which is line `line` (from stanza_offset/stanza_line). */
int deb822_seek(struct deb822 *d, off_t offset, unsigned long line);
/** The value of field `name` (case-insensitive) in the current stanza, or NULL. */
const char *deb822_get(const struct deb822 *d, const char *name);
/** Close the file and free everything. */
void deb822_close(struct deb822 *d);

#endif
