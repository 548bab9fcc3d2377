/*
 * Path filters: dpkg's --path-exclude / --path-include, applied while unpacking, and the
 * `minimize` preset built from them. Rules are fnmatch(3) globs (flags 0: '*' and '?' match '/')
 * tested in order against a package path as dpkg -L prints it ("/usr/share/doc/x/README"); the
 * last rule that matches decides. An excluded directory or symlink is kept when an include rule
 * could need it: when its path starts with the part of an include glob before the first
 * wildcard (dpkg's src/main/filters.c, which errs on the side of keeping too much).
 */
#ifndef MKI_PATHFILTER_H
#define MKI_PATHFILTER_H

#include <stdint.h>

#include "lib/str.h"

/* Where the image's own dpkg finds the rules (written by unpack, one option per line). */
#define PATHFILTER_DPKG_CFG "etc/dpkg/dpkg.cfg.d/mkimage-path-filters"

struct pathfilter_rule {
	char *glob;
	int include; /* 1: path-include, 0: path-exclude */
};

struct pathfilter {
	struct pathfilter_rule *v;
	size_t n, alloc;
};

/** What the filters left out of the tree (packages still list it, as dpkg's do). */
struct pathfilter_count {
	uint64_t files; /* non-directories: regular files, links, nodes */
	uint64_t dirs;
	uint64_t bytes; /* sizes of the regular files */
};

/**
 * Check one glob from a recipe. Returns 0, or -EINVAL with a reason in `*why` (static string):
 * empty, longer than PATH_MAX, a control character (it would break the dpkg.cfg line), not
 * starting with '/' or a wildcard (it could never match a path), ending with '/' (neither), an
 * unterminated '[' class or a trailing backslash.
 */
int pathfilter_check_glob(const char *glob, const char **why);
/**
 * Check a locale name kept by `minimize` ("en", "pt_BR", "sr@latin"). Returns 0, or -EINVAL
 * with a reason in `*why` (static string).
 */
int pathfilter_check_locale(const char *name, const char **why);

/** Append a rule (the glob is copied). */
void pathfilter_add(struct pathfilter *f, const char *glob, int include);
/**
 * Fill `f` (zeroed by the caller) with the rules of a recipe, in the order dpkg applies them:
 * the minimize preset when `minimize` (documentation but copyright files, manual pages, info,
 * lintian overrides, translations but the `locales` kept), then every `exclude`, then every
 * `include`. All arguments are borrowed.
 */
void pathfilter_build(struct pathfilter *f, int minimize, const struct strv *locales,
		      const struct strv *exclude, const struct strv *include);
/** Free the rules of `f`. */
void pathfilter_release(struct pathfilter *f);

/**
 * 1 when the entry `path` ("/usr/share/man/man1/ls.1.gz": a leading '/', no trailing one) is
 * left out, else 0. `dir_or_link`: the entry is a directory or a symlink, which dpkg keeps when
 * an include rule may need it. Safe to call from several threads on the same `f`.
 */
int pathfilter_skips(const struct pathfilter *f, const char *path, int dir_or_link);

/**
 * The length of the first ancestor directory of `path` that `f` leaves out ("/usr/share/man" of
 * "/usr/share/man/man1/x.1.gz": 14), or 0 when none is: why a kept entry has nowhere to go.
 */
size_t pathfilter_left_out_parent(const struct pathfilter *f, const char *path);

/** Account one entry left out: a directory, or a non-directory of `size` bytes. */
void pathfilter_count_add(struct pathfilter_count *c, int is_dir, uint64_t size);

/**
 * Append the dpkg configuration fragment that applies the same rules ("path-exclude=GLOB" and
 * "path-include=GLOB" lines, in order, after a comment) to `out`.
 */
void pathfilter_format_dpkg_cfg(const struct pathfilter *f, struct buf *out);

#endif
