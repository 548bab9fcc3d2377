/*
 * One package being unpacked: its .deb decoded by a worker thread (control file, conffiles,
 * every data.tar entry, the contents of its regular files written into the spool, spool.h), or,
 * for one too big to decode ahead, read entry by entry by the applying thread (small files into
 * memory, lazy ones while written). Never touches the tree.
 */
#ifndef MKI_PKG_H
#define MKI_PKG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "debian/deb.h"
#include "debian/pathfilter.h"
#include "debian/plan.h"
#include "lib/hash.h"
#include "lib/manifest.h"
#include "lib/runlimits.h"
#include "lib/str.h"

#define PKG_CHUNK (128u << 10) /* lazy contents are read and compared in chunks of this size */
#define PKG_SPOOL_NAME 48       /* "<package index>/<file index>" and its NUL */

struct pfile {
	struct deb_entry e;
	char *data;  /* MF_REG contents, unless lazy or spooled */
	int lazy;    /* 1: contents still in data.tar, read while written; 2: all read */
	int spooled; /* 1: contents in the spool (pkg_spool_name()); 2: moved into the tree */
	struct hash md5_ctx; /* lazy: MD5 of what was read so far */
	uint64_t consumed;   /* lazy: bytes read */
	char md5[65];        /* MD5 of the contents once known (lazy == 2, or hashed spooling) */
};

/* One line of info/PKG.list and where it landed in the tree. */
struct lentry {
	char *pkgpath;  /* "/usr/bin/x" as the package names it; NULL once replaced */
	char *treepath; /* canonical path in the tree */
	char type;      /* what the package shipped there */
};

struct pkg {
	const struct plan_entry *pe;
	char *dpkg_name;
	int ma_same;
	struct deb *deb;
	struct deb_control ctl;
	struct pfile *files;
	size_t n_files, alloc_files;
	int err;
	char *errmsg;
	struct lentry *list;
	size_t n_list, alloc_list;
	struct strv conffiles, md5s;
	struct buf md5sums; /* generated as dpkg does when the package ships none */
	uint64_t mem;       /* decoded file data held */
	uint64_t meta;      /* what its entries' headers cost, roughly */
	int stream;         /* too big to decode ahead: the applying thread streams it */
	int refused;        /* the .deb itself is beyond a limit: it leaves the cache */
	const struct limits *lim; /* borrowed from the settings */
	const struct pathfilter *filter; /* borrowed from the unpacker */
	size_t id;          /* index in the plan: names the package's directory in the spool */
	int spool_fd;       /* the spool (spool.h; borrowed) */
	int spool_dir;      /* 1: the package's directory in the spool exists */
};

/** Record error `code` with a message naming the package; returns `code`. Nothing is logged. */
int pkg_fail(struct pkg *k, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** (Re)open k->pe->path and start over at its first data.tar entry: 0 or an error (recorded). */
int pkg_open(struct pkg *k);
/**
 * Append the next data.tar entry to k->files with its contents (written into the spool when
 * `spool`, else held in memory), or, for a regular file larger than `lazy_over`, lazily (read
 * later, while written): 1, 0 at the end, or an error (recorded).
 */
int pkg_next_file(struct pkg *k, uint64_t lazy_over, int spool);
/**
 * Worker thread: the whole package decoded, the contents of its regular files into the spool, or,
 * past `stream_max` bytes of contents (or too many entries' headers), nothing: k->stream then
 * tells the applying thread to stream it itself. Returns 0 or an error recorded with pkg_fail().
 */
int pkg_decode(struct pkg *k, uint64_t stream_max);
/** Add regular file `f` to the md5sums dpkg would generate, if the package ships none. */
void pkg_add_md5sum(struct pkg *k, const struct pfile *f);
/**
 * MD5 (hex) of a regular file's contents: 0, or -1 if unknown (a lazy file not read to its end,
 * a spooled one that was not hashed: pkg_next_file() hashes those the database needs).
 */
int pkg_file_md5(const struct pfile *f, char *hex);
/** Read on in a lazy file's contents from data.tar: bytes, 0 at its end, or an error (logged). */
ssize_t pkg_lazy_read(struct pkg *k, struct pfile *f, char *buf, size_t n);
/** Read what is left of a lazy file (its MD5 is then known): 0 or an error (logged). */
int pkg_lazy_drain(struct pkg *k, struct pfile *f);
/** The name, relative to the spool, of spooled file `f` of `k`. */
void pkg_spool_name(const struct pkg *k, const struct pfile *f, char name[PKG_SPOOL_NAME]);
/** Free the decoded entries and remove what is left of them in the spool (the rest stays). */
void pkg_drop_files(struct pkg *k);
/** Free everything `k` holds. */
void pkg_release(struct pkg *k);

#endif
