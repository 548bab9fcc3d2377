/* The staging tree: what unpack produces and later stages (configure, verify, image) work on. */
#ifndef MKI_STAGING_H
#define MKI_STAGING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "debian/pathfilter.h"
#include "lib/manifest.h"

struct staging {
	char *root;               /* absolute path of the staging tree: <work_dir>/root */
	char *manifest_file;      /* <work_dir>/manifest: the manifest as saved after unpacking */
	char *lint_file;          /* <work_dir>/multiarch-lint: files outside triplet paths */
	struct manifest manifest;
	struct pathfilter_count filtered; /* what the recipe's path filters left out */
};

/**
 * Start the staging tree `s` (its paths NULL) in `work_dir`: name its files and create its tree, new
 * and empty, in a block group of its own (fsutil_mkdir_apart). An O_PATH descriptor of the tree, or
 * a negative errno (logged).
 */
int staging_init(struct staging *s, const char *work_dir);
/** Free what `s` holds (the tree on disk stays) and zero it. */
void staging_release(struct staging *s);

/*
 * Writing into the staging tree what no package ships (merged-/usr links, the dpkg database) and
 * setting the owners of what packages ship. Paths are canonical tree paths ("var/lib/dpkg").
 */
struct staging_writer {
	int rootfd;          /* the tree (borrowed) */
	struct manifest *m;  /* where what is written is recorded (borrowed) */
	int64_t mtime;       /* of everything written here */
	int can_chown;       /* 1 to try; cleared at the first EPERM/EINVAL */
};

/**
 * Give `dirfd`/`name` ("" means `dirfd` itself; a link is not followed) the owner a command in
 * the sandbox sees as `uid`:`gid` (shifted in root builds, see idshift_tree_uid()). Every owner
 * set in the tree goes through here. A refusal is logged once (debug) and then not tried again.
 */
void staging_chown(struct staging_writer *w, int dirfd, const char *name, uid_t uid, gid_t gid);
/** Record `path` in the manifest as 0:0 `mode` at w->mtime, owned by no package. */
struct manifest_entry *staging_own_entry(struct staging_writer *w, const char *path, char type,
					uint32_t mode);
/**
 * mkdir -p of canonical `path`, each new directory 0755 0:0 and recorded. A non-directory on
 * the way is never followed: -MKI_E_PACKAGE. Errors are logged.
 */
int staging_mkdirs(struct staging_writer *w, const char *path);
/**
 * Write `path` (its parent a real directory, no symlink on the way) atomically: `len` bytes of
 * `data`, 0:0 `mode` at w->mtime, recorded in the manifest. 0 or a negative errno (logged).
 */
int staging_write_file(struct staging_writer *w, const char *path, const char *data, size_t len,
		     uint32_t mode);

#endif
