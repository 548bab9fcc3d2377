/*
 * The sandbox's own files among themselves (sandbox.c, sandbox_idmap.c, sandbox_binfmt.c) and
 * their unit tests.
 */
#ifndef MKI_SANDBOX_INT_H
#define MKI_SANDBOX_INT_H

#include <sys/types.h>

#include "sandbox.h"

#define BINFMT_DIR "/proc/sys/fs/binfmt_misc"

/** Write all of `text` to the existing file `path` (a /proc or binfmt_misc file). 0 or -errno. */
int sandbox_write_file(const char *path, const char *text);

/** Whether any architecture runs through qemu-user (sandbox_add_arch() registered one). */
int sandbox_binfmt_emulates(void);

/**
 * Decide which id map the build namespace can have and fill `si` (ids, outer and subordinate
 * ranges): a root build takes root's subordinate range or the fixed one; a user its /etc/subuid
 * and /etc/subgid range (newuidmap/newgidmap needed); without one, a single id when
 * `o->allow_single_id`, else -MKI_E_SANDBOX saying how to add a range. Warnings are logged.
 */
int sandbox_idmap_choose(struct sandbox_info *si, const struct sandbox_opts *o);
/** From the helper outside: write `si`'s uid and gid maps for `pid`. 0, or -1 (logged). */
int sandbox_idmap_write(const struct sandbox_info *si, pid_t pid);
/**
 * The uid map (`gid` 0) or gid map (`gid` 1) of `si` as the kernel takes it ("INSIDE OUTSIDE
 * COUNT" lines; newuidmap takes the same numbers as arguments). New string.
 */
char *sandbox_idmap_text(const struct sandbox_info *si, int gid);
/**
 * The first "NAME:START:COUNT" or "UID:START:COUNT" line of `file` (/etc/subuid) for user `name`
 * (may be NULL) or uid `id`, with a positive count: 1 with *start, *count set; 0 if none.
 */
int sandbox_find_subid(const char *file, const char *name, unsigned long id,
		       unsigned long *start, unsigned long *count);

struct arch;
/**
 * The binfmt_misc registration for `a`'s ELF binaries (ident, e_type EXEC or DYN, e_machine) run
 * by `interp` with flags FP: ":mkimage-QEMU:M::MAGIC:MASK:INTERP:FP". New string.
 */
char *sandbox_binfmt_line(const struct arch *a, const char *interp);

#endif
