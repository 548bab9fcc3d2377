/*
 * Unpack: worker threads decode .debs (decompression is the cost) a bounded window ahead of the
 * main thread, writing the contents of regular files into the spool (spool.h), and the main
 * thread applies them strictly in plan order, moving each spooled file into place with one
 * rename. Only the main thread touches the tree, the manifest and the log, so the result never
 * depends on thread timing.
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "debian/arch.h"
#include "debian/deb.h"
#include "debian/overwrite.h"
#include "debian/pathfilter.h"
#include "debian/pkgpath.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/runlimits.h"
#include "lib/str.h"
#include "lib/workpool.h"
#include "pkg.h"
#include "sandbox/sandbox.h"
#include "tree/dpkgdb.h"
#include "tree/spool.h"

#define DECODE_AHEAD 16             /* packages decoded ahead of the applied one, per worker */
#define DECODE_BUDGET (64ull << 20) /* decoded bytes waiting to be applied, beyond the next one */
#define LAZY_OVER (1ull << 20)      /* streamed: files larger are copied in chunks, never held */

struct ctx {
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
struct place {
	int dirfd;
	char *tree; /* canonical tree path of the object */
	const char *name;
};

/* --- path resolution inside the root ------------------------------------------------------- */

/* Directory `canon` (a canonical tree path): no symlink may be on the way, none at its end. */
static int open_beneath(int rootfd, const char *canon, int flags)
{
	return beneath_open_canonical(rootfd, canon, flags | O_DIRECTORY);
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
			  err_text(r));
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
		r = beneath_resolve_dir(c->w.rootfd, parent, &canon, &bad);
		if (!r && (c->cache_fd = open_beneath(c->w.rootfd, canon.p, O_PATH)) < 0)
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

	staging_chown(&c->w, fd, "", e->uid, e->gid);
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
	staging_chown(&c->w, dirfd, name, e->uid, e->gid);
}

