/*
 * Reading a staging tree from the host as a command in the sandbox sees it, through directory fds
 * (no tree path is re-resolved from the host): the walks of reconcile.c and layerfile.c.
 */
#ifndef MKI_TREEREAD_H
#define MKI_TREEREAD_H

#include "manifest.h"
#include "str.h"

/**
 * The names in directory `dirfd` (borrowed; "." and ".." left out), sorted bytewise so that a
 * walk visits one tree in one order, appended to `names`. 0 or a negative errno.
 */
int treeread_names(int dirfd, struct strv *names);

/**
 * The extended attributes of `name` in `dirfd` (not followed) into `e`, security.capability as
 * a command in the sandbox sees it (sandbox_caps_to_inside). 0 or a negative errno (not logged).
 */
int treeread_xattrs(int dirfd, const char *name, struct manifest_entry *e);

#endif
