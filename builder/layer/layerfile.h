/*
 * The on-disk form of a layer (layer.h): a configured staging tree and the stage's description
 * of it, in one uncompressed file that restores with copy_file_range and checks itself.
 *
 *   data     the regular files' data extents, back to back (holes are not stored)
 *   meta     records: every tree entry in walk order (path, type, owner as a command in the
 *            sandbox sees it, mode, mtime in ns, size, extents, hard link, link text, xattrs),
 *            then the stage's manifest entries, its path-filter counts, its lint text and the
 *            packages' copyright files as unpacked (dep5_texts: the SBOM's licences, read before
 *            any script ran; version 2)
 *   trailer  magic, format version, byte order, the lengths of data and meta, and the SHA-256
 *            of data + meta
 *
 * Owners are stored id-neutral (idshift_inside_uid) and restored through idshift_tree_uid, so a
 * root build's shifted tree and a user build's mapped one store the same layer. Device nodes and
 * sockets never are in a tree (the manifest alone holds devices): a tree with one is not stored.
 */
#ifndef MKI_LAYERFILE_H
#define MKI_LAYERFILE_H

#include "debian/dep5.h"
#include "lib/str.h"
#include "tree/staging.h"

/** Format version: bumped whenever the file layout or what it records changes. */
#define LAYERFILE_VERSION 2

/**
 * Write the tree `rootfd` and `s`'s manifest and filter counts, with `lint` (the stage's
 * multiarch lint text) and `texts` (the copyright files as unpacked; NULL: none), to the empty
 * file `fd`. 0; -EOPNOTSUPP for a tree that cannot be stored
 * (logged at info level, naming the entry), also one of more than `max_entries` entries (the
 * build refuses it after the hooks: it is neither held in memory nor cached); or a negative
 * errno (not logged).
 */
int layerfile_write(int fd, int rootfd, const struct staging *s, const char *lint,
		    const struct dep5_texts *texts, uint64_t max_entries);

/**
 * Check the layer file `fd` (named `name`): its size, trailer and digest. 0, or -EBADMSG for a
 * truncated or corrupt file, -EPROTO for another format version (both logged as warnings), or a
 * negative errno.
 */
int layerfile_check(int fd, const char *name);

/**
 * Restore the layer `fd` into the empty directory `rootfd`, filling `s->manifest` (an
 * initialised, empty manifest), `s->filtered`, `lint` and `texts` (empty; the caller releases it
 * with dep5_texts_release() also on error), and check it as layerfile_check() does
 * meanwhile. 0 only if both succeeded; otherwise a negative code (logged), and the caller removes
 * the half-restored tree, which must not be used.
 */
int layerfile_restore(int fd, const char *name, int rootfd, struct staging *s, struct buf *lint,
		      struct dep5_texts *texts);

#endif
