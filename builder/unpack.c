/*
 * Unpack: worker threads decode .debs (decompression is the cost) into memory, a bounded window
 * ahead of the main thread, which applies them strictly in plan order. Only the main thread
 * touches the tree, the manifest and the log, so the result never depends on thread timing.
 *
 * Paths are resolved in userspace with chroot semantics (symlinks followed as dpkg does, an
 * absolute link restarts at the staging root, a link climbing above the root is refused), then
 * the canonical directory is opened with beneath_open_canonical (openat2, no symlinks) so the
 * kernel guarantees that nothing outside the root is ever reached.
 */
#include "unpack.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "arch.h"
#include "beneath.h"
#include "deb.h"
#include "dpkgdb.h"
#include "err.h"
#include "fsutil.h"
#include "hash.h"
#include "log.h"
#include "pkgpath.h"
#include "runlimits.h"
#include "sandbox.h"
#include "str.h"

#define SYMLINK_MAX 40              /* symlinks followed while resolving one path (as Linux) */
#define DECODE_AHEAD 16             /* packages decoded ahead of the applied one, per worker */
#define DECODE_BUDGET (64ull << 20) /* decoded bytes waiting to be applied, beyond the next one */
#define STREAM_OVER (32ull << 20)   /* a package decoding to more is streamed, not held */
#define META_OVER (16ull << 20)     /* entries' headers held past this: count the rest first */
#define LAZY_OVER (1ull << 20)      /* streamed: files larger are copied in chunks, never held */
#define CHUNK (128u << 10)

struct pfile {
	struct deb_entry e;
	char *data; /* MF_REG contents, unless lazy */
	int lazy;   /* 1: contents still in data.tar, read while written; 2: all read */
	struct hash md5_ctx; /* lazy: MD5 of what was read so far */
	uint64_t consumed;   /* lazy: bytes read */
	char md5[65];        /* lazy == 2: MD5 of the contents */
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
	int ready;
	struct lentry *list;
	size_t n_list, alloc_list;
	struct strv conffiles, md5s;
	struct buf md5sums; /* generated as dpkg does when the package ships none */
	uint64_t mem;       /* decoded file data held */
	uint64_t meta;      /* what its entries' headers cost, roughly */
	uint64_t held;      /* what the pool counts for it between decode and apply */
	int stream;         /* too big to decode ahead: the applying thread streams it */
	int refused;        /* the .deb itself is beyond a limit: it leaves the cache */
	const struct limits *lim; /* borrowed from the settings */
};

struct ctx {
	int rootfd;
	const struct limits *lim;
	uint64_t entries, bytes; /* unpacked so far, all packages together */
	struct manifest *m;
	struct pkg *pkgs;
	size_t n_pkgs;
	int can_chown;
	int64_t mtime;          /* for what unpack itself creates */
	unsigned nodes_skipped; /* device nodes the kernel would not let us create */
	uint64_t stream_max;    /* packages decoding to more bytes are streamed, not decoded ahead */
	char *cache_key;        /* package path of the last parent directory resolved ... */
	char *cache_tree;       /* ... its canonical tree path ... */
	int cache_fd;           /* ... and an O_PATH fd on it */
};

/* A resolved place for a package path: parent directory fd (borrowed) and name in it. */
struct place {
	int dirfd;
	char *tree; /* canonical tree path of the object */
	const char *name;
};

/* --- decoding (worker threads) ------------------------------------------------------------- */

static int pkg_fail(struct pkg *k, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int pkg_fail(struct pkg *k, int code, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	free(k->errmsg);
	k->errmsg = xasprintf("package '%s' ('%s'): %s", k->dpkg_name, k->pe->path,
			      msg ? msg : "out of memory");
	free(msg);
	k->refused |= code == -MKI_E_LIMIT_PKG;
	return code;
}

static int check_field(struct pkg *k, const char *field, const char *want)
{
	const char *have = deb_control_get(&k->ctl, field);

	if (!have)
		return pkg_fail(k, -MKI_E_PACKAGE, "control file lacks the '%s' field", field);
	if (want && strcmp(have, want))
		return pkg_fail(k, -MKI_E_PACKAGE, "control says %s '%s' but the plan expects '%s'",
				field, have, want);
	return 0;
}

/* Debian policy 5.6.1 (names) and dpkg's architecture syntax: these name files in info/. */
static int valid_name(const char *s, const char *extra)
{
	const char *p;

	if (!s || !s[0] || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
		return 0;
	for (p = s; *p; p++)
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) &&
		    !strchr(extra, *p))
			return 0;
	return 1;
}

static int parse_conffiles(struct pkg *k)
{
	const struct deb_member *cf = deb_member(k->deb, "conffiles");
	const char *line, *end;
	size_t len;

	if (!cf)
		return 0;
	for (line = cf->data; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		len = strcspn(line, " \t\n");
		if (!len)
			continue;
		if (line[0] != '/')
			return pkg_fail(k, -MKI_E_PACKAGE,
					"conffile '%.*s' is not an absolute path", (int)len, line);
		strv_push_take(&k->conffiles, xstrndup(line, len));
		strv_push(&k->md5s, "newconffile");
	}
	return 0;
}

static int parse_control(struct pkg *k)
{
	const struct deb_member *c = deb_member(k->deb, "control");
	const char *why = NULL;
	int r = deb_control_parse(&k->ctl, c->data, &why);

	if (r)
		return pkg_fail(k, r, "malformed control file: %s", why);
	r = check_field(k, "Package", k->pe->name);
	if (!r)
		r = check_field(k, "Version", k->pe->version);
	if (!r)
		r = check_field(k, "Architecture", k->pe->arch);
	if (!r && (!valid_name(deb_control_get(&k->ctl, "Package"), "+-.") ||
		   !valid_name(deb_control_get(&k->ctl, "Architecture"), "-")))
		r = pkg_fail(k, -MKI_E_PACKAGE, "invalid package name '%s' or architecture '%s'",
			     deb_control_get(&k->ctl, "Package"),
			     deb_control_get(&k->ctl, "Architecture"));
	return r ? r : parse_conffiles(k);
}

static int read_data(struct pkg *k, struct pfile *f)
{
	size_t done = 0;
	ssize_t n;

	if (f->e.type != MF_REG || !f->e.size)
		return 0;
	f->data = xmalloc((size_t)f->e.size);
	while (done < f->e.size) {
		n = deb_read(k->deb, f->data + done, (size_t)f->e.size - done);
		if (n < 0)
			return pkg_fail(k, (int)n, "%s", deb_error(k->deb));
		if (!n)
			return pkg_fail(k, -MKI_E_PACKAGE, "'%s': data ends early (truncated)",
					f->e.path);
		done += (size_t)n;
	}
	return 0;
}

/* MD5 of a regular file's contents (a lazy one must have been read to its end). */
static int file_md5(const struct pfile *f, char *hex)
{
	struct hash h;

	if (f->lazy) {
		memcpy(hex, f->md5, sizeof(f->md5));
		return f->lazy == 2 ? 0 : -1;
	}
	if (hash_init(&h, HASH_MD5))
		return -1;
	hash_update(&h, f->data ? f->data : "", (size_t)f->e.size);
	hash_final_hex(&h, hex);
	return 0;
}

/* dpkg computes md5sums for packages that ship none (dpkg --audit wants them). */
static void add_md5sum(struct pkg *k, const struct pfile *f)
{
	const char *p = f->e.path;
	char hex[65];

	if (f->e.type != MF_REG || deb_member(k->deb, "md5sums") || file_md5(f, hex))
		return;
	while (*p == '.' || *p == '/')
		p++;
	buf_addf(&k->md5sums, "%s  %s\n", hex, p);
}

/* Read on in a lazy file's contents, straight from data.tar; 0 at its end. Errors are logged. */
static ssize_t lazy_read(struct pkg *k, struct pfile *f, char *buf, size_t n)
{
	ssize_t got;

	if (n > f->e.size - f->consumed)
		n = (size_t)(f->e.size - f->consumed);
	if (!n)
		return 0;
	got = deb_read(k->deb, buf, n);
	if (got <= 0) {
		log_error("package '%s' ('%s'): %s", k->dpkg_name, k->pe->path,
			  got ? deb_error(k->deb) : "data ends early (truncated)");
		return -MKI_E_PACKAGE;
	}
	hash_update(&f->md5_ctx, buf, (size_t)got);
	f->consumed += (uint64_t)got;
	if (f->consumed == f->e.size) {
		hash_final_hex(&f->md5_ctx, f->md5);
		f->lazy = 2;
	}
	return got;
}

