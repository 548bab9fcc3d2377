/*
 * Reading files the user named (recipes, @includes, keyrings, hook scripts, local .debs, locks)
 * and files mkimage keeps (Release files in the cache): only regular files, never more than a
 * bound, and never past SIGINT/SIGTERM. A FIFO, /dev/zero or a directory named by mistake or by
 * malice then fails at once with a message that says what it is, instead of hanging the build.
 */
#ifndef MKI_READFILE_H
#define MKI_READFILE_H

#include <stddef.h>
#include <sys/types.h>

#include "str.h"

/** "a FIFO", "a character device", "a directory"...: what a non-regular file is, for messages. */
const char *readfile_kind(mode_t mode);

/**
 * Open `path` for reading without blocking on a FIFO, and require a regular file (a symlink to
 * one is fine). Returns the fd (blocking again), -errno, or -EINVAL when it is not a regular file
 * (`*kind`, when not NULL, gets readfile_kind() of it).
 */
int readfile_open(const char *path, const char **kind);

/**
 * Require a regular file at `fd` (opened with O_NONBLOCK, so a FIFO did not block the open) and
 * make it blocking again: `fd`, or -errno or -EINVAL (not a regular file, `*kind` as above), `fd`
 * then closed.
 */
int readfile_regular_fd(int fd, const char **kind);

/**
 * Replace `b`'s contents with the whole of regular file `path`: -EFBIG beyond `limit` bytes,
 * -EINVAL for a non-regular file (`*kind` as above), -MKI_E_INTERRUPTED on SIGINT/SIGTERM, -errno.
 */
int readfile_read(const char *path, size_t limit, struct buf *b, const char **kind);

/**
 * As readfile_read(), from `fd`, which the caller opened with O_NONBLOCK (so a FIFO did not block
 * the open) and which is closed here in every case.
 */
int readfile_read_fd(int fd, size_t limit, struct buf *b, const char **kind);

/**
 * Words for a readfile_* failure `err`: "a FIFO, not a regular file" (with `kind`), "larger
 * than the limit", or strerror(). Static or `kind`-based; valid until the next call.
 */
const char *readfile_why(int err, const char *kind);

#endif
