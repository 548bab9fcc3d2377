/*
 * The .deb reader (libarchive): the ar container, the debian-binary 2.x check, the control
 * archive read into memory (bounded) and the data archive streamed entry by entry.
 *
 * Nothing here logs: a failure is described in deb_error() (the member named) so
 * that a worker thread can hand the text to the thread that reports errors in plan order.
 */
#ifndef MKI_DEB_H
#define MKI_DEB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/manifest.h"
#include "lib/runlimits.h"

/* One path or link target in data.tar (as PATH_MAX: not a resource limit, so not configurable). */
#define DEB_PATH_MAX 4096

/** One file of control.tar (control, md5sums, conffiles, maintainer scripts, ...). */
struct deb_member {
	char *name; /* base name: "control", "postinst" */
	uint32_t mode;
	char *data; /* NUL-terminated copy */
	size_t len;
};

/** One entry of data.tar, as its header says. Strings are owned by the entry. */
struct deb_entry {
	char *path;   /* raw name from the header ("./usr/bin/x") */
	char type;    /* enum manifest_type letter: f d l h c b p s */
	uint32_t mode; /* 07777 */
	uint32_t uid, gid;
	int64_t mtime;
	uint32_t major, minor;
	uint64_t size;
	int sparse;   /* a sparse member (GNU or pax): its holes are kept as holes */
	char *target; /* symlink text or hardlink target name (raw) */
	struct manifest_xattr *xattrs;
	size_t n_xattrs;
};

struct deb;

/**
 * Open `path` (borrowed; must outlive the reader), check the ar container and debian-binary,
 * and read control.tar into memory. `lim` (borrowed, must outlive the reader; NULL: defaults)
 * bounds control.tar ('deb-control') and, in deb_next(), the entries ('deb-entries') and the
 * bytes their headers declare ('deb-data'). Returns 0 or -MKI_E_PACKAGE/-MKI_E_LIMIT_PKG/-errno;
 * on failure *out is still set so deb_error() can be read, and must be freed with deb_free().
 */
int deb_open(struct deb **out, const char *path, const struct limits *lim);
/** The control.tar members, valid until deb_free(). */
const struct deb_member *deb_members(const struct deb *d, size_t *n);
/** The member called `name`, or NULL. */
const struct deb_member *deb_member(const struct deb *d, const char *name);
/**
 * Next data.tar entry into `e` (previous contents released). Returns 1 for an entry, 0 at the
 * end of data.tar (the file and decompressors are then released; members stay), or a negative
 * code. The first call opens data.tar. The limits are checked on each header, before its data is
 * read: a bomb declaring a huge file is refused without decompressing it (-MKI_E_LIMIT_PKG).
 */
int deb_next(struct deb *d, struct deb_entry *e);
/** Read the current entry's bytes; returns bytes read, 0 at its end, or a negative code. */
ssize_t deb_read(struct deb *d, void *buf, size_t n);
/**
 * The current entry's next block of bytes without copying them: *buf (valid until the next call
 * on `d`), *len and where the block starts in the file, *offset (a sparse member's holes lie
 * between blocks). Returns 1, 0 at the entry's end, or a negative code. Use either this or
 * deb_read() for one entry, not both.
 */
int deb_read_block(struct deb *d, const void **buf, size_t *len, uint64_t *offset);
/** Description of the last failure (member and what went wrong; the caller names the file). */
const char *deb_error(const struct deb *d);
void deb_entry_release(struct deb_entry *e);
void deb_free(struct deb *d);

/** A deb822 field, in file order; value without the "Name:" and leading blanks. */
struct deb_field {
	char *name;
	char *value;
};

struct deb_control {
	struct deb_field *v;
	size_t n, alloc;
	char why[256]; /* why the last deb_control_parse() failed */
};

/**
 * Parse the first stanza of a control file with the deb822 reader, values kept as written (dpkg's
 * status file repeats them) and lines, the stanza and its fields bounded by `lim` (borrowed; NULL:
 * the defaults). Returns 0, or -MKI_E_PACKAGE for malformed text, -MKI_E_LIMIT_PKG past a limit,
 * with a reason in `why` (in `c`). Logs nothing: worker threads parse control files.
 */
int deb_control_parse(struct deb_control *c, const char *text, const struct limits *lim,
		      const char **why);
/** The value of field `name` (case-insensitive), or NULL. Borrowed. */
const char *deb_control_get(const struct deb_control *c, const char *name);
void deb_control_release(struct deb_control *c);

/** dpkg's version comparison: <0, 0 or >0 as `a` is older, equal or newer than `b`. */
int deb_version_cmp(const char *a, const char *b);

#endif
