/*
 * Host-side access into the staging tree after packages or scripts had their way with it. The
 * tree is hostile: any directory may have become a symlink (`/var/log -> /srv/x`, `usr/sbin ->
 * /etc`, `../../..` chains). Every path given here is resolved by the kernel with the tree as
 * "/" (openat2 RESOLVE_IN_ROOT): a link is followed as the image itself would follow it and can
 * never lead out of the tree; magic links (/proc/PID/root) and mount crossings are refused. The
 * last component is never followed by the operations that act on a name (stat, unlink, rename,
 * mkdir, create). Paths are relative to the tree root ("var/log/dpkg.log"); a leading '/' is
 * allowed. Functions return 0 or an fd, else a negative errno (-ENOSYS: kernel < 5.6 has no
 * openat2; there is no weaker fallback). None of them logs.
 */
#ifndef MKI_BENEATH_H
#define MKI_BENEATH_H

#include <sys/stat.h>
#include <sys/types.h>

#include "str.h"

/** Open `rel` with `flags` (O_CLOEXEC added; the last component is followed, inside the tree). */
int beneath_open(int rootfd, const char *rel, int flags, mode_t mode);
/**
 * Open canonical tree path `rel` (one the manifest or the unpacker recorded) with `flags`
 * (O_CLOEXEC added): beneath the root and through no symlink at all, the last component
 * included, so an object a script replaced by a link is refused (-ELOOP), never followed.
 */
int beneath_open_canonical(int rootfd, const char *rel, int flags);
/**
 * Open `rel` for reading, as beneath_open() (`canonical` 0) or beneath_open_canonical() (1) do,
 * without ever blocking: O_NONBLOCK and O_NOCTTY, so a FIFO or a device a script put there never
 * waits for a writer or a line, then a regular file is required. The fd (blocking again), -errno,
 * or -EINVAL when it is not a regular file (`*kind`, when not NULL, says what it is: "a FIFO").
 * Every host-side read of a file's contents in a tree scripts ran in goes through here.
 */
int beneath_open_regular(int rootfd, const char *rel, int canonical, const char **kind);
/** An O_PATH fd of the directory holding `rel`; `*name` gets `rel`'s last component (borrowed). */
int beneath_parent(int rootfd, const char *rel, const char **name);
/** lstat() of `rel`: its directory resolved in the tree, the last component not followed. */
int beneath_lstat(int rootfd, const char *rel, struct stat *st);
/** unlinkat() of `rel` with `flags` (0, or AT_REMOVEDIR for an empty directory). */
int beneath_unlink(int rootfd, const char *rel, int flags);
/** mkdir() of `rel` (its parent must exist); an existing directory (not a link) is fine. */
int beneath_mkdir(int rootfd, const char *rel, mode_t mode);
/** rename() of `from` to `to`, both resolved in the tree. */
int beneath_rename(int rootfd, const char *from, const char *to);
/**
 * Create a new file `dir/PREFIXxxxxxx` (O_EXCL, O_NOFOLLOW, mode 0600) for writing; `*rel` gets
 * its tree path ("var/tmp/PREFIXxxxxxx", new string) on success.
 */
int beneath_mkstemp(int rootfd, const char *dir, const char *prefix, char **rel);
/**
 * Resolve `path` (relative to the tree; ".", ".." and repeated slashes allowed) to the canonical
 * tree path of a directory in `out` ("" for the root), in userspace with chroot semantics, as
 * dpkg resolves a package's paths: every symlink on the way is followed, an absolute target
 * restarts at the tree's root. Refused: a ".." or link climbing above the root (-EXDEV; the
 * kernel's RESOLVE_IN_ROOT would clamp it instead), more than 40 links (-ELOOP). -ENOENT or
 * -ENOTDIR name the failing component in `bad` (may be NULL). The result is only a name: open
 * it with beneath_open_canonical(), which refuses it if the tree changed meanwhile.
 */
int beneath_resolve_dir(int rootfd, const char *path, struct buf *out, struct buf *bad);
/**
 * Whether this kernel can do the above (openat2 exists): 0, or -ENOSYS. Call once before a
 * stage that needs it, to fail with one clear message instead of at the first access.
 */
int beneath_supported(int rootfd);

#endif
