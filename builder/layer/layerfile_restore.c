/*
 * Restore a layer file (layerfile.h) into an empty directory, checking its digest meanwhile.
 *
 * The two overlap because both read the whole file and a rebuild waits for both: the check runs
 * on a thread of its own while the tree is created, and the restore fails if the check does. A
 * corrupt file can only ever produce a tree nothing runs in: its records are read through the
 * bounded reader and every path is checked, so it cannot reach outside the directory either.
 */
#include "layerfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "layerfile_fmt.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/log.h"
#include "sandbox/idshift.h"

struct rec {
	char *path;
	uint32_t mode, uid, gid;
	struct timespec mtime;
	uint64_t size, link;
	char *target;
	struct rd ext;  /* a regular file's extents: n x (file offset, length, data offset) */
	uint32_t n_ext;
	struct manifest_entry x; /* only its xattrs are used */
};

/*
 * The directories open along the current path. Records come in walk order (a directory, then
 * all beneath it), so an entry's parent is the top of this stack once the directories it is
 * not beneath are popped: one openat per directory instead of a path lookup per entry.
 */
struct open_dir {
	const char *path; /* borrowed from rs.paths */
	size_t len;
	int fd;
};

struct rs {
	int fd, rootfd;
	int no_kernel_copy; /* the tree is on another filesystem than the cache (tmpfs: workroot.h) */
	uint64_t data_len;
	struct strv paths; /* every entry restored so far, by index (hard links name one) */
	struct rec *dirs;  /* directories created, whose metadata is set once their contents are */
	size_t n_dirs, alloc_dirs;
	struct open_dir *open;
	size_t n_open, alloc_open;
};

/* A record's path must be canonical: no "", ".", ".." or empty component, no leading '/'. */
static int path_ok(const char *p)
{
	const char *c = p;

	if (!*p || *p == '/')
		return 0;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		if (!c[n])
			return 1;
		c += n + 1;
	}
}

static void rec_release(struct rec *e)
{
	free(e->path);
	free(e->target);
	manifest_xattrs_free(e->x.xattrs, e->x.n_xattrs);
	memset(e, 0, sizeof(*e));
}

static void get_rec(struct rd *r, struct rec *e)
{
	size_t skip;

	e->path = layerfile_rd_str(r);
	e->mode = layerfile_rd_u32(r);
	e->uid = layerfile_rd_u32(r);
	e->gid = layerfile_rd_u32(r);
	e->mtime.tv_sec = (time_t)layerfile_rd_u64(r);
	e->mtime.tv_nsec = layerfile_rd_u32(r);
	if (S_ISREG(e->mode)) {
		e->size = layerfile_rd_u64(r);
		e->link = layerfile_rd_u64(r);
		e->n_ext = layerfile_rd_u32(r);
		skip = (size_t)e->n_ext * 24;
		e->ext = (struct rd){ r->p, r->p + skip, 0 };
		if ((size_t)(r->end - r->p) < skip)
			r->bad = 1;
		else
			r->p += skip;
	} else if (S_ISLNK(e->mode)) {
		e->target = layerfile_rd_str(r);
	}
	layerfile_rd_xattrs(r, &e->x);
	if (e->mtime.tv_nsec >= 1000000000L)
		r->bad = 1;
}

/* ---- the open directories ---- */

/* Is `d` the directory `path` (of length `len`) or one above it? The root is above all. */
static int above_or_at(const struct open_dir *d, const char *path, size_t len)
{
	return !d->len || (d->len <= len && !memcmp(d->path, path, d->len) &&
			   (d->len == len || path[d->len] == '/'));
}

/*
 * The directory holding `path` and its last component `*name`. `*owned` says whether the caller
 * closes it: a parent not on the stack (a record out of walk order) is looked up beneath the
 * root, without following any symlink.
 */
static int parent_of(struct rs *s, const char *path, const char **name, int *owned)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	struct open_dir *top;

	while (s->n_open > 1 && !above_or_at(&s->open[s->n_open - 1], path, len))
		close(s->open[--s->n_open].fd);
	top = &s->open[s->n_open - 1];
	*name = slash ? slash + 1 : path;
	*owned = top->len != len;
	if (!*owned)
		return top->fd;
	return beneath_parent(s->rootfd, path, name);
}

/* A directory this restore created in `dirfd` becomes the top of the stack. */
static int push_dir(struct rs *s, int dirfd, const char *name, const char *path)
{
	int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ALLOC_GROW(s->open, s->n_open + 1, s->alloc_open);
	s->open[s->n_open++] = (struct open_dir){ path, strlen(path), fd };
	return 0;
}

static void close_dirs(struct rs *s)
{
	while (s->n_open > 1)
		close(s->open[--s->n_open].fd);
	free(s->open);
}

/* ---- entries ---- */

static int set_xattrs(int fd, const char *lpath, const struct manifest_entry *x)
{
	size_t i;

	for (i = 0; i < x->n_xattrs; i++) {
		const struct manifest_xattr *a = &x->xattrs[i];

		if (fd >= 0 ? fsetxattr(fd, a->name, a->value, a->len, 0)
			    : lsetxattr(lpath, a->name, a->value, a->len, 0))
			return -errno;
	}
	return 0;
}

