/*
 * The content-addressed cache shared by every mkimage process of a user: objects named by their
 * SHA-256, written through a temp file in the same directory, fsync'ed and renamed only once
 * verified. Readers never see a torn object; writers of one object serialise on a lock file.
 *
 * Layout under the cache directory:
 *   objects/sha256/ab/abcd...     verified downloads (.debs, compressed indexes)
 *   indexes/abcd...               decompressed Packages, named by the compressed file's SHA-256
 *   releases/KEY/InRelease        the last verified InRelease (or Release + Release.gpg) of a source
 *   locks/abcd...                 empty lock files (flock), one per object ever written
 *   layers/abcd...                configured trees, named by their key's SHA-256 (layer.h)
 * Temp files live next to their final name as .NAME.XXXXXX (same directory: rename is atomic).
 * users/ and gc.lock belong to expiry (cachegc.h).
 */
#ifndef MKI_CACHE_H
#define MKI_CACHE_H

#include <stdint.h>
#include <sys/types.h>

/** Path of object `sha256` (64 hex digits) in `cache_dir`; a new string. */
char *cache_object_path(const char *cache_dir, const char *sha256);

/** Path of the layer named `key` (layer.h) in `cache_dir`; a new string. */
char *cache_layer_path(const char *cache_dir, const char *key);

/**
 * Look up object `sha256`. Returns 1 and sets `*path` (new string) when it exists with `size` bytes
 * (size 0: any), 0 when it does not, or a negative errno.
 */
int cache_lookup(const char *cache_dir, const char *sha256, uint64_t size, char **path);

/**
 * Create the directories for `final` and open a new temp file next to it (mode 0644).
 * Returns the fd and sets `*tmp` (new string), or a negative errno.
 */
int cache_tmp_open(const char *final, char **tmp);

/**
 * Make a finished temp file permanent: fsync it, rename it to `final`, fsync the directory.
 * `fd` is closed in every case. On failure the temp file is removed. Returns 0 or a negative errno.
 */
int cache_commit(int fd, const char *tmp, const char *final);

/**
 * Write `n` bytes as the file `final` whole: a temp file beside it, its mtime `mtime` when it is
 * > 0 (a Release kept as the server dated it), then cache_commit(). 0 or a negative errno, and
 * nothing at `final` changed on failure.
 */
int cache_store(const char *final, const void *p, size_t n, time_t mtime);

/**
 * Rename a closed temp file that is verified and already fsync'ed to `final` (no directory sync:
 * after a crash the object is either complete or absent). On failure the temp file is removed.
 * Returns 0 or a negative errno.
 */
int cache_publish(const char *tmp, const char *final);

/**
 * Remove the temp files of `final` that a killed process left (SIGKILL, power loss). Only while
 * holding `final`'s lock: its holder is the only writer, so no live process is writing them.
 */
void cache_sweep_tmp(const char *final);

/** Remove an unfinished temp file (closing `fd` if >= 0). */
void cache_discard(int fd, const char *tmp);

/**
 * Take the writer lock of object `key` (a SHA-256 or any file-name-safe string). With `wait` 0,
 * returns -EWOULDBLOCK when another process holds it; with `wait` 1, waits for it, but returns
 * -MKI_E_INTERRUPTED within a fraction of a second of SIGINT/SIGTERM (err_interrupted()).
 * Returns the lock fd (release with cache_unlock) or a negative errno. Locks are not reentrant:
 * a second lock of one key by the same process waits for the first to be released.
 */
int cache_lock(const char *cache_dir, const char *key, int wait);
void cache_unlock(int fd);

/**
 * flock(`fd`, `op`) (LOCK_EX or LOCK_SH), waiting as cache_lock does: by polling, so SIGINT or
 * SIGTERM ends the wait with -MKI_E_INTERRUPTED. Returns 0 or a negative errno.
 */
int cache_flock_wait(int fd, int op);

#endif
