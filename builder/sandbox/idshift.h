/*
 * Which ids a command's nested user namespace gets, and how they are stored on disk (idshift.c
 * says why root builds shift them). Below sandbox.c and confine.c, which both use it: it knows
 * the namespace only through what sandbox_enter() hands it.
 */
#ifndef MKI_IDSHIFT_H
#define MKI_IDSHIFT_H

#include <stddef.h>
#include <sys/types.h>

#include "userns.h"

/**
 * The namespace whose ids the functions below shift (borrowed; it must outlive every call):
 * sandbox_enter() sets it once it has entered. Until then, and with NULL, nothing is shifted.
 */
void idshift_set_namespace(const struct sandbox_info *si);

/** The on-disk owner of what a command sees as `inside` (root builds: base + id; else itself). */
uid_t idshift_tree_uid(uid_t inside);
gid_t idshift_tree_gid(gid_t inside);
/**
 * What a command sees for the on-disk owner `tree`. Root builds: ids below the base were set by
 * host root (mkimage, an outside hook) and are kept; -1 for ids above the commands' range.
 */
long idshift_inside_uid(uid_t tree);
long idshift_inside_gid(gid_t tree);
/**
 * The uid_map (or, `gid`, gid_map) text of a command's nested user namespace; `host`: a command on
 * the host filesystem (an outside hook), which in root builds keeps the identity. New string.
 */
char *idshift_nested_map(const struct sandbox_info *si, int gid, int host);
/**
 * A security.capability value read back from the tree of a root build: a command's v3 value with
 * rootid = the commands' base becomes the v2 value a user build records (in place). New length;
 * anything else is left alone.
 */
size_t idshift_caps_to_inside(const struct sandbox_info *si, unsigned char *val, size_t len);

#endif
