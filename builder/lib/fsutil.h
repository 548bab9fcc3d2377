/* Filesystem helpers shared by stages: atomic writes, mkdir -p, rm -rf. */
#ifndef MKI_FSUTIL_H
#define MKI_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

/** write(2) all of `n` bytes, retrying short writes and EINTR. 0 or -errno. */
int fsutil_write_all(int fd, const void *data, size_t n);
/** Write `len` bytes to `file` through a temp name beside it, fsync, rename. 0 or -errno. */
int fsutil_write_atomic(const char *file, const void *data, size_t len);
/**
 * Finish a temp file written beside `output`: fsync, mode 0666 less the umask (mkstemp made it
 * 0600), rename over `output`. 0 or -errno; the caller removes `tmp` on failure.
 */
int fsutil_commit(int fd, const char *tmp, const char *output);
/**
 * Finish a temp file `tmp` written beside `final` (`ret`: the writer's result so far): when 0,
 * fsync and rename over `final`; `fd` is closed in any case, and `tmp` removed on any failure.
 * Returns `ret`, or the first error of fsync/close/rename as -errno.
 */
int fsutil_close_rename(int fd, int ret, const char *tmp, const char *final);
/** mkdir -p with mode 0755 (an existing directory is fine). 0 or -errno. */
int fsutil_mkdirs(const char *path);
/**
 * Ask the filesystem to place the directories created in `path` (a directory) away from other
 * trees: ext4's "top of a hierarchy" flag (chattr +T). Where that is not supported nothing
 * happens. See fsutil_mkdir_apart().
 */
void fsutil_spread(const char *path);
/**
 * mkdir `path` (its parent marked by fsutil_spread) with `mode`, in a block group of its own:
 * created under a random name, then renamed. 0 or -errno.
 */
int fsutil_mkdir_apart(const char *path, mode_t mode);
/** rm -rf without following symlinks; read-only directories are made writable first. */
int fsutil_remove_tree(const char *path);

/**
 * A private work directory TMP/mkimage.XXXXXX (new string in *path) holding an exclusive flock
 * on its WORKDIR_LOCK file for as long as *lock_fd stays open, so that a later build can tell
 * it from the leftovers of a killed one. 0 or -errno.
 */
int fsutil_workdir_create(const char *tmp, char **path, int *lock_fd);
/**
 * Remove work directories in `tmp` left by builds that died without cleaning up (SIGKILL, power
 * loss): ours (same owner), with a lock file nobody holds. Directories without one (an older
 * mkimage, --keep-staging, one being created) are left alone. Returns how many were removed.
 */
unsigned fsutil_workdir_sweep(const char *tmp, const char *own);
/** Give up the lock file so the directory is kept (--keep-staging). */
void fsutil_workdir_keep(const char *path, int lock_fd);

#define WORKDIR_LOCK ".mkimage-lock"

#endif
