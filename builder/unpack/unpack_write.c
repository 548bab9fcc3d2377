/*
 * Where a package path lands in the tree and how an object is written there: paths resolved in
 * userspace with chroot semantics, then the canonical directory opened beneath the root
 * (openat2, no symlinks); metadata, regular files (spooled or streamed), links and nodes.
 */
#include "unpack_ctx.h"

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

/* --- path resolution inside the root ------------------------------------------------------- */

/* Directory `canon` (a canonical tree path): no symlink may be on the way, none at its end. */
int unpack_open_beneath(int rootfd, const char *canon, int flags)
{
	return beneath_open_canonical(rootfd, canon, flags | O_DIRECTORY);
}

void unpack_cache_drop(struct unpack_ctx *c)
{
	if (c->cache_fd >= 0)
		close(c->cache_fd);
	c->cache_fd = -1;
	free(c->cache_key);
	free(c->cache_tree);
	c->cache_key = c->cache_tree = NULL;
}

int unpack_resolve_error(struct pkg *k, const char *path, int r, const char *bad)
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
int unpack_locate(struct unpack_ctx *c, struct pkg *k, const char *norm, struct unpack_place *pl)
{
	const char *slash = strrchr(norm, '/');
	char *parent = slash ? xstrndup(norm, (size_t)(slash - norm)) : xstrdup("");
	struct buf canon = { 0 }, bad = { 0 };
	int r = 0;

	pl->name = slash ? slash + 1 : norm;
	if (!c->cache_key || strcmp(c->cache_key, parent)) {
		unpack_cache_drop(c);
		r = beneath_resolve_dir(c->w.rootfd, parent, &canon, &bad);
		if (!r && (c->cache_fd = unpack_open_beneath(c->w.rootfd, canon.p, O_PATH)) < 0)
			r = c->cache_fd;
		if (r) {
			r = unpack_resolve_error(k, norm, r, bad.p ? bad.p : "");
			unpack_cache_drop(c);
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

void unpack_set_times(int dirfd, const char *name, int64_t mtime)
{
	struct timespec ts[2] = { { .tv_sec = mtime }, { .tv_sec = mtime } };

	utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
}

/* Owner, mode, xattrs and time of a freshly written regular file. */
static int meta_fd(struct unpack_ctx *c, int fd, const struct deb_entry *e)
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

void unpack_meta_at(struct unpack_ctx *c, int dirfd, const char *name, const struct deb_entry *e)
{
	staging_chown(&c->w, dirfd, name, e->uid, e->gid);
}

void unpack_manifest_fill(struct manifest_entry *me, const struct deb_entry *e)
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

void unpack_owner_add(struct manifest_entry *me, const char *owner)
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
static int place_spooled(struct unpack_ctx *c, struct pkg *k, struct pfile *f, const struct unpack_place *pl,
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

static int write_reg(struct unpack_ctx *c, struct pkg *k, struct pfile *f, const struct unpack_place *pl,
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

static struct lentry *list_find(struct pkg *k, const char *pkgpath)
{
	size_t i;

	for (i = k->n_list; i-- > 0;)
		if (k->list[i].pkgpath && !strcmp(k->list[i].pkgpath, pkgpath))
			return &k->list[i];
	return NULL;
}

static int write_link(struct unpack_ctx *c, struct pkg *k, struct pfile *f,
		      const struct unpack_place *pl, const char *tmp, struct manifest_entry **first)
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

static int write_node(struct unpack_ctx *c, struct pfile *f, const struct unpack_place *pl,
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
	unpack_meta_at(c, pl->dirfd, tmp, &f->e);
	if (fchmodat(pl->dirfd, tmp, f->e.mode, 0))
		return -errno;
	unpack_set_times(pl->dirfd, tmp, f->e.mtime);
	return 0;
}

/*
 * Create the object of `f`: straight at `pl->name` when nothing is there (no rename to pay),
 * else under a temporary name renamed over the old object, as dpkg does.
 */
int unpack_create_object(struct unpack_ctx *c, struct pkg *k, struct pfile *f,
			 const struct unpack_place *pl, int exists, struct manifest_entry **first)
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
		unpack_meta_at(c, pl->dirfd, tmp, &f->e);
		unpack_set_times(pl->dirfd, tmp, f->e.mtime);
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
