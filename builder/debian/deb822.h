/*
 * deb822: the one reader of Debian control-style files (Packages, Release, .deb control data,
 * apt's .sources). One stanza at a time, no recursion, every line and stanza bounded; field names
 * compared case-insensitively; errors name file:line. A caller that words its own messages reads
 * the kind of error and its line from the reader (deb822_set_silent).
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
	unsigned long line; /* the line the field's name is on */
};

/* What was wrong, for callers that word their own messages. */
enum deb822_error {
	DEB822_OK = 0,
	DEB822_E_LINE,         /* a line is neither a field nor a continuation */
	DEB822_E_CONTINUATION, /* a continuation line before any field */
	DEB822_E_NAME,         /* a malformed field name */
	DEB822_E_DUPLICATE,    /* a field given twice in one stanza */
	DEB822_E_NUL,          /* a NUL byte */
	DEB822_E_LIMIT,        /* a line, a stanza or the number of fields beyond its limit */
	DEB822_E_READ,         /* the file could not be read */
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
	unsigned long *lines;     /* per field: the line of its name */
	size_t alloc_lines;
	int limit_err;            /* returned when a limit is hit */
	int err_level;            /* enum log_level of parse and limit messages */
	int silent;               /* 1: nothing logged (deb822_set_silent) */
	int verbatim;             /* 1: values as written (deb822_set_verbatim) */
	enum deb822_error error;  /* after a failure: what was wrong ... */
	unsigned long error_line; /* ... on which line ... */
	char *error_msg;          /* ... and the message, "FILE:LINE: what" */
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
/**
 * Log nothing: a failure leaves its kind, line and message in d->error, d->error_line and
 * d->error_msg for the caller to word (a worker thread that must not log, a format whose
 * messages differ). d->line_buf still holds the offending line.
 */
void deb822_set_silent(struct deb822 *d);
/**
 * Keep values as written, as dpkg keeps a control file's fields for its status file: only the
 * blanks after the colon are dropped, continuation lines keep their leading blank, nothing is
 * stripped at the end of a line, and only an empty line ends a stanza (a line of blanks is a
 * continuation).
 */
void deb822_set_verbatim(struct deb822 *d);
/** Name the file `name` in messages (e.g. the URL an index came from, not its cache path). */
void deb822_set_name(struct deb822 *d, const char *name);
/** Continue reading at byte `offset`, which is line `line` (from stanza_offset/stanza_line). */
int deb822_seek(struct deb822 *d, off_t offset, unsigned long line);
/** The value of field `name` (case-insensitive) in the current stanza, or NULL. */
const char *deb822_get(const struct deb822 *d, const char *name);
/** Close the file and free everything. */
void deb822_close(struct deb822 *d);

#endif