/* Owner, then mode (a chown drops set-id bits), xattrs (it drops capabilities too), times. */
static int set_meta(int fd, const struct rec *e)
{
	struct timespec ts[2] = { e->mtime, e->mtime };
	int ret;

	if (fchown(fd, idshift_tree_uid(e->uid), idshift_tree_gid(e->gid)) ||
	    fchmod(fd, e->mode & 07777))
		return -errno;
	ret = set_xattrs(fd, NULL, &e->x);
	return ret ? ret : futimens(fd, ts) ? -errno : 0;
}

/* The same for a symlink or FIFO, by name in `dirfd`. */
static int set_meta_at(int dirfd, const char *name, const struct rec *e)
{
	struct timespec ts[2] = { e->mtime, e->mtime };
	char *lpath;
	int ret = 0;

	if (fchownat(dirfd, name, idshift_tree_uid(e->uid), idshift_tree_gid(e->gid),
		     AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISLNK(e->mode) && fchmodat(dirfd, name, e->mode & 07777, 0))
		return -errno;
	if (e->x.n_xattrs) {
		lpath = xasprintf("/proc/self/fd/%d/%s", dirfd, name);
		ret = set_xattrs(-1, lpath, &e->x);
		free(lpath);
	}
	if (!ret && utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW))
		ret = -errno;
	return ret;
}

/* `len` bytes at `from` of the layer to `to` of `fd`, through a buffer. */
static int copy_buffered(struct rs *s, loff_t from, int fd, loff_t to, loff_t len)
{
	char buf[128 * 1024];

	while (len > 0) {
		ssize_t k = pread(s->fd, buf, len < (loff_t)sizeof(buf) ? (size_t)len : sizeof(buf), from);

		if (k <= 0)
			return k < 0 ? -errno : -EBADMSG;
		if (pwrite(fd, buf, (size_t)k, to) != k)
			return errno ? -errno : -EIO;
		from += k;
		to += k;
		len -= k;
	}
	return 0;
}

/* One extent: by the kernel where it copies between the two filesystems, else buffered. */
static int copy_extent(struct rs *s, loff_t from, int fd, loff_t to, loff_t len)
{
	while (len > 0 && !s->no_kernel_copy) {
		ssize_t k = copy_file_range(s->fd, &from, fd, &to, (size_t)len, 0);

		if (k < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
			      errno == EOPNOTSUPP)) {
			s->no_kernel_copy = 1;
			break;
		}
		if (k <= 0)
			return k < 0 ? -errno : -EBADMSG;
		len -= k;
	}
	return len > 0 ? copy_buffered(s, from, fd, to, len) : 0;
}

static int copy_in(struct rs *s, struct rec *e, int fd)
{
	uint32_t i;
	int ret;

	for (i = 0; i < e->n_ext; i++) {
		loff_t to = (loff_t)layerfile_rd_u64(&e->ext), len = (loff_t)layerfile_rd_u64(&e->ext);
		loff_t from = (loff_t)layerfile_rd_u64(&e->ext);

		if ((uint64_t)from > s->data_len || (uint64_t)len > s->data_len - (uint64_t)from ||
		    (uint64_t)to + (uint64_t)len > e->size)
			return -EBADMSG;
		if ((ret = copy_extent(s, from, fd, to, len)))
			return ret;
	}
	return 0;
}

static int restore_reg(struct rs *s, int dirfd, const char *name, struct rec *e)
{
	const char *tname;
	int fd, ret;

	if (e->link) {
		if (e->link > s->paths.n)
			return -EBADMSG;
		fd = beneath_parent(s->rootfd, s->paths.v[e->link - 1], &tname);
		ret = fd < 0 ? fd : linkat(fd, tname, dirfd, name, 0) ? -errno : 0;
		if (fd >= 0)
			close(fd);
		return ret;
	}
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = e->size && ftruncate(fd, (off_t)e->size) ? -errno : copy_in(s, e, fd);
	if (!ret)
		ret = set_meta(fd, e);
	close(fd);
	return ret;
}

static void defer_dir(struct rs *s, struct rec *e)
{
	ALLOC_GROW(s->dirs, s->n_dirs + 1, s->alloc_dirs);
	s->dirs[s->n_dirs++] = *e;
	memset(e, 0, sizeof(*e));
}

static int restore_dir(struct rs *s, int dirfd, const char *name, struct rec *e)
{
	if (mkdirat(dirfd, name, 0700))
		return -errno;
	defer_dir(s, e);
	return push_dir(s, dirfd, name, s->paths.v[s->paths.n - 1]);
}