static void manifest_fill(struct manifest_entry *me, const struct deb_entry *e)
{
	size_t i;

	manifest_xattrs_free(me->xattrs, me->n_xattrs);
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
	char *buf = xmalloc(PKG_CHUNK);
	off_t pos = 0;
	ssize_t n;
	int r = 0;

	while (!r && (n = pkg_lazy_read(k, f, buf, PKG_CHUNK)) != 0) {
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

/*
 * Move a spooled file to its temporary name in the tree, never replacing a name that exists (as
 * O_EXCL refuses to). Filesystems without RENAME_NOREPLACE (NFS) answer EINVAL: link + unlink
 * gives the same guarantee there, as link() never replaces either.
 */
static int move_noreplace(int from_dir, const char *from, int to_dir, const char *to)
{
	if (!renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL)
		return -errno;
	if (linkat(from_dir, from, to_dir, to, 0))
		return -errno;
	return unlinkat(from_dir, from, 0) ? -errno : 0;
}

/* A file a worker wrote into the spool: its metadata set there, then moved to `tmp` in one go. */
static int place_spooled(struct ctx *c, struct pkg *k, struct pfile *f, const struct place *pl,
			 const char *tmp)
{
	char name[PKG_SPOOL_NAME];
	int fd, r;

	pkg_spool_name(k, f, name);
	fd = openat(c->spool_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	r = fd < 0 ? -errno : meta_fd(c, fd, &f->e);
	if (fd >= 0 && close(fd) && !r)
		r = -errno;
	if (!r)
		r = move_noreplace(c->spool_fd, name, pl->dirfd, tmp);
	if (!r)
		f->spooled = 2;
	return r;
}

static int write_reg(struct ctx *c, struct pkg *k, struct pfile *f, const struct place *pl,
		     const char *tmp)
{
	int fd, r;

	if (f->spooled)
		return place_spooled(c, k, f, pl, tmp);
	fd = openat(pl->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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
			  err_text(r));
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

	*first = le ? manifest_get(c->w.m, le->treepath) : NULL;
	if (!norm) {
		log_error("package '%s': hard link '%s' points outside the package ('%s')",
			  k->dpkg_name, f->e.path, f->e.target);
		r = -MKI_E_PACKAGE;
	} else if (!*first || ((*first)->type != MF_REG && (*first)->type != MF_HARDLINK)) {
		log_error("package '%s': hard link '%s' points to '%s', which the package has not "
			  "shipped before it as a regular file",
			  k->dpkg_name, f->e.path, f->e.target);
		r = -MKI_E_PACKAGE;
	} else if (linkat(c->w.rootfd, le->treepath, pl->dirfd, tmp, 0)) {
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

/* What the overwrite rules need of `q` (pointers borrowed from it). */
static void overwrite_view(const struct pkg *q, struct overwrite_pkg *v)
{
	v->name = q->pe->name;
	v->arch = deb_control_get(&q->ctl, "Architecture");
	v->version = deb_control_get(&q->ctl, "Version");
	v->replaces = deb_control_get(&q->ctl, "Replaces");
	v->ma_same = q->ma_same;
}

/* Same bytes, type, mode and owner as what is already on disk for `me`? */
/* Same contents as the open file `fd`? A lazy file is read on while compared. */
static int same_bytes(struct ctx *c, struct pkg *k, struct pfile *f, int fd)
{
	char *buf, *old, name[PKG_SPOOL_NAME];
	ssize_t n;
	uint64_t off = 0;
	int same = 1;

	if (f->spooled) {
		pkg_spool_name(k, f, name);
		return spool_same(c->spool_fd, name, fd, f->e.size);
	}
	if (!f->lazy) {
		buf = xmalloc((size_t)f->e.size + 1);
		n = pread(fd, buf, (size_t)f->e.size + 1, 0);
		same = n == (ssize_t)f->e.size && !memcmp(buf, f->data, (size_t)f->e.size);
		free(buf);
		return same;
	}
	buf = xmalloc(PKG_CHUNK);
	old = xmalloc(PKG_CHUNK);
	while (same && (n = pkg_lazy_read(k, f, buf, PKG_CHUNK)) > 0) {
		same = pread(fd, old, (size_t)n, (off_t)off) == n && !memcmp(buf, old, (size_t)n);
		off += (uint64_t)n;
	}
	free(buf);
	free(old);
	return same && f->lazy == 2;
}

static int same_object(struct ctx *c, struct pkg *k, const struct manifest_entry *me,
		       struct pfile *f, const struct place *pl)
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
	same = same_bytes(c, k, f, fd);
	close(fd);
	return same;
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

	for (i = 0; i < c->w.m->n; i++) {
		struct manifest_entry *e = c->w.m->v[i];

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

/* What becomes of an object `k` ships where an owned object already is (check_overwrite). */
enum apply_overwrite {
	APPLY_WRITE = 0, /* `k` writes it; its owners forget the path */
	APPLY_SHARE,     /* the identical file of another arch instance: kept, owned by both */
	APPLY_KEEP,      /* its owners replace `k`: kept, and not `k`'s */
};

/* `k` takes `pl->tree` over: its owners' lists forget it; its hard links keep the old file. */
static void take_over(struct ctx *c, struct pkg *k, const struct place *pl,
		      struct manifest_entry *me)
{
	size_t i;

	for (i = 0; i < me->owners.n; i++)
		drop_from_list(pkg_by_name(c, me->owners.v[i]), pl->tree);
	if (me->type == MF_REG)
		detach_hardlinks(c, pl->tree);
	log_debug("package '%s' replaces '/%s' of '%s'", k->dpkg_name, pl->tree, me->owners.v[0]);
	strv_release(&me->owners);
}

/* The overwrite rules' verdict for `k` and the owners of `me`; *culprit as overwrite_decide's. */
static enum overwrite_verdict decide(struct ctx *c, const struct pkg *k,
				     const struct manifest_entry *me, size_t *culprit)
{
	struct overwrite_pkg kv, *views = xcalloc(me->owners.n, sizeof(*views));
	const struct overwrite_pkg **owners = xcalloc(me->owners.n, sizeof(*owners));
	enum overwrite_verdict v;
	size_t i;

	overwrite_view(k, &kv);
	for (i = 0; i < me->owners.n; i++) {
		const struct pkg *q = pkg_by_name(c, me->owners.v[i]);

		if (q) {
			overwrite_view(q, &views[i]);
			owners[i] = &views[i];
		}
	}
	v = overwrite_decide(&kv, owners, me->owners.n, culprit);
	free(owners);
	free(views);
	return v;
}

/* An enum apply_overwrite, or a logged negative error. */
static int check_overwrite(struct ctx *c, struct pkg *k, struct pfile *f,
			   const struct place *pl, struct manifest_entry *me)
{
	const struct pkg *q;
	size_t i = 0;

	if (!me || !me->owners.n || strv_contains(&me->owners, k->dpkg_name))
		return APPLY_WRITE;
	switch (decide(c, k, me, &i)) {
	case OVERWRITE_SHARED:
		if (same_object(c, k, me, f, pl))
			return APPLY_SHARE;
		log_error("M-A same packages '%s' and '%s' ship different contents for '/%s' "
			  "(their versions must match and shared files be identical)",
			  me->owners.v[0], k->dpkg_name, pl->tree);
		return -MKI_E_CONFLICT;
	case OVERWRITE_KEEP:
		log_debug("package '%s': '/%s' kept from '%s', which replaces it", k->dpkg_name,
			  pl->tree, me->owners.v[0]);
		return APPLY_KEEP;
	case OVERWRITE_CONFLICT:
		q = pkg_by_name(c, me->owners.v[i]);
		log_error("package '%s' tries to overwrite '/%s', which is also in "
			  "package '%s' (no Replaces: %s)", k->dpkg_name, pl->tree,
			  me->owners.v[i], q ? q->pe->name : me->owners.v[i]);
		return -MKI_E_CONFLICT;
	case OVERWRITE_TAKE:
		break;
	}
	take_over(c, k, pl, me);
	return APPLY_WRITE;
}

static const char *first_owner(const struct manifest_entry *me)
{
	return me && me->owners.n ? me->owners.v[0] : "no package";
}

static enum overwrite_kind kind_in_tree(const struct stat *st, int exists)
{
	if (!exists)
		return OVERWRITE_NONE;
	return S_ISDIR(st->st_mode) ? OVERWRITE_DIR :
	       S_ISLNK(st->st_mode) ? OVERWRITE_LINK :
				      OVERWRITE_OTHER;
}

/*
 * A package ships a directory where a symlink is: 0 when the link leads to a directory (dpkg keeps
 * it), -ENOTDIR when it does not, or another error (logged).
 */
static int follow_link(struct ctx *c, struct pkg *k, const struct place *pl)
{
	struct buf canon = { 0 }, bad = { 0 };
	int r = beneath_resolve_dir(c->w.rootfd, pl->tree, &canon, &bad);

	if (r && r != -ENOTDIR)
		r = resolve_error(k, pl->tree, r, bad.p ? bad.p : "");
	buf_release(&canon);
	buf_release(&bad);
	return r;
}

static int apply_dir(struct ctx *c, struct pkg *k, struct pfile *f, const struct place *pl,
		     const struct stat *st, int exists)
{
	struct manifest_entry *me = manifest_get(c->w.m, pl->tree);
	enum overwrite_shape shape = overwrite_shape(kind_in_tree(st, exists), OVERWRITE_DIR);
	int r;

	if (shape == OVERWRITE_FOLLOW && (r = follow_link(c, k, pl)) != -ENOTDIR)
		return r;
	if (shape != OVERWRITE_WRITE) {
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
		me = manifest_add(c->w.m, pl->tree);
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
		if (strcmp(k->conffiles.v[i], pkgpath) || pkg_file_md5(f, hex))
			continue;
		free(k->md5s.v[i]);
		k->md5s.v[i] = xstrdup(hex);
	}
}

static int apply_nondir(struct ctx *c, struct pkg *k, struct pfile *f,
			const struct place *pl, const struct stat *st, int exists)
{
	struct manifest_entry *me = manifest_get(c->w.m, pl->tree), *first = NULL;
	enum overwrite_kind ships = f->e.type == MF_SYMLINK ? OVERWRITE_LINK : OVERWRITE_OTHER;
	enum overwrite_shape shape = overwrite_shape(kind_in_tree(st, exists), ships);
	int r;

	if (shape == OVERWRITE_KEEP_DIR) {
		log_debug("package '%s': directory '/%s' kept, not replaced by a symlink",
			  k->dpkg_name, pl->tree);
		if (me)
			owner_add(me, k->dpkg_name);
		return 0;
	}
	if (shape == OVERWRITE_MISMATCH) {
		log_error("package '%s' ships a non-directory at '/%s', where '%s' has a directory",
			  k->dpkg_name, pl->tree, first_owner(me));
		return -MKI_E_CONFLICT;
	}
	r = exists ? check_overwrite(c, k, f, pl, me) : APPLY_WRITE;
	if (r < 0)
		return r;
	if (r == APPLY_SHARE)
		owner_add(me, k->dpkg_name);
	if (r != APPLY_WRITE)
		return r == APPLY_SHARE ? 0 : APPLY_KEEP;
	r = create_object(c, k, f, pl, exists, &first);
	if (r)
		return r;
	if (f->e.type == MF_SYMLINK)
		cache_drop(c); /* the link may change how cached directories resolve */
	me = manifest_add(c->w.m, pl->tree);
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
	uint64_t max_entries = runlimits_get(c->lim, LIMIT_STAGING_ENTRIES);
	uint64_t max_bytes = runlimits_get(c->lim, LIMIT_STAGING_SIZE);

	if (++c->entries > max_entries) {
		log_error("package '%s': the packages together unpack to more than %llu entries: "
			  "refused at '%s' (%s)", k->dpkg_name, (unsigned long long)max_entries,
			  f->e.path, runlimits_hint(c->lim, LIMIT_STAGING_ENTRIES).s);
		return -MKI_E_LIMIT_PKG;
	}
	c->bytes += f->e.size;
	if (c->bytes > max_bytes) {
		log_error("package '%s': the packages together unpack to more than %s: refused at "
			  "'%s' (%s)", k->dpkg_name, runlimits_format(LIMIT_STAGING_SIZE, max_bytes).s,
			  f->e.path, runlimits_hint(c->lim, LIMIT_STAGING_SIZE).s);
		return -MKI_E_LIMIT_PKG;
	}
	return 0;
}

/* 1 when the path filters leave `norm` out: never written, but listed for `k` as dpkg does. */
static int skip_filtered(struct ctx *c, struct pkg *k, const struct pfile *f, const char *norm)
{
	char *abs;
	int skip;

	if (!c->filter.n)
		return 0;
	abs = xasprintf("/%s", norm);
	skip = pathfilter_skips(&c->filter, abs, f->e.type == MF_DIR || f->e.type == MF_SYMLINK);
	free(abs);
	if (!skip)
		return 0;
	log_debug("package '%s': '/%s' left out by the path filters", k->dpkg_name, norm);
	list_add(k, norm, norm, f->e.type);
	pathfilter_count_add(&c->filtered, f->e.type == MF_DIR, f->e.type == MF_REG ? f->e.size : 0);
	return 1;
}

/* After a failed locate: a directory the filters left out is a likelier cause than the package. */
static void explain_filtered_parent(struct ctx *c, const char *norm)
{
	char *abs = c->filter.n ? xasprintf("/%s", norm) : NULL;
	size_t n = abs ? pathfilter_left_out_parent(&c->filter, abs) : 0;

	if (n)
		log_error("'%s' has nowhere to go: the path filters left out its directory '%.*s' "
			  "(exclude '%.*s/*' rather than the directory itself, or include it by name: "
			  "dpkg keeps an excluded directory only when its path starts with an include's "
			  "part before the first wildcard)", abs, (int)n, abs, (int)n, abs);
	free(abs);
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
	if (skip_filtered(c, k, f, norm)) {
		free(norm);
		return 0;
	}
	r = locate(c, k, norm, &pl);
	if (r)
		explain_filtered_parent(c, norm);
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
		r = r == APPLY_KEEP ? 0 : r; /* the file stays another package's, not `k`'s */
		goto out;
	}
	list_add(k, norm, pl.tree, f->e.type);
	if (f->e.type == MF_REG && !(r = pkg_lazy_drain(k, f)))
		note_conffile(k, k->list[k->n_list - 1].pkgpath, f);
out:
	free(pl.tree);
	free(norm);
	return r;
}

/* A package too big to hold: read it again here and apply one file at a time. */
static int apply_stream(struct ctx *c, struct pkg *k)
{
	int r = pkg_open(k);

	log_debug("package '%s': streamed (too big to decode ahead)", k->dpkg_name);
	while (!r && (r = pkg_next_file(k, c->stream_max < LAZY_OVER ? c->stream_max : LAZY_OVER,
						 0)) == 1) {
		struct pfile *f = &k->files[k->n_files - 1];

		r = apply_entry(c, k, f);
		if (!r && f->lazy)
			r = pkg_lazy_drain(k, f);
		if (!r && f->lazy)
			pkg_add_md5sum(k, f);
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
	int r = staging_mkdirs(&c->w, usrdir);

	if (!r && fstatat(c->w.rootfd, dir, &st, AT_SYMLINK_NOFOLLOW)) {
		if (symlinkat(target, c->w.rootfd, dir)) {
			r = -errno;
			log_error("cannot create merged-/usr link '/%s': %s", dir, strerror(errno));
		} else {
			staging_chown(&c->w, c->w.rootfd, dir, 0, 0);
			set_times(c->w.rootfd, dir, c->w.mtime);
			staging_own_entry(&c->w, dir, MF_SYMLINK, 0777)->target = xstrdup(target);
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

/* Directories were made 0700 so an unprivileged unpack can fill them: now their real modes. */
static int finish_dirs(struct ctx *c)
{
	size_t i;

	manifest_sort(c->w.m);
	for (i = c->w.m->n; i-- > 0;) {
		const struct manifest_entry *me = c->w.m->v[i];
		const char *p = me->path;
		struct timespec ts[2] = { { .tv_sec = me->mtime }, { .tv_sec = me->mtime } };
		int fd;

		if (me->type != MF_DIR)
			continue;
		fd = open_beneath(c->w.rootfd, p, O_RDONLY);
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
		me = manifest_get(c->w.m, k->list[i].treepath);
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
	/* the work directory goes with the build: the list itself is in the build log */
	if (!r)
		log_info("multiarch lint: files of M-A same packages outside their triplet "
			 "directories: %s (%u shared by several archs; listed in the build log)",
			 sum.p, l.shared);
	if (!r)
		log_block(LOG_DEBUG, l.out.p, l.out.len, "multiarch lint:");
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

static int apply_all(struct ctx *c, struct workpool *pool)
{
	struct progress prog;
	size_t i;
	int r = 0;

	log_progress_begin(&prog, "unpack", c->n_pkgs, 0);
	for (i = 0; i < c->n_pkgs && !r; i++) {
		struct pkg *k = &c->pkgs[i];

		workpool_wait(pool, i);
		if (err_interrupted())
			r = -MKI_E_INTERRUPTED;
		else if (k->err)
			log_error("%s", k->errmsg ? k->errmsg : "decoding failed");
		r = r ? r : k->err;
		if (!r)
			r = apply_pkg(c, k);
		if (r)
			evict(k);
		pkg_drop_files(k);
		workpool_done(pool, i);
		log_progress_add(&prog, 1);
	}
	log_progress_end(&prog);
	return r;
}

/* Worker thread: decode package `i`; what it holds counts against the decode-ahead budget. */
static uint64_t decode_job(void *arg, size_t i)
{
	struct ctx *c = arg;
	struct pkg *k = &c->pkgs[i];

	k->err = pkg_decode(k, c->stream_max);
	return k->mem + k->meta;
}

static int run_pool(struct ctx *c, const struct settings *st)
{
	struct workpool_spec spec = { .n = c->n_pkgs, .budget = DECODE_BUDGET,
				      .job = decode_job, .arg = c };
	struct workpool *pool;
	int r, started;

	spec.threads = workpool_threads(st->jobs, c->n_pkgs);
	spec.window = DECODE_AHEAD * spec.threads;
	started = workpool_start(&pool, &spec);
	if (started < 0) {
		log_error("cannot start unpack worker threads");
		return started;
	}
	log_debug("unpacking %zu packages with %d decoder thread%s", c->n_pkgs, started,
		  started == 1 ? "" : "s");
	r = apply_all(c, pool);
	workpool_finish(pool);
	return r;
}

static int setup_root(struct staging *out, struct ctx *c, const struct settings *st)
{
	c->w.rootfd = staging_init(out, st->work_dir);
	if (c->w.rootfd < 0)
		return c->w.rootfd;
	staging_chown(&c->w, c->w.rootfd, "", 0, 0);
	staging_own_entry(&c->w, "", MF_DIR, 0755);
	return spool_open(st->work_dir, &c->spool_fd);
}

static void init_pkgs(struct ctx *c, const struct plan *p)
{
	size_t i;

	c->n_pkgs = p->n;
	c->pkgs = xcalloc(p->n ? p->n : 1, sizeof(*c->pkgs));
	for (i = 0; i < p->n; i++) {
		c->pkgs[i].pe = &p->v[i];
		c->pkgs[i].lim = c->lim;
		c->pkgs[i].filter = &c->filter;
		c->pkgs[i].id = i;
		c->pkgs[i].spool_fd = c->spool_fd;
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

/* The dpkg database's view of each package, in plan order; lists[i] is info/PKG.list. */
static void db_views(struct ctx *c, struct dpkgdb_pkg *v, struct buf *lists)
{
	size_t i, j;

	for (i = 0; i < c->n_pkgs; i++) {
		const struct pkg *k = &c->pkgs[i];

		buf_adds(&lists[i], "");
		for (j = 0; j < k->n_list; j++)
			if (k->list[j].pkgpath)
				buf_addf(&lists[i], "%s\n", k->list[j].pkgpath);
		v[i] = (struct dpkgdb_pkg){ .control = &k->ctl, .dpkg_name = k->dpkg_name,
					    .conffiles = &k->conffiles, .conffile_md5s = &k->md5s,
					    .deb = k->deb, .list = &lists[i], .md5sums = &k->md5sums };
	}
}

/* The image's own dpkg goes on leaving out what the recipe's path filters left out. */
static int write_filter_cfg(struct ctx *c)
{
	struct buf b = { 0 };
	int r;

	if (!c->filter.n)
		return 0;
	pathfilter_format_dpkg_cfg(&c->filter, &b);
	r = staging_mkdirs(&c->w, "etc/dpkg/dpkg.cfg.d");
	if (!r)
		r = staging_write_file(&c->w, PATHFILTER_DPKG_CFG, b.p, b.len, 0644);
	buf_release(&b);
	return r;
}

static int write_db(struct ctx *c, const struct strv *archs)
{
	struct dpkgdb_pkg *v = xcalloc(c->n_pkgs ? c->n_pkgs : 1, sizeof(*v));
	struct buf *lists = xcalloc(c->n_pkgs ? c->n_pkgs : 1, sizeof(*lists));
	size_t i;
	int r;

	db_views(c, v, lists);
	r = dpkgdb_write(&c->w, v, c->n_pkgs, archs);
	if (!r)
		r = write_filter_cfg(c);
	for (i = 0; i < c->n_pkgs; i++)
		buf_release(&lists[i]);
	free(lists);
	free(v);
	return r;
}

static int finish(struct ctx *c, struct staging *out, const struct strv *archs)
{
	int r = write_db(c, archs);

	if (!r)
		r = finish_dirs(c);
	if (!r)
		r = write_lint(c, out->lint_file, archs);
	if (!r && (r = manifest_save(c->w.m, out->manifest_file)))
		log_error("cannot save the manifest '%s': %s", out->manifest_file, strerror(-r));
	if (!r && c->nodes_skipped)
		log_info("%u device node%s recorded in the manifest only (mknod needs privilege)",
			 c->nodes_skipped, c->nodes_skipped == 1 ? "" : "s");
	return r;
}

int unpack_plan(struct staging *out, const struct plan *p, const struct recipe *r,
		const struct settings *st)
{
	struct ctx c = { .w = { .rootfd = -1, .can_chown = 1 }, .cache_fd = -1, .lim = &st->limits,
			 .spool_fd = -1 };
	struct strv archs = { 0 };
	double t0 = log_now();
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	manifest_init(&out->manifest);
	c.w.m = &out->manifest;
	c.w.mtime = st->source_date_epoch >= 0 ? st->source_date_epoch : 0;
	c.stream_max = st->stream_over;
	plan_archs(p, r, &archs);
	pathfilter_build(&c.filter, r->minimize, &r->locales, &r->path_exclude, &r->path_include);
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
	out->filtered = c.filtered;
	pathfilter_release(&c.filter);
	for (i = 0; i < c.n_pkgs; i++)
		pkg_release(&c.pkgs[i]);
	free(c.pkgs);
	spool_close(st->work_dir, c.spool_fd);
	if (c.w.rootfd >= 0)
		close(c.w.rootfd);
	strv_release(&archs);
	return ret;
}