/* Read what is left of a lazy file (its MD5 is then known). */
static int lazy_drain(struct pkg *k, struct pfile *f)
{
	char *buf;
	ssize_t n = 0;

	if (f->lazy != 1)
		return 0;
	buf = xmalloc(CHUNK);
	while ((n = lazy_read(k, f, buf, CHUNK)) > 0)
		;
	free(buf);
	return (int)n;
}

/*
 * Append the next data.tar entry to k->files with its contents, or, for a regular file larger
 * than `lazy_over`, lazily (read later, while written): 1, 0 at the end, or an error.
 */
static int next_file(struct pkg *k, uint64_t lazy_over)
{
	struct deb_entry e = { 0 };
	struct pfile *f;
	int r = deb_next(k->deb, &e);

	if (r <= 0) {
		deb_entry_release(&e);
		return r < 0 ? pkg_fail(k, r, "%s", deb_error(k->deb)) : 0;
	}
	ALLOC_GROW(k->files, k->n_files + 1, k->alloc_files);
	f = &k->files[k->n_files++];
	memset(f, 0, sizeof(*f));
	f->e = e;
	k->meta += sizeof(*f) + strlen(e.path) + (e.target ? strlen(e.target) : 0) + 32;
	/* A sparse member may declare gigabytes of holes: never held in memory, written sparse. */
	if (f->e.type == MF_REG && (f->e.size > lazy_over || f->e.sparse)) {
		f->lazy = 1;
		return hash_init(&f->md5_ctx, HASH_MD5) ? -ENOMEM : 1;
	}
	r = read_data(k, f);
	if (!r) {
		k->mem += f->e.size;
		add_md5sum(k, f);
	}
	return r ? r : 1;
}

static int open_pkg(struct pkg *k)
{
	int r;

	deb_free(k->deb);
	k->deb = NULL;
	r = deb_open(&k->deb, k->pe->path, k->lim);
	if (r)
		return pkg_fail(k, r == -MKI_E_LIMIT_PKG ? r : -MKI_E_PACKAGE, "%s",
				deb_error(k->deb));
	buf_release(&k->md5sums);
	buf_adds(&k->md5sums, "");
	return 0;
}

static void pkg_drop_files(struct pkg *k);

/*
 * A package of very many entries (a real one has at most some tens of thousands): read on through
 * its headers only, which deb_next() checks against the limits, so that one beyond 'deb-entries'
 * or 'deb-data' is refused before any of it is written, holding nothing meanwhile.
 */
static int count_rest(struct pkg *k)
{
	struct deb_entry e = { 0 };
	int r;

	while ((r = deb_next(k->deb, &e)) == 1)
		;
	deb_entry_release(&e);
	return r < 0 ? pkg_fail(k, r, "%s", deb_error(k->deb)) : 0;
}

/*
 * Worker: the whole package into memory, or, past `stream_max` bytes (or META_OVER bytes of
 * headers), nothing: k->stream then tells the applying thread to stream it itself, one file at
 * a time.
 */
static int decode(struct pkg *k, uint64_t stream_max)
{
	int r = open_pkg(k), many;

	if (!r)
		r = parse_control(k);
	if (r)
		return r;
	while ((r = next_file(k, stream_max)) == 1) {
		many = k->meta > META_OVER;
		if (many || k->mem > stream_max || k->files[k->n_files - 1].lazy) {
			pkg_drop_files(k);
			k->mem = k->meta = 0;
			k->stream = 1;
			return many ? count_rest(k) : 0;
		}
	}
	return r < 0 ? r : 0;
}

static void pkg_drop_files(struct pkg *k)
{
	size_t i;

	for (i = 0; i < k->n_files; i++) {
		deb_entry_release(&k->files[i].e);
		free(k->files[i].data);
		if (k->files[i].lazy == 1)
			hash_release(&k->files[i].md5_ctx);
	}
	free(k->files);
	k->files = NULL;
	k->n_files = k->alloc_files = 0;
}

static void pkg_release(struct pkg *k)
{
	size_t i;

	pkg_drop_files(k);
	deb_free(k->deb);
	deb_control_release(&k->ctl);
	for (i = 0; i < k->n_list; i++) {
		free(k->list[i].pkgpath);
		free(k->list[i].treepath);
	}
	free(k->list);
	strv_release(&k->conffiles);
	strv_release(&k->md5s);
	buf_release(&k->md5sums);
	free(k->dpkg_name);
	free(k->errmsg);
}

/* --- the worker pool ------------------------------------------------------------------------ */

struct pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pkg *pkgs;
	size_t n, next, applied, window;
	uint64_t inflight; /* decoded bytes not yet applied */
	uint64_t stream_max; /* a package decoding to more is streamed by the applying thread */
	int stop;
};

/* Decode package p->next now? Always the next one to apply; others within both bounds. */
static int pool_may_decode(const struct pool *p)
{
	if (p->next == p->applied)
		return 1;
	return p->next < p->applied + p->window && p->inflight < DECODE_BUDGET;
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->stop && p->next < p->n && !pool_may_decode(p))
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop || p->next >= p->n) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		p->pkgs[i].err = decode(&p->pkgs[i], p->stream_max);
		pthread_mutex_lock(&p->mu);
		p->pkgs[i].held = p->pkgs[i].mem + p->pkgs[i].meta;
		p->inflight += p->pkgs[i].held;
		p->pkgs[i].ready = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
}

