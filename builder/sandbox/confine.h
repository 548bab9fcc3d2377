/*
 * The confinement of one command, done by the pid namespace's init (sandbox.c): make the tree
 * the only root there is, then start the command in a nested user + mount namespace, so every
 * mount the init made is locked for it.
 */
#ifndef MKI_CONFINE_H
#define MKI_CONFINE_H

#include <sys/types.h>

struct sandbox_info;

/**
 * Make `root` (with its mounts already in place) this mount namespace's root: bind it onto
 * itself, pivot_root into it and detach the old root, so nothing above the tree is reachable;
 * then make /proc's kernel knobs (sys, sysrq-trigger, irq, bus) read-only. cwd becomes "/".
 * 0 or a negative errno (logged).
 */
int confine_root(const char *root);

/**
 * Fork a child into a new user + mount namespace, write its id maps (idshift_nested_map();
 * `host`: the command runs on the host filesystem) from this side, which holds CAP_SETUID over
 * the build namespace, through /proc, which must show this pid namespace; the child then becomes
 * root there. Returns the child's pid in the parent and 0 in the child; a negative errno (logged)
 * when it could not be done. A child whose maps failed
 * exits 125.
 */
pid_t confine_fork(const struct sandbox_info *si, int host);

#endif