static int restore_entry(struct rs *s, struct rec *e)
{
	const char *name;
	int dirfd, owned, ret;

	if (!s->paths.n) { /* the root, which the caller created */
		if (*e->path || !S_ISDIR(e->mode))
			return -EBADMSG;
		strv_push(&s->paths, "");
		defer_dir(s, e);
		return 0;
	}
	if (!path_ok(e->path))
		return -EBADMSG;
	dirfd = parent_of(s, e->path, &name, &owned);
	if (dirfd < 0)
		return dirfd;
	strv_push(&s->paths, e->path);
	if (S_ISDIR(e->mode))
		ret = restore_dir(s, dirfd, name, e);
	else if (S_ISREG(e->mode))
		ret = restore_reg(s, dirfd, name, e);
	else if (S_ISLNK(e->mode))
		ret = symlinkat(e->target, dirfd, name) ? -errno : set_meta_at(dirfd, name, e);
	else if (S_ISFIFO(e->mode))
		ret = mknodat(dirfd, name, S_IFIFO | 0600, 0) ? -errno
							       : set_meta_at(dirfd, name, e);
	else
		ret = -EBADMSG;
	if (owned)
		close(dirfd);
	return ret;
}

/* Directories last, deepest first: their mtimes and modes as configuration left them. */
static int finish_dirs(struct rs *s)
{
	size_t i = s->n_dirs;
	int ret = 0, fd;

	while (!ret && i--) {
		struct rec *e = &s->dirs[i];

		fd = *e->path ? beneath_open_canonical(s->rootfd, e->path, O_RDONLY | O_DIRECTORY)
			      : openat(s->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return *e->path ? fd : -errno;
		ret = set_meta(fd, e);
		close(fd);
	}
	return ret;
}

static int restore_tree(struct rs *s, struct rd *r)
{
	uint64_t i, n = layerfile_rd_u64(r);
	struct rec e = { 0 };
	int ret = 0;

	ALLOC_GROW(s->open, 1, s->alloc_open);
	s->open[s->n_open++] = (struct open_dir){ "", 0, s->rootfd };
	for (i = 0; !ret && i < n && !r->bad; i++) {
		get_rec(r, &e);
		ret = r->bad ? -EBADMSG : restore_entry(s, &e);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
		rec_release(&e);
	}
	close_dirs(s);
	if (!ret && r->bad)
		ret = -EBADMSG;
	return ret ? ret : finish_dirs(s);
}

static int read_meta(int fd, const struct layer_trailer *tr, struct buf *meta)
{
	meta->p = xmalloc(tr->meta_len + 1);
	meta->len = tr->meta_len;
	if (pread(fd, meta->p, tr->meta_len, (off_t)tr->data_len) != (ssize_t)tr->meta_len)
		return -EBADMSG;
	return 0;
}

/* ---- the check beside it ---- */

struct check {
	pthread_t th;
	int fd, ret;
	const char *name;
};

static void *check_main(void *arg)
{
	struct check *c = arg;

	c->ret = layerfile_check(c->fd, c->name);
	return NULL;
}

static int restore_meta(struct rs *rs, struct rd *r, struct staging *s, struct buf *lint,
			struct dep5_texts *texts)
{
	char *text;
	int ret = restore_tree(rs, r);

	if (ret)
		return ret;
	layerfile_rd_manifest(r, &s->manifest);
	s->filtered.files = layerfile_rd_u64(r);
	s->filtered.dirs = layerfile_rd_u64(r);
	s->filtered.bytes = layerfile_rd_u64(r);
	text = layerfile_rd_str(r);
	buf_adds(lint, text);
	free(text);
	layerfile_rd_texts(r, texts);
	return r->bad || r->p != r->end ? -EBADMSG : 0;
}

int layerfile_restore(int fd, const char *name, int rootfd, struct staging *s, struct buf *lint,
		      struct dep5_texts *texts)
{
	struct rs rs = { .fd = fd, .rootfd = rootfd };
	struct check c = { .fd = fd, .name = name };
	struct buf meta = { 0 };
	struct layer_trailer tr;
	struct rd r = { 0 };
	uint64_t size;
	size_t i;
	int ret = layerfile_read_trailer(fd, name, &tr, &size), checking;

	if (ret)
		return ret;
	/* Without a thread the check simply runs first. */
	checking = !pthread_create(&c.th, NULL, check_main, &c);
	ret = checking ? 0 : layerfile_check(fd, name);
	if (!ret)
		ret = read_meta(fd, &tr, &meta);
	rs.data_len = tr.data_len;
	r = (struct rd){ (const uint8_t *)meta.p, (const uint8_t *)meta.p + meta.len, 0 };
	if (!ret)
		ret = restore_meta(&rs, &r, s, lint, texts);
	if (checking) {
		pthread_join(c.th, NULL);
		/* A corrupt file is reported as such (warned about by the check), whatever broke. */
		if (c.ret)
			ret = c.ret;
	}
	if (ret && ret != c.ret)
		log_warn("cannot restore the layer '%s': %s", name, err_text(ret));
	for (i = 0; i < rs.n_dirs; i++)
		rec_release(&rs.dirs[i]);
	free(rs.dirs);
	strv_release(&rs.paths);
	free(meta.p);
	return ret;
}
