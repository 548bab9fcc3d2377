/* What the unpack step's files share: its state and the functions one calls in another. */
#ifndef MKI_UNPACK_CTX_H
#define MKI_UNPACK_CTX_H

#include <stdint.h>

#include "debian/pathfilter.h"
#include "lib/runlimits.h"
#include "pkg.h"
#include "tree/staging.h"

#define DECODE_AHEAD 16             /* packages decoded ahead of the applied one, per worker */
#define DECODE_BUDGET (64ull << 20) /* decoded bytes waiting to be applied, beyond the next one */
#define LAZY_OVER (1ull << 20)      /* streamed: files larger are copied in chunks, never held */

struct unpack_ctx {
	struct staging_writer w;  /* the tree, the manifest, the time of what unpack creates */
	const struct limits *lim;
	uint64_t entries, bytes; /* unpacked so far, all packages together */
	struct pkg *pkgs;
	size_t n_pkgs;
	unsigned nodes_skipped; /* device nodes the kernel would not let us create */
	uint64_t stream_max;    /* packages decoding to more bytes are streamed, not decoded ahead */
	char *cache_key;        /* package path of the last parent directory resolved ... */
	char *cache_tree;       /* ... its canonical tree path ... */
	int cache_fd;           /* ... and an O_PATH fd on it */
	struct pathfilter filter;         /* the recipe's path filters */
	struct pathfilter_count filtered; /* what they left out */
	int spool_fd;                     /* where the workers write contents (spool.h) */
};

/* A resolved place for a package path: parent directory fd (borrowed) and name in it. */
struct unpack_place {
	int dirfd;
	char *tree; /* canonical tree path of the object */
	const char *name;
};


/* unpack_write.c: where a path lands and how an object is written there */

/** Open directory `canon` (a canonical tree path) beneath `rootfd`: no symlink on the way. */
int unpack_open_beneath(int rootfd, const char *canon, int flags);
/** Forget the last parent directory resolved (its fd closed): the tree changed there. */
void unpack_cache_drop(struct unpack_ctx *c);
/** Log why package path `path` of `k` could not be resolved (`r`, `bad`); returns the code. */
int unpack_resolve_error(struct pkg *k, const char *path, int r, const char *bad);
/** Resolve package path `norm` of `k` to its parent directory and name in the tree (`pl`). */
int unpack_locate(struct unpack_ctx *c, struct pkg *k, const char *norm, struct unpack_place *pl);
/** Set the modification time of `name` in `dirfd`, not following a symlink. */
void unpack_set_times(int dirfd, const char *name, int64_t mtime);
/** Give `name` in `dirfd` the owner of `e` where the kernel allows (recorded in any case). */
void unpack_meta_at(struct unpack_ctx *c, int dirfd, const char *name, const struct deb_entry *e);
/** Fill manifest entry `me` from the tar header `e`. */
void unpack_manifest_fill(struct manifest_entry *me, const struct deb_entry *e);
/** Add package `owner` to the owners of `me`. */
void unpack_owner_add(struct manifest_entry *me, const char *owner);
/**
 * Write `f` of `k` at `pl` (replacing what `exists` there); `*first` is the regular file a
 * hard link points to, or NULL.
 */
int unpack_create_object(struct unpack_ctx *c, struct pkg *k, struct pfile *f,
			 const struct unpack_place *pl, int exists, struct manifest_entry **first);

/* unpack_entry.c: one package's entries applied */

/** Apply every entry of `k` (decoded or streamed) to the tree, in archive order. */
int unpack_apply_pkg(struct unpack_ctx *c, struct pkg *k);

#endif
