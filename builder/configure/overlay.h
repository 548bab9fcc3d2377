/*
 * Overlays: directories beside the recipe copied into the tree after configuration and before
 * the hooks, owned by root (or the overlay's owner), modes kept, times clamped to the epoch.
 * The source is trusted (it is part of the recipe) but checked like one: only directories,
 * regular files, symlinks that stay inside it and, when allowed, device nodes and FIFOs. The
 * tree is not trusted (scripts ran in it): every write goes through beneath.h.
 */
#ifndef MKI_OVERLAY_H
#define MKI_OVERLAY_H

#include <stddef.h>
#include <stdint.h>

#include "lib/str.h"
#include "recipe/recipe.h"

struct staging;

/** What one overlay put into the tree (for the build report). */
struct overlay_result {
	const struct recipe_overlay *o; /* borrowed from the recipe */
	unsigned files, dirs, links, specials; /* created or replaced; existing directories kept */
	uint64_t bytes;                 /* of the regular files */
	struct strv replaced;           /* "/PATH (PACKAGE)" of package files it replaced */
};

struct overlay_report {
	struct overlay_result *v;
	size_t n;
};

/**
 * Read the source tree of `o` and check that it can be copied: entries are directories, regular
 * files and symlinks (device nodes and FIFOs only with o->devices, sockets never) and relative
 * symlinks stay inside it (absolute ones name paths of the image). Fills o->digest with the
 * sha256 of its sorted listing (path, type, mode, size, link target or device numbers) and file
 * contents; times are not part of it. Errors are logged as "FILE:LINE: overlay 'SOURCE': ..."
 * (`file`: the recipe, o->line) and returned as -MKI_E_RECIPE; -MKI_E_INTERRUPTED on a signal.
 */
int overlay_check(struct recipe_overlay *o, const char *file);

/**
 * Whether a symlink at `path` (relative to an overlay's root, "dir/name") with link text
 * `target` stays inside the overlay: absolute targets always do (they are image paths); a
 * relative one must not climb above the root. 1 or 0.
 */
int overlay_link_inside(const char *path, const char *target);

/**
 * Copy the overlays of `r`, in recipe order, into the tree of `s` (`rootfd`: an O_PATH fd of
 * s->root). The source is read again and must still match o->digest. New directories,
 * files, links and FIFOs get the overlay's owner (stored as the build's commands see it, see
 * idshift_tree_uid()) and its modes; directories that exist are kept as they are (a link to a
 * directory, such as merged /usr's /lib, is followed as dpkg follows it); mtimes are clamped to
 * `sde` (when >= 0). Device nodes are recorded in the manifest only (the sandbox cannot create
 * them). Every entry written is recorded in s->manifest under its canonical path with its
 * owner, mode and time; owning packages of a replaced file are kept.
 *
 * Refused, nothing more written: a file replacing a directory or, unless o->replace, a file a
 * package owns; a directory where the tree has something else; a missing destination parent.
 * These are recipe errors: logged with FILE:LINE, -MKI_E_RECIPE. I/O errors are -MKI_E_HOOK.
 * On success *out gets one result per overlay (the caller frees it: overlay_report_free), or
 * NULL without overlays; on error NULL.
 */
int overlay_apply(const struct recipe *r, struct staging *s, int rootfd, int64_t sde,
		  struct overlay_report **out);

/**
 * Before configuration: the refusals overlay_apply() would make against the unpacked tree of
 * `s` (a package's file without `replace`, a directory replaced by a file or the reverse), so
 * that a recipe error is said before minutes of maintainer scripts. Writes nothing; 0 or the
 * same logged -MKI_E_RECIPE.
 */
int overlay_precheck(const struct recipe *r, struct staging *s, int rootfd);

/** Append `"overlays": [ ... ],` (one line per overlay, two-space indent) to `b`. */
void overlay_report_json(const struct overlay_report *rep, struct buf *b);
/** Free the contents of `rep` and `rep` itself (NULL: nothing). */
void overlay_report_free(struct overlay_report *rep);

#endif
