/*
 * The manifest: what each path in the staging tree is, as the packages' tar headers (and later
 * the configured tree) say - type, owner, mode, times, device numbers, xattrs, owning packages.
 * Unpack fills it, hooks reconcile it with the tree, the image writer trusts it over lstat().
 */
#ifndef MKI_MANIFEST_H
#define MKI_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "str.h"

enum manifest_type {
	MF_REG = 'f',
	MF_DIR = 'd',
	MF_SYMLINK = 'l',
	MF_HARDLINK = 'h', /* `target` is the path (in the manifest) of the inode it shares */
	MF_CHR = 'c',
	MF_BLK = 'b',
	MF_FIFO = 'p',
	MF_SOCK = 's',
};

struct manifest_xattr {
	char *name;
	uint8_t *value;
	size_t len;
};

struct manifest_entry {
	char *path; /* relative to the root, no leading or trailing '/'; "" is the root itself */
	char type;  /* enum manifest_type */
	uint32_t mode; /* permission bits only (07777) */
	uint32_t uid, gid;
	int64_t mtime;
	uint32_t major, minor; /* MF_CHR, MF_BLK */
	uint64_t size;         /* MF_REG: bytes */
	char *target;          /* MF_SYMLINK: link text; MF_HARDLINK: path of the first link */
	struct manifest_xattr *xattrs; /* sorted by name */
	size_t n_xattrs;
	struct strv owners; /* "pkg" or "pkg:arch" (M-A same), in unpack order */
};

struct manifest {
	struct manifest_entry **v;
	size_t n, alloc;
	size_t *slots; /* open-addressing index into v (+1; 0 = empty) */
	size_t n_slots;
};

void manifest_init(struct manifest *m);
void manifest_release(struct manifest *m);
/** The entry for `path` (normalized: no leading "/" or "./"), or NULL. Borrowed. */
struct manifest_entry *manifest_get(const struct manifest *m, const char *path);
/**
 * The entry for `path`, created zeroed (type 0) if absent. Borrowed; valid until the entry is
 * removed or the manifest released.
 */
struct manifest_entry *manifest_add(struct manifest *m, const char *path);
/**
 * manifest_add at `path` with `src`'s type, mode, owner, time, device numbers, size and xattrs
 * (copied); not its link target or package owners, which a caller copies if it means to.
 */
struct manifest_entry *manifest_add_copy(struct manifest *m, const char *path,
					 const struct manifest_entry *src);
/** Free an xattr list: each name and value, then the array (as deb entries hold them too). */
void manifest_xattrs_free(struct manifest_xattr *v, size_t n);
/** Set (or replace) an xattr on `e`; copies name and value. */
void manifest_set_xattr(struct manifest_entry *e, const char *name, const void *value, size_t len);
/** Sort entries by path, bytewise, so parents come before children and output is stable. */
void manifest_sort(struct manifest *m);
/** Strip a leading "/" or "./" and trailing "/" into a new string; NULL if it has ".." parts. */
char *manifest_normalize(const char *path);

/**
 * Text form, one entry a line, for tests, reports and `--manifest`:
 * PATH TYPE MODE UID GID MTIME MAJOR MINOR SIZE TARGET OWNERS XATTRS, tab-separated; PATH and TARGET
 * percent-escape bytes outside 0x21-0x7e and '%'; OWNERS comma-separated or "-"; XATTRS
 * "name=hex;..." or "-". Atomically written (temp + rename). 0 or negative errno.
 */
int manifest_save(const struct manifest *m, const char *file);

/** Remove `path` (no-op if absent). */
void manifest_remove(struct manifest *m, const char *path);

#endif
