/*
 * overwrite: dpkg's rules for an object a package ships where an object of other packages
 * already is (dpkg's archives.c, "trying to overwrite"): who may replace whom, and when M-A same
 * instances share one file. Decisions only: the caller compares contents and changes the tree.
 */
#ifndef MKI_OVERWRITE_H
#define MKI_OVERWRITE_H

#include <stddef.h>

/* What the rules need to know of a package; every pointer borrowed. */
struct overwrite_pkg {
	const char *name;     /* the package's name, without an architecture */
	const char *arch;     /* its Architecture field, or NULL */
	const char *version;  /* its Version field, or NULL */
	const char *replaces; /* its Replaces field, or NULL */
	int ma_same;          /* Multi-Arch: same */
};

enum overwrite_verdict {
	OVERWRITE_TAKE,     /* the new package writes it; the owners forget the path */
	OVERWRITE_SHARED,   /* the owners are other-arch instances of the same M-A same package:
			     * one object owned by all if identical (the caller compares), else a
			     * conflict */
	OVERWRITE_KEEP,     /* the owners replace the new package: their object stays */
	OVERWRITE_CONFLICT, /* an owner neither replaces nor is replaced: refused */
};

/* What is at a path of the tree, or what a package ships there. */
enum overwrite_kind {
	OVERWRITE_NONE,  /* nothing (only for what is in the tree) */
	OVERWRITE_DIR,
	OVERWRITE_LINK,  /* a symbolic link */
	OVERWRITE_OTHER, /* a regular file, a hard link, a device, a fifo */
};

enum overwrite_shape {
	OVERWRITE_WRITE,    /* the kinds agree: create it, or apply the owners' rules */
	OVERWRITE_FOLLOW,   /* a directory where a symlink is: follow the link; a directory at its
			     * end stays, anything else is a conflict */
	OVERWRITE_KEEP_DIR, /* a symlink where a directory is: the directory stays (dpkg) */
	OVERWRITE_MISMATCH, /* a directory where a non-directory is, or the reverse: refused */
};

/** dpkg's rule for shipping an object of kind `ships` where the tree has one of kind `have`. */
enum overwrite_shape overwrite_shape(enum overwrite_kind have, enum overwrite_kind ships);

/**
 * Does the Replaces field of `k` name package `q`: its name, an architecture qualifier that is
 * q's architecture or "any", and a version constraint q's version satisfies? A malformed field
 * replaces nothing from its first malformed relation on.
 */
int overwrite_replaces(const struct overwrite_pkg *k, const struct overwrite_pkg *q);
/**
 * The rule for an object `k` ships where the `n` (at least one) `owners` have one; an owner is
 * NULL when it is not a package being installed (nothing then replaces it). For
 * OVERWRITE_CONFLICT, `*culprit` is the index of the first owner in the way.
 */
enum overwrite_verdict overwrite_decide(const struct overwrite_pkg *k,
					const struct overwrite_pkg *const *owners, size_t n,
					size_t *culprit);

#endif