static void pool_wait(struct pool *p, size_t i)
{
	pthread_mutex_lock(&p->mu);
	while (!p->pkgs[i].ready)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

static void pool_done(struct pool *p, size_t i)
{
	pthread_mutex_lock(&p->mu);
	p->applied = i + 1;
	p->inflight -= p->pkgs[i].held;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static void pool_stop(struct pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static unsigned worker_count(const struct settings *st, size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned w = st->jobs ? st->jobs : 1;

	if (cpus > 0 && w > (unsigned long)cpus)
		w = (unsigned)cpus;
	if (w > n)
		w = (unsigned)n;
	return w ? w : 1;
}

/* --- path resolution inside the root ------------------------------------------------------- */

/* Directory `canon` (a canonical tree path): no symlink may be on the way, none at its end. */
static int open_beneath(int rootfd, const char *canon, int flags)
{
	return beneath_open_canonical(rootfd, canon, flags | O_DIRECTORY);
}

static void buf_truncate_last(struct buf *b)
{
	char *slash = strrchr(b->p, '/');

	b->len = slash ? (size_t)(slash - b->p) : 0;
	b->p[b->len] = 0;
}

/* Follow symlink `at` (a tree path): replace *rest by target + "/" + remainder. */
static int splice_link(struct ctx *c, const char *at, char **rest, const char *remainder,
		       struct buf *out)
{
	char target[DEB_PATH_MAX];
	ssize_t n = readlinkat(c->rootfd, at, target, sizeof(target) - 1);
	char *next;

	if (n < 0)
		return -errno;
	target[n] = 0;
	next = xasprintf("%s/%s", target, remainder);
	free(*rest);
	*rest = next;
	if (target[0] == '/') {
		out->len = 0;
		out->p[0] = 0;
	}
	return 0;
}

/*
 * Resolve `path` (normalized, relative to the root) to the canonical path of a directory in
 * `out`, following symlinks with the root as "/". -ENOENT/-ENOTDIR name the failing component
 * in `bad`; -ELOOP for too many links; -EXDEV when a symlink climbs above the root.
 */
static int resolve_dir(struct ctx *c, const char *path, struct buf *out, struct buf *bad)
{
	char *rest = xstrdup(path), *p = rest, *end;
	unsigned links = 0;
	struct stat st;
	int r = 0;

	buf_adds(out, "");
	out->len = 0;
	out->p[0] = 0;
	while (!r && *p) {
		size_t mark = out->len;

		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		if (end == p || (end - p == 1 && *p == '.')) {
			p = end;
			continue;
		}
		if (end - p == 2 && !strncmp(p, "..", 2)) {
			if (!out->len)
				r = -EXDEV;
			else
				buf_truncate_last(out);
			p = end;
			continue;
		}
		if (out->len)
			buf_adds(out, "/");
		buf_add(out, p, (size_t)(end - p));
		if (fstatat(c->rootfd, out->p, &st, AT_SYMLINK_NOFOLLOW)) {
			r = -errno;
		} else if (S_ISLNK(st.st_mode)) {
			char *link = xstrdup(out->p);

			out->len = mark;
			out->p[mark] = 0;
			r = ++links > SYMLINK_MAX ? -ELOOP : splice_link(c, link, &rest, end, out);
			free(link);
			p = rest;
			continue;
		} else if (!S_ISDIR(st.st_mode)) {
			r = -ENOTDIR;
		}
		p = end;
	}
	if (r && bad) {
		bad->len = 0;
		buf_adds(bad, out->p);
	}
	free(rest);
	return r;
}

static void cache_drop(struct ctx *c)
{
	if (c->cache_fd >= 0)
		close(c->cache_fd);
	c->cache_fd = -1;
	free(c->cache_key);
	free(c->cache_tree);
	c->cache_key = c->cache_tree = NULL;
}

static int resolve_error(struct pkg *k, const char *path, int r, const char *bad)
{
	if (r == -EXDEV)
		log_error("package '%s': '%s' leads outside the root through a symlink (hostile "
			  "package?)", k->dpkg_name, path);
	else if (r == -ENOENT)
		log_error("package '%s': cannot unpack '%s': directory '/%s' does not exist (the "
			  "package lacks it, or a symlink points nowhere)",
			  k->dpkg_name, path, bad);
	else if (r == -ENOTDIR)
		log_error("package '%s': cannot unpack '%s': '/%s' is not a directory",
			  k->dpkg_name, path, bad);
	else if (r == -ELOOP)
		log_error("package '%s': cannot unpack '%s': too many levels of symlinks",
			  k->dpkg_name, path);
	else
		log_error("package '%s': cannot unpack '%s': %s", k->dpkg_name, path,
			  mki_strerror(r));
	return r == -ENOMEM ? r : -MKI_E_PACKAGE;
}

/* Place of `norm` (a normalized package path, not the root): its parent resolved. */
static int locate(struct ctx *c, struct pkg *k, const char *norm, struct place *pl)
{
	const char *slash = strrchr(norm, '/');
	char *parent = slash ? xstrndup(norm, (size_t)(slash - norm)) : xstrdup("");
	struct buf canon = { 0 }, bad = { 0 };
	int r = 0;

	pl->name = slash ? slash + 1 : norm;
	if (!c->cache_key || strcmp(c->cache_key, parent)) {
		cache_drop(c);
		r = resolve_dir(c, parent, &canon, &bad);
		if (!r && (c->cache_fd = open_beneath(c->rootfd, canon.p, O_PATH)) < 0)
			r = c->cache_fd;
		if (r) {
			r = resolve_error(k, norm, r, bad.p ? bad.p : "");
			cache_drop(c);
			goto out;
		}
		c->cache_key = parent;
		c->cache_tree = buf_detach(&canon);
		parent = NULL;
	}
	pl->dirfd = c->cache_fd;
	pl->tree = *c->cache_tree ? xasprintf("%s/%s", c->cache_tree, pl->name) : xstrdup(pl->name);
out:
	free(parent);
	buf_release(&canon);
	buf_release(&bad);
	return r;
}

/* --- metadata ------------------------------------------------------------------------------ */

static void note_chown_failed(struct ctx *c, int err)
{
	if (c->can_chown && (err == EPERM || err == EINVAL)) {
		c->can_chown = 0;
		log_debug("cannot change ownership here (%s): owners are kept in the manifest only",
			  strerror(err));
	}
}

/*
 * Every owner the unpacker sets goes through here: the tree holds the owner a command sees as
 * `uid`:`gid` (shifted in root builds, see sandbox_tree_uid()). `name` "" means `dirfd` itself.
 */
static void tree_chown(struct ctx *c, int dirfd, const char *name, uid_t uid, gid_t gid)
{
	int flags = *name ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH;

	if (c->can_chown &&
	    fchownat(dirfd, name, sandbox_tree_uid(uid), sandbox_tree_gid(gid), flags))
		note_chown_failed(c, errno);
}

static void set_times(int dirfd, const char *name, int64_t mtime)
{
	struct timespec ts[2] = { { .tv_sec = mtime }, { .tv_sec = mtime } };

	utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
}

/* Owner, mode, xattrs and time of a freshly written regular file. */
static int meta_fd(struct ctx *c, int fd, const struct deb_entry *e)
{
	struct timespec ts[2] = { { .tv_sec = e->mtime }, { .tv_sec = e->mtime } };
	size_t i;

	tree_chown(c, fd, "", e->uid, e->gid);
	if (fchmod(fd, e->mode))
		return -errno;
	for (i = 0; i < e->n_xattrs; i++)
		if (fsetxattr(fd, e->xattrs[i].name, e->xattrs[i].value, e->xattrs[i].len, 0))
			log_debug("xattr '%s' on '%s' kept in the manifest only: %s",
				  e->xattrs[i].name, e->path, strerror(errno));
	return futimens(fd, ts) ? -errno : 0;
}

static void meta_at(struct ctx *c, int dirfd, const char *name, const struct deb_entry *e)
{
	tree_chown(c, dirfd, name, e->uid, e->gid);
}

static void manifest_fill(struct manifest_entry *me, const struct deb_entry *e)
{
	size_t i;

	for (i = 0; i < me->n_xattrs; i++) {
		free(me->xattrs[i].name);
		free(me->xattrs[i].value);
	}
	free(me->xattrs);
	me->xattrs = NULL;
	me->n_xattrs = 0;
	free(me->target);
	me->target = NULL;
	me->type = e->type;
	me->mode = e->type == MF_SYMLINK ? 0777 : e->mode; /* what Linux gives every symlink */
	me->uid = e->uid;
	me->gid = e->gid;
	me->mtime = e->mtime;
	me->major = e->type == MF_CHR || e->type == MF_BLK ? e->major : 0;
	me->minor = e->type == MF_CHR || e->type == MF_BLK ? e->minor : 0;
	me->size = e->size;
	if (e->type == MF_SYMLINK)
		me->target = xstrdup(e->target);
	for (i = 0; i < e->n_xattrs; i++)
		manifest_set_xattr(me, e->xattrs[i].name, e->xattrs[i].value, e->xattrs[i].len);
}

static void owner_add(struct manifest_entry *me, const char *owner)
{
	if (!strv_contains(&me->owners, owner))
		strv_push(&me->owners, owner);
}

/* --- writing objects ----------------------------------------------------------------------- */

/* Copy a lazy file from data.tar to `fd` in chunks. */
static int all_zero(const char *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/*
 * Stream a lazy file to `fd`. For a sparse member, blocks of zeros are skipped (holes), and the
 * size is set at the end: a 648-byte .deb declaring a 3 GiB sparse file costs no disk, and the
 * image writer keeps the holes (it copies only what SEEK_DATA finds). Other files are written
 * as they are, so their images never change.
 */
static int write_lazy(struct pkg *k, struct pfile *f, int fd)
{
	char *buf = xmalloc(CHUNK);
	off_t pos = 0;
	ssize_t n;
	int r = 0;

	while (!r && (n = lazy_read(k, f, buf, CHUNK)) != 0) {
		if (n < 0)
			r = (int)n;
		else if (f->e.sparse && all_zero(buf, (size_t)n))
			r = lseek(fd, n, SEEK_CUR) < 0 ? -errno : 0;
		else
			r = fsutil_write_all(fd, buf, (size_t)n);
		pos += n > 0 ? n : 0;
	}
	if (!r && f->e.sparse && ftruncate(fd, pos) < 0)
		r = -errno;
	free(buf);
	return r;
}

static int write_reg(struct ctx *c, struct pkg *k, struct pfile *f, const struct place *pl,
		     const char *tmp)
{
	int fd = openat(pl->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int r;

	if (fd < 0)
		return -errno;
	r = f->lazy ? write_lazy(k, f, fd) : fsutil_write_all(fd, f->data, (size_t)f->e.size);
	if (!r)
		r = meta_fd(c, fd, &f->e);
	if (close(fd) && !r)
		r = -errno;
	return r;
}

static int write_link(struct ctx *c, struct pkg *k, struct pfile *f,
		      const struct place *pl, const char *tmp, struct manifest_entry **first);

static int write_node(struct ctx *c, struct pfile *f, const struct place *pl,
		      const char *tmp, int *skipped)
{
	mode_t t = f->e.type == MF_CHR ? S_IFCHR : f->e.type == MF_BLK ? S_IFBLK : S_IFIFO;

	if (f->e.type == MF_SOCK || mknodat(pl->dirfd, tmp, t | (f->e.mode & 0777),
					     makedev(f->e.major, f->e.minor))) {
		if (f->e.type != MF_SOCK && errno != EPERM)
			return -errno;
		*skipped = 1; /* kept in the manifest: the image writer creates it */
		c->nodes_skipped += f->e.type != MF_SOCK;
		return 0;
	}
	meta_at(c, pl->dirfd, tmp, &f->e);
	if (fchmodat(pl->dirfd, tmp, f->e.mode, 0))
		return -errno;
	set_times(pl->dirfd, tmp, f->e.mtime);
	return 0;
}

/*
 * Create the object of `f`: straight at `pl->name` when nothing is there (no rename to pay),
 * else under a temporary name renamed over the old object, as dpkg does.
 */
static int create_object(struct ctx *c, struct pkg *k, struct pfile *f,
			 const struct place *pl, int exists, struct manifest_entry **first)
{
	char *tmp = exists ? xasprintf("%s.dpkg-new", pl->name) : xstrdup(pl->name);
	int r = 0, skipped = 0;

	if (exists)
		unlinkat(pl->dirfd, tmp, 0);
	switch (f->e.type) {
	case MF_REG:
		r = write_reg(c, k, f, pl, tmp);
		break;
	case MF_SYMLINK:
		if (symlinkat(f->e.target, pl->dirfd, tmp))
			r = -errno;
		meta_at(c, pl->dirfd, tmp, &f->e);
		set_times(pl->dirfd, tmp, f->e.mtime);
		break;
	case MF_HARDLINK:
		r = write_link(c, k, f, pl, tmp, first);
		break;
	default:
		r = write_node(c, f, pl, tmp, &skipped);
		if (skipped && exists)
			unlinkat(pl->dirfd, pl->name, 0);
		break;
	}
	if (!r && !skipped && exists && renameat(pl->dirfd, tmp, pl->dirfd, pl->name))
		r = -errno;
	if (r && r != -MKI_E_PACKAGE) {
		if (exists)
			unlinkat(pl->dirfd, tmp, 0);
		log_error("package '%s': cannot create '/%s': %s", k->dpkg_name, pl->tree,
			  mki_strerror(r));
	}
	free(tmp);
	return r;
}

/* --- one entry ----------------------------------------------------------------------------- */

static struct lentry *list_find(struct pkg *k, const char *pkgpath)
{
	size_t i;

	for (i = k->n_list; i-- > 0;)
		if (k->list[i].pkgpath && !strcmp(k->list[i].pkgpath, pkgpath))
			return &k->list[i];
	return NULL;
}

static int write_link(struct ctx *c, struct pkg *k, struct pfile *f,
		      const struct place *pl, const char *tmp, struct manifest_entry **first)
{
	char *norm = f->e.target[0] == '/' ? NULL : manifest_normalize(f->e.target);
	char *key = norm ? xasprintf("/%s", norm) : NULL;
	struct lentry *le = key ? list_find(k, key) : NULL;
	int r = 0;

	*first = le ? manifest_get(c->m, le->treepath) : NULL;
	if (!norm) {
		log_error("package '%s': hard link '%s' points outside the package ('%s')",
			  k->dpkg_name, f->e.path, f->e.target);
		r = -MKI_E_PACKAGE;
	} else if (!*first || ((*first)->type != MF_REG && (*first)->type != MF_HARDLINK)) {
		log_error("package '%s': hard link '%s' points to '%s', which the package has not "
			  "shipped before it as a regular file",
			  k->dpkg_name, f->e.path, f->e.target);
		r = -MKI_E_PACKAGE;
	} else if (linkat(c->rootfd, le->treepath, pl->dirfd, tmp, 0)) {
		r = -errno;
	}
	free(norm);
	free(key);
	return r;
}

static struct pkg *pkg_by_name(struct ctx *c, const char *dpkg_name)
{
	size_t i;

	for (i = 0; i < c->n_pkgs; i++)
		if (c->pkgs[i].dpkg_name && !strcmp(c->pkgs[i].dpkg_name, dpkg_name))
			return &c->pkgs[i];
	return NULL;
}

static int version_ok(const char *have, const char *op, const char *want)
{
	int r = deb_version_cmp(have, want);

	if (!strcmp(op, "<<"))
		return r < 0;
	if (!strcmp(op, "<=") || !strcmp(op, "<"))
		return r <= 0;
	if (!strcmp(op, "="))
		return r == 0;
	if (!strcmp(op, ">=") || !strcmp(op, ">"))
		return r >= 0;
	if (!strcmp(op, ">>"))
		return r > 0;
	return 0;
}

/* Does one "name[:arch] [(op version)]" relation of Replaces match package `q`? */
static int relation_matches(const char *rel, size_t len, const struct pkg *q)
{
	char buf[512], op[3] = { 0 }, ver[256] = { 0 }, *colon, *paren;
	const char *qarch = deb_control_get(&q->ctl, "Architecture");

	snprintf(buf, sizeof(buf), "%.*s", (int)len, rel);
	paren = strchr(buf, '(');
	if (paren) {
		if (sscanf(paren + 1, " %2[<>=] %255[^) ]", op, ver) != 2)
			return 0;
		*paren = 0;
	}
	buf[strcspn(buf, " \t\n")] = 0;
	colon = strchr(buf, ':');
	if (colon)
		*colon++ = 0;
	if (strcmp(buf, q->pe->name))
		return 0;
	if (colon && strcmp(colon, "any") && (!qarch || strcmp(colon, qarch)))
		return 0;
	return !paren || version_ok(deb_control_get(&q->ctl, "Version"), op, ver);
}

static int replaces(const struct pkg *k, const struct pkg *q)
{
	const char *rep = deb_control_get(&k->ctl, "Replaces"), *p, *end;

	for (p = rep; p && *p; p = *end ? end + 1 : end) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		end = strchrnul(p, ',');
		if (relation_matches(p, (size_t)(end - p), q))
			return 1;
	}
	return 0;
}

/* Same bytes, type, mode and owner as what is already on disk for `me`? */
/* Same contents as the open file `fd`? A lazy file is read on while compared. */
static int same_bytes(struct pkg *k, struct pfile *f, int fd)
{
	char *buf, *old;
	ssize_t n;
	uint64_t off = 0;
	int same = 1;

	if (!f->lazy) {
		buf = xmalloc((size_t)f->e.size + 1);
		n = pread(fd, buf, (size_t)f->e.size + 1, 0);
		same = n == (ssize_t)f->e.size && !memcmp(buf, f->data, (size_t)f->e.size);
		free(buf);
		return same;
	}
	buf = xmalloc(CHUNK);
	old = xmalloc(CHUNK);
	while (same && (n = lazy_read(k, f, buf, CHUNK)) > 0) {
		same = pread(fd, old, (size_t)n, (off_t)off) == n && !memcmp(buf, old, (size_t)n);
		off += (uint64_t)n;
	}
	free(buf);
	free(old);
	return same && f->lazy == 2;
}

static int same_object(struct pkg *k, const struct manifest_entry *me, struct pfile *f,
		       const struct place *pl)
{
	int fd, same;

	if (me->type != f->e.type || me->uid != f->e.uid || me->gid != f->e.gid ||
	    (f->e.type != MF_SYMLINK && me->mode != f->e.mode))
		return 0;
	if (f->e.type == MF_SYMLINK || f->e.type == MF_HARDLINK)
		return !strcmp(me->target ? me->target : "", f->e.target);
	if (f->e.type != MF_REG)
		return me->major == f->e.major && me->minor == f->e.minor;
	if (me->size != f->e.size)
		return 0;
	fd = openat(pl->dirfd, pl->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	same = same_bytes(k, f, fd);
	close(fd);
	return same;
}

/* Are all owners of `me` other-arch instances of M-A same package `k`? */
static int shared_instance(struct ctx *c, const struct pkg *k, const struct manifest_entry *me)
{
	size_t i;

	if (!k->ma_same)
		return 0;
	for (i = 0; i < me->owners.n; i++) {
		const struct pkg *q = pkg_by_name(c, me->owners.v[i]);

		if (!q || !q->ma_same || strcmp(q->pe->name, k->pe->name))
			return 0;
	}
	return 1;
}

static void drop_from_list(struct pkg *q, const char *tree)
{
	size_t i;

	for (i = 0; i < q->n_list; i++)
		if (q->list[i].pkgpath && !strcmp(q->list[i].treepath, tree)) {
			free(q->list[i].pkgpath);
			q->list[i].pkgpath = NULL;
		}
}

/*
 * `tree` is about to be replaced: its other hard links keep the old inode, so the first of them
 * becomes the group's regular file and the rest point to it.
 */
static void detach_hardlinks(struct ctx *c, const char *tree)
{
	struct manifest_entry *lead = NULL;
	size_t i;

	for (i = 0; i < c->m->n; i++) {
		struct manifest_entry *e = c->m->v[i];

		if (e->type != MF_HARDLINK || !e->target || strcmp(e->target, tree))
			continue;
		free(e->target);
		e->target = NULL;
		if (lead) {
			e->target = xstrdup(lead->path);
		} else {
			e->type = MF_REG;
			lead = e;
		}
	}
}

/*
 * `k` ships `f` where an owned object already is: 1 when it is the identical file of another
 * arch instance (keep it, share it), 2 when its owners replace `k` (keep it, `k` does not get
 * it), 0 when `k` may overwrite it (its owners forget the path), or a logged error.
 */
static int check_overwrite(struct ctx *c, struct pkg *k, struct pfile *f,
			   const struct place *pl, struct manifest_entry *me)
{
	size_t i;

	if (!me || !me->owners.n || strv_contains(&me->owners, k->dpkg_name))
		return 0;
	if (shared_instance(c, k, me)) {
		if (same_object(k, me, f, pl))
			return 1;
		log_error("M-A same packages '%s' and '%s' ship different contents for '/%s' "
			  "(their versions must match and shared files be identical)",
			  me->owners.v[0], k->dpkg_name, pl->tree);
		return -MKI_E_CONFLICT;
	}
	for (i = 0; i < me->owners.n; i++) {
		const struct pkg *q = pkg_by_name(c, me->owners.v[i]);

		if (!q || !replaces(q, k))
			break;
	}
	if (i == me->owners.n) {
		/* dpkg: the installed owner replaces the package being unpacked; keep its file. */
		log_debug("package '%s': '/%s' kept from '%s', which replaces it", k->dpkg_name,
			  pl->tree, me->owners.v[0]);
		return 2;
	}
	for (i = 0; i < me->owners.n; i++) {
		const struct pkg *q = pkg_by_name(c, me->owners.v[i]);

		if (!q || !replaces(k, q)) {
			log_error("package '%s' tries to overwrite '/%s', which is also in "
				  "package '%s' (no Replaces: %s)", k->dpkg_name, pl->tree,
				  me->owners.v[i], q ? q->pe->name : me->owners.v[i]);
			return -MKI_E_CONFLICT;
		}
	}
	for (i = 0; i < me->owners.n; i++)
		drop_from_list(pkg_by_name(c, me->owners.v[i]), pl->tree);
	if (me->type == MF_REG)
		detach_hardlinks(c, pl->tree);
	log_debug("package '%s' replaces '/%s' of '%s'", k->dpkg_name, pl->tree, me->owners.v[0]);
	strv_release(&me->owners);
	return 0;
}

static const char *first_owner(const struct manifest_entry *me)
{
	return me && me->owners.n ? me->owners.v[0] : "no package";
}

static int apply_dir(struct ctx *c, struct pkg *k, struct pfile *f, const struct place *pl,
		     const struct stat *st, int exists)
{
	struct manifest_entry *me = manifest_get(c->m, pl->tree);
	struct buf canon = { 0 };
	int r = 0;

	if (exists && S_ISLNK(st->st_mode)) {
		/* dpkg keeps a symlink to a directory where a package ships a directory. */
		struct buf bad = { 0 };

		r = resolve_dir(c, pl->tree, &canon, &bad);
		if (r && r != -ENOTDIR)
			r = resolve_error(k, pl->tree, r, bad.p ? bad.p : "");
		buf_release(&canon);
		buf_release(&bad);
		if (r != -ENOTDIR)
			return r;
	}
	if (exists && !S_ISDIR(st->st_mode)) {
		log_error("package '%s' ships directory '/%s' where '%s' has a non-directory",
			  k->dpkg_name, pl->tree, first_owner(me));
		return -MKI_E_CONFLICT;
	}
	if (!exists) {
		if (mkdirat(pl->dirfd, pl->name, 0700)) {
			log_error("package '%s': cannot create directory '/%s': %s", k->dpkg_name,
				  pl->tree, strerror(errno));
			return -errno;
		}
		meta_at(c, pl->dirfd, pl->name, &f->e);
		me = NULL;
	}
	if (!me) {
		me = manifest_add(c->m, pl->tree);
		manifest_fill(me, &f->e);
	}
	owner_add(me, k->dpkg_name);
	return 0;
}

static void note_conffile(struct pkg *k, const char *pkgpath, const struct pfile *f)
{
	char hex[65];
	size_t i;

	for (i = 0; i < k->conffiles.n; i++) {
		if (strcmp(k->conffiles.v[i], pkgpath) || file_md5(f, hex))
			continue;
		free(k->md5s.v[i]);
		k->md5s.v[i] = xstrdup(hex);
	}
}

static int apply_nondir(struct ctx *c, struct pkg *k, struct pfile *f,
			const struct place *pl, const struct stat *st, int exists)
{
	struct manifest_entry *me = manifest_get(c->m, pl->tree), *first = NULL;
	int r;

	if (exists && S_ISDIR(st->st_mode) && f->e.type == MF_SYMLINK) {
		/* dpkg keeps a directory where a package ships a symlink */
		log_debug("package '%s': directory '/%s' kept, not replaced by a symlink",
			  k->dpkg_name, pl->tree);
		if (me)
			owner_add(me, k->dpkg_name);
		return 0;
	}
	if (exists && S_ISDIR(st->st_mode)) {
		log_error("package '%s' ships a non-directory at '/%s', where '%s' has a directory",
			  k->dpkg_name, pl->tree, first_owner(me));
		return -MKI_E_CONFLICT;
	}
	r = exists ? check_overwrite(c, k, f, pl, me) : 0;
	if (r < 0)
		return r;
	if (r == 1)
		owner_add(me, k->dpkg_name);
	if (r)
		return r == 1 ? 0 : r;
	r = create_object(c, k, f, pl, exists, &first);
	if (r)
		return r;
	if (f->e.type == MF_SYMLINK)
		cache_drop(c); /* the link may change how cached directories resolve */
	me = manifest_add(c->m, pl->tree);
	manifest_fill(me, &f->e);
	if (first) {
		me->target = xstrdup(first->type == MF_HARDLINK ? first->target : first->path);
		me->size = first->size;
	}
	owner_add(me, k->dpkg_name);
	return 0;
}

static int check_name(struct pkg *k, const char *raw, char **norm)
{
	const char *p = raw, *why = NULL;
	struct buf esc = { 0 };

	while (!strncmp(p, "./", 2))
		p += 2;
	if (pkgpath_check_name(raw, &why)) {
		buf_add_escaped(&esc, raw);
		log_error("package '%s': file name \"%s\" in data.tar %s (hostile package?)",
			  k->dpkg_name, esc.p, why);
		buf_release(&esc);
		return -MKI_E_PACKAGE;
	}
	if (raw[0] == '/') {
		log_error("package '%s': absolute path '%s' in data.tar (hostile package?)",
			  k->dpkg_name, raw);
		return -MKI_E_PACKAGE;
	}
	*norm = manifest_normalize(p);
	if (!*norm) {
		log_error("package '%s': path '%s' climbs out of the root with '..' (hostile "
			  "package?)", k->dpkg_name, raw);
		return -MKI_E_PACKAGE;
	}
	return 0;
}

/* By its name and by where the tree's links lead it: var/lib/dpkg is the database. */
static int check_admin(struct pkg *k, const char *norm, const char *tree, char type)
{
	const char *why = NULL;

	if (!pkgpath_check_admin(norm, type, &why) && !pkgpath_check_admin(tree, type, &why))
		return 0;
	log_error("package '%s': '/%s'%s%s%s %s (hostile package?)", k->dpkg_name, norm,
		  strcmp(norm, tree) ? " (resolved to '/" : "", strcmp(norm, tree) ? tree : "",
		  strcmp(norm, tree) ? "')" : "", why);
	return -MKI_E_PACKAGE;
}

static void list_add(struct pkg *k, const char *norm, const char *tree, char type)
{
	struct lentry *le;

	ALLOC_GROW(k->list, k->n_list + 1, k->alloc_list);
	le = &k->list[k->n_list++];
	le->pkgpath = *norm ? xasprintf("/%s", norm) : xstrdup("/.");
	le->treepath = xstrdup(tree);
	le->type = type;
}

/* The whole tree's totals: many packages, each within its own limits, can still be too much. */
static int count_staging(struct ctx *c, struct pkg *k, const struct pfile *f)
{
	uint64_t max_entries = limits_get(c->lim, LIMIT_STAGING_ENTRIES);
	uint64_t max_bytes = limits_get(c->lim, LIMIT_STAGING_SIZE);

	if (++c->entries > max_entries) {
		log_error("package '%s': the packages together unpack to more than %llu entries: "
			  "refused at '%s' (%s)", k->dpkg_name, (unsigned long long)max_entries,
			  f->e.path, limits_hint(c->lim, LIMIT_STAGING_ENTRIES).s);
		return -MKI_E_LIMIT_PKG;
	}
	c->bytes += f->e.size;
	if (c->bytes > max_bytes) {
		log_error("package '%s': the packages together unpack to more than %s: refused at "
			  "'%s' (%s)", k->dpkg_name, limits_format(LIMIT_STAGING_SIZE, max_bytes).s,
			  f->e.path, limits_hint(c->lim, LIMIT_STAGING_SIZE).s);
		return -MKI_E_LIMIT_PKG;
	}
	return 0;
}

static int apply_entry(struct ctx *c, struct pkg *k, struct pfile *f)
{
	struct place pl = { .dirfd = -1 };
	char *norm = NULL;
	struct stat st;
	int exists, r = count_staging(c, k, f);

	if (!r)
		r = check_name(k, f->e.path, &norm);
	if (r)
		return r;
	if (!*norm) {
		list_add(k, "", "", MF_DIR);
		free(norm);
		return 0;
	}
	r = locate(c, k, norm, &pl);
	if (!r)
		r = check_admin(k, norm, pl.tree, f->e.type);
	if (r)
		goto out;
	exists = !fstatat(pl.dirfd, pl.name, &st, AT_SYMLINK_NOFOLLOW);
	if (f->e.type == MF_DIR)
		r = apply_dir(c, k, f, &pl, &st, exists);
	else
		r = apply_nondir(c, k, f, &pl, &st, exists);
	if (exists && S_ISLNK(st.st_mode))
		cache_drop(c); /* a replaced link may change how cached directories resolve */
	if (r) {
		r = r > 0 ? 0 : r; /* 2: the file stays another package's, not listed for `k` */
		goto out;
	}
	list_add(k, norm, pl.tree, f->e.type);
	if (f->e.type == MF_REG && !(r = lazy_drain(k, f)))
		note_conffile(k, k->list[k->n_list - 1].pkgpath, f);
out:
	free(pl.tree);
	free(norm);
	return r;
}

/* A package too big to hold: read it again here and apply one file at a time. */
static int apply_stream(struct ctx *c, struct pkg *k)
{
	int r = open_pkg(k);

	log_debug("package '%s': streamed (too big to decode ahead)", k->dpkg_name);
	while (!r && (r = next_file(k, c->stream_max < LAZY_OVER ? c->stream_max : LAZY_OVER)) == 1) {
		struct pfile *f = &k->files[k->n_files - 1];

		r = apply_entry(c, k, f);
		if (!r && f->lazy)
			r = lazy_drain(k, f);
		if (!r && f->lazy)
			add_md5sum(k, f);
		pkg_drop_files(k);
	}
	if (r < 0 && k->errmsg)
		log_error("%s", k->errmsg);
	return r < 0 ? r : 0;
}

static int apply_pkg(struct ctx *c, struct pkg *k)
{
	size_t i;
	int r = 0;

	if (k->stream)
		return apply_stream(c, k);
	for (i = 0; i < k->n_files && !r; i++)
		r = apply_entry(c, k, &k->files[i]);
	return r;
}

/* --- what unpack itself creates: merged-/usr, the dpkg database --------------------------- */

static struct manifest_entry *own_entry(struct ctx *c, const char *path, char type, uint32_t mode)
{
	struct manifest_entry *me = manifest_add(c->m, path);

	me->type = type;
	me->mode = mode;
	me->uid = me->gid = 0;
	me->mtime = c->mtime;
	return me;
}

/* mkdir -p of a canonical path, each new directory 0755 root, unowned. */
static int own_dirs(struct ctx *c, const char *path)
{
	char *p = xstrdup(path), *s = p;
	struct stat st;
	char saved;
	int r = 0, missing;

	for (;;) {
		s = strchrnul(s, '/');
		saved = *s;
		*s = 0;
		missing = fstatat(c->rootfd, p, &st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
		if (!missing && !S_ISDIR(st.st_mode)) {
			/* a package put something else there: never follow it */
			log_error("cannot create '/%s': a package shipped '/%s' as a non-directory",
				  path, p);
			free(p);
			return -MKI_E_PACKAGE;
		}
		if (missing == -ENOENT) {
			if (mkdirat(c->rootfd, p, 0755)) {
				r = -errno;
				break;
			}
			tree_chown(c, c->rootfd, p, 0, 0);
			own_entry(c, p, MF_DIR, 0755);
		}
		if (!saved)
			break;
		*s++ = saved;
	}
	if (r)
		log_error("cannot create directory '/%s' in the staging tree: %s", p, strerror(-r));
	free(p);
	return r;
}

/* Debian's merged-/usr links (debootstrap's table), before any package is unpacked. */
static const char *extra_lib_dirs(const char *arch)
{
	static const struct { const char *arch, *dirs; } t[] = {
		{ "amd64", "lib32 lib64 libx32" }, { "i386", "lib64 libx32" },
		{ "mips", "lib32 lib64" }, { "mipsel", "lib32 lib64" },
		{ "mips64el", "lib32 lib64 libo32" }, { "powerpc", "lib64" },
		{ "ppc64", "lib32 lib64" }, { "ppc64el", "lib64" }, { "s390x", "lib32" },
		{ "sparc64", "lib32 lib64" }, { "x32", "lib32 lib64 libx32" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].arch, arch))
			return t[i].dirs;
	return "";
}

static int merged_link(struct ctx *c, const char *dir)
{
	char *usrdir = xasprintf("usr/%s", dir), *target = xasprintf("usr/%s", dir);
	struct stat st;
	int r = own_dirs(c, usrdir);

	if (!r && fstatat(c->rootfd, dir, &st, AT_SYMLINK_NOFOLLOW)) {
		if (symlinkat(target, c->rootfd, dir)) {
			r = -errno;
			log_error("cannot create merged-/usr link '/%s': %s", dir, strerror(errno));
		} else {
			tree_chown(c, c->rootfd, dir, 0, 0);
			set_times(c->rootfd, dir, c->mtime);
			own_entry(c, dir, MF_SYMLINK, 0777)->target = xstrdup(target);
		}
	}
	free(usrdir);
	free(target);
	return r;
}

static int merged_usr(struct ctx *c, const struct strv *archs)
{
	struct strv dirs = { 0 };
	size_t i;
	int r = 0;

	strv_push(&dirs, "bin");
	strv_push(&dirs, "sbin");
	strv_push(&dirs, "lib");
	for (i = 0; i < archs->n; i++) {
		char *list = xstrdup(extra_lib_dirs(archs->v[i])), *tok, *save = NULL;

		for (tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (!strv_contains(&dirs, tok))
				strv_push(&dirs, tok);
		free(list);
	}
	for (i = 0; i < dirs.n && !r; i++)
		r = merged_link(c, dirs.v[i]);
	strv_release(&dirs);
	return r;
}

/* Write `path` (its parent a real directory) atomically, 0:0, recorded in the manifest unowned. */
static int own_file(struct ctx *c, const char *path, const char *data, size_t len, uint32_t mode)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	char *parent = xstrndup(path, slash ? (size_t)(slash - path) : 0);
	char *tmp = xasprintf("%s.mki-tmp", name);
	struct timespec ts[2] = { { .tv_sec = c->mtime }, { .tv_sec = c->mtime } };
	int dfd = open_beneath(c->rootfd, parent, O_PATH), fd = -1, r = dfd < 0 ? dfd : 0;

	if (!r) {
		unlinkat(dfd, tmp, 0);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		r = fd < 0 ? -errno : fsutil_write_all(fd, data, len);
	}
	if (!r)
		tree_chown(c, fd, "", 0, 0);
	if (!r && (fchmod(fd, mode) || futimens(fd, ts)))
		r = -errno;
	if (fd >= 0 && close(fd) && !r)
		r = -errno;
	if (!r && renameat(dfd, tmp, dfd, name))
		r = -errno;
	if (r && dfd >= 0)
		unlinkat(dfd, tmp, 0);
	if (r)
		log_error("cannot write '/%s' in the staging tree: %s", path, strerror(-r));
	else
		own_entry(c, path, MF_REG, mode)->size = len;
	if (dfd >= 0)
		close(dfd);
	free(parent);
	free(tmp);
	return r;
}

static void pkg_db_view(const struct pkg *k, struct dpkgdb_pkg *v)
{
	v->control = &k->ctl;
	v->dpkg_name = k->dpkg_name;
	v->conffiles = &k->conffiles;
	v->conffile_md5s = &k->md5s;
}

static int db_cmp(const void *a, const void *b)
{
	struct dpkgdb_pkg va, vb;

	pkg_db_view(*(struct pkg *const *)a, &va);
	pkg_db_view(*(struct pkg *const *)b, &vb);
	return dpkgdb_pkg_cmp(&va, &vb);
}

static int write_status(struct ctx *c)
{
	struct pkg **sorted = xcalloc(c->n_pkgs, sizeof(*sorted));
	struct buf b = { 0 };
	struct dpkgdb_pkg v;
	size_t i;
	int r;

	for (i = 0; i < c->n_pkgs; i++)
		sorted[i] = &c->pkgs[i];
	qsort(sorted, c->n_pkgs, sizeof(*sorted), db_cmp);
	buf_adds(&b, "");
	for (i = 0; i < c->n_pkgs; i++) {
		pkg_db_view(sorted[i], &v);
		dpkgdb_status_stanza(&b, &v, "install ok unpacked");
	}
	r = own_file(c, "var/lib/dpkg/status", b.p, b.len, 0644);
	if (!r) /* dpkg's status-old: the same on a fresh install */
		r = own_file(c, "var/lib/dpkg/status-old", b.p, b.len, 0644);
	buf_release(&b);
	free(sorted);
	return r;
}

static int write_info(struct ctx *c, struct pkg *k)
{
	struct buf list = { 0 };
	char *path;
	size_t i;
	int r;

	buf_adds(&list, "");
	for (i = 0; i < k->n_list; i++)
		if (k->list[i].pkgpath)
			buf_addf(&list, "%s\n", k->list[i].pkgpath);
	path = xasprintf("var/lib/dpkg/info/%s.list", k->dpkg_name);
	r = own_file(c, path, list.p, list.len, 0644);
	free(path);
	buf_release(&list);
	if (!r && k->md5sums.p) {
		path = xasprintf("var/lib/dpkg/info/%s.md5sums", k->dpkg_name);
		r = own_file(c, path, k->md5sums.p, k->md5sums.len, 0644);
		free(path);
	}
	for (i = 0; !r && dpkgdb_info_members[i]; i++) {
		const struct deb_member *m = deb_member(k->deb, dpkgdb_info_members[i]);

		if (!m)
			continue;
		path = xasprintf("var/lib/dpkg/info/%s.%s", k->dpkg_name, m->name);
		r = own_file(c, path, m->data, m->len,
			     dpkgdb_info_is_script(m->name) ? 0755 : 0644);
		free(path);
	}
	return r;
}

static int write_triggers(struct ctx *c)
{
	struct strv file = { 0 }, expl = { 0 };
	struct buf b = { 0 };
	size_t i;
	int r = 0;

	for (i = 0; i < c->n_pkgs && !r; i++) {
		const struct deb_member *t = deb_member(c->pkgs[i].deb, "triggers");
		const char *why = NULL;

		if (t &&
		    (r = dpkgdb_add_triggers(&file, &expl, t->data, c->pkgs[i].dpkg_name, &why)))
			log_error("package '%s': bad triggers control file: %s",
				  c->pkgs[i].dpkg_name, why);
	}
	buf_adds(&b, "");
	for (i = 0; i < file.n; i++)
		buf_addf(&b, "%s\n", file.v[i]);
	if (!r)
		r = own_file(c, "var/lib/dpkg/triggers/File", b.p, b.len, 0644);
	if (!r)
		r = own_file(c, "var/lib/dpkg/triggers/Unincorp", "", 0, 0644);
	for (i = 0; i < expl.n && !r; i++) {
		char *sp = strchr(expl.v[i], ' '), *path, *line;

		*sp = 0;
		path = xasprintf("var/lib/dpkg/triggers/%s", expl.v[i]);
		line = xasprintf("%s\n", sp + 1);
		r = own_file(c, path, line, strlen(line), 0644); /* one interested package each */
		free(path);
		free(line);
	}
	buf_release(&b);
	strv_release(&file);
	strv_release(&expl);
	return r;
}

static int write_db(struct ctx *c, const struct strv *archs)
{
	static const char *const empty[] = { "available", "diversions", "statoverride", NULL };
	struct buf arch = { 0 };
	size_t i;
	int r = own_dirs(c, "var/lib/dpkg/info");

	if (!r)
		r = own_dirs(c, "var/lib/dpkg/updates");
	if (!r)
		r = own_dirs(c, "var/lib/dpkg/triggers");
	if (!r)
		r = write_status(c);
	for (i = 0; i < c->n_pkgs && !r; i++)
		r = write_info(c, &c->pkgs[i]);
	for (i = 0; empty[i] && !r; i++) {
		char *path = xasprintf("var/lib/dpkg/%s", empty[i]);

		r = own_file(c, path, "", 0, 0644);
		free(path);
	}
	if (!r)
		r = own_file(c, "var/lib/dpkg/info/format", "1\n", 2, 0644);
	buf_adds(&arch, "");
	for (i = 0; i < archs->n; i++)
		buf_addf(&arch, "%s\n", archs->v[i]);
	if (!r)
		r = own_file(c, "var/lib/dpkg/arch", arch.p, arch.len, 0644);
	buf_release(&arch);
	return r ? r : write_triggers(c);
}

/* Directories were made 0700 so an unprivileged unpack can fill them: now their real modes. */
static int finish_dirs(struct ctx *c)
{
	size_t i;

	manifest_sort(c->m);
	for (i = c->m->n; i-- > 0;) {
		const struct manifest_entry *me = c->m->v[i];
		const char *p = me->path;
		struct timespec ts[2] = { { .tv_sec = me->mtime }, { .tv_sec = me->mtime } };
		int fd;

		if (me->type != MF_DIR)
			continue;
		fd = open_beneath(c->rootfd, p, O_RDONLY);
		if (fd < 0 || fchmod(fd, me->mode) || futimens(fd, ts)) {
			int err = fd < 0 ? -fd : errno;

			log_error("cannot set the mode of '/%s': %s", me->path, strerror(err));
			if (fd >= 0)
				close(fd);
			return -err;
		}
		close(fd);
	}
	return 0;
}

/* --- multiarch lint ------------------------------------------------------------------------ */

static int has_component(const char *path, const char *comp)
{
	size_t n = strlen(comp);
	const char *p;

	for (p = strstr(path, comp); p; p = strstr(p + 1, comp))
		if ((p == path || p[-1] == '/') && (p[n] == '/' || !p[n]))
			return 1;
	return 0;
}

struct lint {
	struct buf out;
	const struct strv *archs;
	unsigned *count, shared;
};

static void lint_pkg(struct ctx *c, const struct pkg *k, struct lint *l)
{
	const struct arch *a = arch_find(k->pe->arch);
	size_t i, ai;

	if (!k->ma_same || !a)
		return;
	for (ai = 0; ai < l->archs->n && strcmp(l->archs->v[ai], a->name); ai++)
		;
	for (i = 0; i < k->n_list; i++) {
		const struct manifest_entry *me;

		if (!k->list[i].pkgpath || k->list[i].type == MF_DIR ||
		    has_component(k->list[i].treepath, a->triplet))
			continue;
		me = manifest_get(c->m, k->list[i].treepath);
		if (!me)
			continue;
		buf_addf(&l->out, "%s\t%s\t/%s\t%s\n", a->name, k->dpkg_name, k->list[i].treepath,
			 me->owners.n > 1 ? "shared" : "alone");
		l->count[ai < l->archs->n ? ai : l->archs->n]++;
		l->shared += me->owners.n > 1;
	}
}

/* Per arch, files of M-A same packages outside that arch's triplet directories. */
static int write_lint(struct ctx *c, const char *file, const struct strv *archs)
{
	struct lint l = { .archs = archs, .count = xcalloc(archs->n + 1, sizeof(unsigned)) };
	struct buf sum = { 0 };
	FILE *f;
	size_t i;
	int r = 0;

	buf_adds(&l.out, "# arch\tpackage\tpath outside the arch's triplet directories\tshared\n");
	for (i = 0; i < c->n_pkgs; i++)
		lint_pkg(c, &c->pkgs[i], &l);
	f = fopen(file, "we");
	if (!f || fwrite(l.out.p, 1, l.out.len, f) != l.out.len)
		r = -EIO;
	if (f && fclose(f))
		r = -EIO;
	if (r)
		log_error("cannot write the multiarch lint '%s': %s", file, strerror(errno));
	buf_adds(&sum, "");
	for (i = 0; i < archs->n; i++)
		buf_addf(&sum, "%s%s %u", i ? ", " : "", archs->v[i], l.count[i]);
	if (!r)
		log_info("multiarch lint: files of M-A same packages outside their triplet "
			 "directories: %s (%u shared by several archs; listed in '%s')", sum.p,
			 l.shared, file);
	buf_release(&sum);
	buf_release(&l.out);
	free(l.count);
	return r;
}

/* --- the stage ----------------------------------------------------------------------------- */

static void plan_archs(const struct plan *p, const struct recipe *r, struct strv *out)
{
	size_t i;

	if (p->archs.n) {
		for (i = 0; i < p->archs.n; i++)
			strv_push(out, p->archs.v[i]);
		return;
	}
	recipe_all_archs(r, out);
}

/*
 * A downloaded .deb refused for a limit leaves the cache (a local one is the user's file and
 * stays): the cache never keeps what was refused.
 */
static void evict(const struct pkg *k)
{
	if (!k->refused || !k->pe->url || !k->pe->path)
		return;
	if (!unlink(k->pe->path))
		log_info("removed the refused '%s' from the cache", k->pe->path);
	else if (errno != ENOENT)
		log_warn("cannot remove the refused '%s' from the cache: %s", k->pe->path,
			 strerror(errno));
}

static int apply_all(struct ctx *c, struct pool *pool)
{
	struct progress prog;
	size_t i;
	int r = 0;

	progress_begin(&prog, "unpack", c->n_pkgs, 0);
	for (i = 0; i < c->n_pkgs && !r; i++) {
		struct pkg *k = &c->pkgs[i];

		pool_wait(pool, i);
		if (mki_interrupted())
			r = -MKI_E_INTERRUPTED;
		else if (k->err)
			log_error("%s", k->errmsg ? k->errmsg : "decoding failed");
		r = r ? r : k->err;
		if (!r)
			r = apply_pkg(c, k);
		if (r)
			evict(k);
		pkg_drop_files(k);
		pool_done(pool, i);
		progress_add(&prog, 1);
	}
	progress_end(&prog);
	return r;
}

static int run_pool(struct ctx *c, const struct settings *st)
{
	struct pool pool = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	unsigned n = worker_count(st, c->n_pkgs), started = 0, i;
	pthread_t *threads = xcalloc(n, sizeof(*threads));
	int r;

	pool.pkgs = c->pkgs;
	pool.n = c->n_pkgs;
	pool.window = DECODE_AHEAD * n;
	pool.stream_max = c->stream_max;
	for (i = 0; i < n; i++)
		if (!pthread_create(&threads[i], NULL, worker, &pool))
			started++;
	if (!started) {
		free(threads);
		log_error("cannot start unpack worker threads");
		return -EAGAIN;
	}
	log_debug("unpacking %zu packages with %u decoder thread%s", c->n_pkgs, started,
		  started == 1 ? "" : "s");
	r = apply_all(c, &pool);
	pool_stop(&pool);
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	return r;
}

static int setup_root(struct stage *out, struct ctx *c, const struct settings *st)
{
	out->root = xasprintf("%s/root", st->work_dir);
	out->manifest_file = xasprintf("%s/manifest", st->work_dir);
	out->lint_file = xasprintf("%s/multiarch-lint", st->work_dir);
	if (mkdir(out->root, 0755) ||
	    (c->rootfd = open(out->root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		log_error("cannot create the staging tree '%s': %s", out->root, strerror(errno));
		return -errno;
	}
	tree_chown(c, c->rootfd, "", 0, 0);
	own_entry(c, "", MF_DIR, 0755);
	return 0;
}

static void init_pkgs(struct ctx *c, const struct plan *p)
{
	size_t i;

	c->n_pkgs = p->n;
	c->pkgs = xcalloc(p->n ? p->n : 1, sizeof(*c->pkgs));
	for (i = 0; i < p->n; i++) {
		c->pkgs[i].pe = &p->v[i];
		c->pkgs[i].lim = c->lim;
		c->pkgs[i].dpkg_name = plan_entry_dpkg_name(&p->v[i]);
		c->pkgs[i].ma_same = p->v[i].multi_arch && !strcmp(p->v[i].multi_arch, "same");
	}
}

static int check_plan(const struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!p->v[i].path) {
			log_error("package '%s:%s' has no local file to unpack (not fetched?)",
				  p->v[i].name, p->v[i].arch);
			return -MKI_E_PACKAGE;
		}
	return 0;
}

static int finish(struct ctx *c, struct stage *out, const struct strv *archs)
{
	int r = write_db(c, archs);

	if (!r)
		r = finish_dirs(c);
	if (!r)
		r = write_lint(c, out->lint_file, archs);
	if (!r && (r = manifest_save(c->m, out->manifest_file)))
		log_error("cannot save the manifest '%s': %s", out->manifest_file, strerror(-r));
	if (!r && c->nodes_skipped)
		log_info("%u device node%s recorded in the manifest only (mknod needs privilege)",
			 c->nodes_skipped, c->nodes_skipped == 1 ? "" : "s");
	return r;
}

/* The test suite lowers the threshold (MKI_TEST_STREAM_BYTES) to stream every package. */
static uint64_t stream_threshold(void)
{
	const char *s = getenv("MKI_TEST_STREAM_BYTES");

	return s && *s ? strtoull(s, NULL, 10) : STREAM_OVER;
}

int unpack_plan(struct stage *out, const struct plan *p, const struct recipe *r,
		const struct settings *st)
{
	struct ctx c = { .rootfd = -1, .cache_fd = -1, .can_chown = 1, .lim = &st->limits };
	struct strv archs = { 0 };
	double t0 = log_now();
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	manifest_init(&out->manifest);
	c.m = &out->manifest;
	c.mtime = st->source_date_epoch >= 0 ? st->source_date_epoch : 0;
	c.stream_max = stream_threshold();
	plan_archs(p, r, &archs);
	ret = check_plan(p);
	if (!ret)
		ret = setup_root(out, &c, st);
	if (!ret && r->merged_usr)
		ret = merged_usr(&c, &archs);
	init_pkgs(&c, p);
	if (!ret && p->n)
		ret = run_pool(&c, st);
	cache_drop(&c);
	if (!ret)
		ret = finish(&c, out, &archs);
	if (!ret)
		log_info("unpacked %zu packages (%zu paths) in %.2f s", p->n, out->manifest.n,
			 log_now() - t0);
	for (i = 0; i < c.n_pkgs; i++)
		pkg_release(&c.pkgs[i]);
	free(c.pkgs);
	if (c.rootfd >= 0)
		close(c.rootfd);
	strv_release(&archs);
	return ret;
}

void stage_release(struct stage *s)
{
	free(s->root);
	free(s->manifest_file);
	free(s->lint_file);
	manifest_release(&s->manifest);
	memset(s, 0, sizeof(*s));
}
