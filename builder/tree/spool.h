/*
 * The unpacker's spool: a private directory beside the staging tree, on its filesystem, into
 * which the worker threads that decode packages ahead write the contents of their regular files
 * (pkg.c), and from which the applying thread moves each file into the tree with one rename
 * (unpack.c). Creating a file's inode and copying its bytes into the page cache, the costly
 * part of writing it, so run on the workers, in parallel, and decoded contents never wait in
 * memory. The spool's names are mkimage's own ("<package>/<file>", both indexes), never a
 * package's, and nothing in it is ever followed.
 */
#ifndef MKI_SPOOL_H
#define MKI_SPOOL_H

#include <stdint.h>

#define SPOOL_DIR "unpack-spool" /* in the work directory, beside the tree */

/** Create <work_dir>/SPOOL_DIR and open it: 0 with *dirfd set, or a negative errno (logged). */
int spool_open(const char *work_dir, int *dirfd);
/** Close `dirfd` (-1: nothing) and remove the spool with anything left in it. */
void spool_close(const char *work_dir, int dirfd);
/**
 * 1 if the spooled file `name` (relative to the spool's `dirfd`) holds the same `size` bytes
 * as the open file `fd` from its start, else 0 (an unreadable file differs).
 */
int spool_same(int dirfd, const char *name, int fd, uint64_t size);

#endif
