/*
 * Reading a staging tree from the host as a command in the sandbox sees it, through directory fds
 * (no tree path is re-resolved from the host): the walks of reconcile.c and layerfile.c.
 */
#ifndef MKI_TREEREAD_H
#define MKI_TREEREAD_H

#include <sys/stat.h>

#include "lib/manifest.h"
#include "lib/str.h"

/** Called by treeread_walk() for each entry; non-zero stops the walk and is returned. */
typedef int treeread_visit_fn(void *arg, int dirfd, const char *name, const char *rel,
			      const struct stat *sb);

/**
 * Visit every entry below the directory `dirfd` (tree path `rel`, "" for the root), depth first,
 * parents before children, siblings in bytewise order, never through a link: `visit` gets the
 * entry's directory fd, its name there, its tree path and its lstat. Returns 0, what `visit`
 * returned, or a negative errno; `*failed` (may be NULL) then gets the tree path it happened at
 * (new string).
 */
int treeread_walk(int dirfd, const char *rel, treeread_visit_fn *visit, void *arg, char **failed);

/**
 * The names in directory `dirfd` (borrowed; "." and ".." left out), sorted bytewise so that a
 * walk visits one tree in one order, appended to `names`. 0 or a negative errno.
 */
int treeread_names(int dirfd, struct strv *names);

/**
 * The extended attributes of `name` in `dirfd` (not followed) into `e`, security.capability as
 * a command in the sandbox sees it (idshift_caps_to_inside). 0 or a negative errno (not logged).
 */
int treeread_xattrs(int dirfd, const char *name, struct manifest_entry *e);

#endif
