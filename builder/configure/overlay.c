/*
 * Overlays. The source is read with no link followed (links are copied as links, never read
 * through); the tree is reached only through beneath.h, and each entry lands in the directory
 * the kernel resolved inside the tree, under a temporary name renamed into place.
 */
#include "overlay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/manifest.h"
#include "sandbox/idshift.h"
#include "sandbox/sandbox.h"
#include "tree/staging.h"

#define COPY_CHUNK (64u << 10)
#define TMP_NAME ".mkimage-overlay.tmp"

/* One entry of a source tree, depth first with sorted names: parents before children. */
struct ov_entry {
	char *path; /* relative to the source root; "" is the root itself */
	struct stat st;
	char *target; /* symlinks */
};

struct ov_tree {
	struct ov_entry *v;
	size_t n, alloc;
	struct hash h;
};

struct ctx {
	const struct recipe *r;
	const struct recipe_overlay *o;
	struct staging *s;
	int rootfd;
	char *root_path; /* the tree's root as the kernel names it (/proc/self/fd) */
	int64_t sde;
	struct overlay_result *res;
	int dry; /* overlay_precheck(): check what can be checked, write nothing */
};

static int fail(const char *file, const struct recipe_overlay *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "FILE:LINE: overlay 'SOURCE': WHAT": the recipe entry is what the user has to change. */
static int fail(const char *file, const struct recipe_overlay *o, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	log_error("%s:%d: overlay '%s': %s", file, o->line, o->source, msg);
	free(msg);
	return -MKI_E_RECIPE;
}

int overlay_link_inside(const char *path, const char *target)
{
	const char *p;
	long depth = 0;

	if (target[0] == '/')
		return 1;
	for (p = path; *p; p++)
		depth += *p == '/';
	for (p = target; *p;) {
		size_t len = strcspn(p, "/");

		if (len == 2 && !strncmp(p, "..", 2))
			depth--;
		else if (len && !(len == 1 && *p == '.'))
			depth++;
		if (depth < 0)
			return 0;
		p += len + (p[len] == '/');
	}
	return 1;
}

static char type_of(mode_t m)
{
	return S_ISREG(m) ? MF_REG : S_ISDIR(m) ? MF_DIR : S_ISLNK(m) ? MF_SYMLINK
		: S_ISCHR(m) ? MF_CHR : S_ISBLK(m) ? MF_BLK : S_ISFIFO(m) ? MF_FIFO : MF_SOCK;
}

static void tree_release(struct ov_tree *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].path);
		free(t->v[i].target);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* The contents of regular file `name` in `dirfd` into the digest. */
static int hash_contents(struct ov_tree *t, int dirfd, const char *name)
{
	char *chunk;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	chunk = xmalloc(COPY_CHUNK);
	while ((n = read(fd, chunk, COPY_CHUNK)) > 0 && !err_interrupted())
		hash_update(&t->h, chunk, (size_t)n);
	if (n < 0)
		ret = -errno;
	else if (err_interrupted())
		ret = -MKI_E_INTERRUPTED;
	free(chunk);
	close(fd);
	return ret;
}

/*
 * Checkouts of one overlay differ in the group and other write bits (umask 002 or 022: git records
 * no more than the owner's x bit), so those are dropped: one overlay, one image, under any umask.
 */
static mode_t kept_mode(mode_t m)
{
	return m & ~(mode_t)(S_IWGRP | S_IWOTH);
}

/* What the digest knows of an entry besides its contents: no time, no owner. */
static void hash_meta(struct hash *h, const char *rel, const struct stat *sb, const char *target)
{
	char meta[128];
	char type = type_of(sb->st_mode);
	int len = snprintf(meta, sizeof(meta), "%c %04o %llu %u:%u", type,
			   (unsigned)(sb->st_mode & 07777),
			   type == MF_REG ? (unsigned long long)sb->st_size : 0ull,
			   type == MF_CHR || type == MF_BLK ? major(sb->st_rdev) : 0,
			   type == MF_CHR || type == MF_BLK ? minor(sb->st_rdev) : 0);

	hash_update(h, rel, strlen(rel) + 1);
	hash_update(h, meta, (size_t)len + 1);
	if (target)
		hash_update(h, target, strlen(target) + 1);
}

/* Check one entry and add it (listing and contents) to the tree and its digest. */
static int scan_entry(struct ov_tree *t, const char *file, const struct recipe_overlay *o,
		      int dirfd, const char *name, const char *rel, const struct stat *sb)
{
	struct ov_entry *e;
	char type = type_of(sb->st_mode), target[PATH_MAX];
	ssize_t n = 0;
	int ret = 0;

	if (type == MF_SOCK)
		return fail(file, o, "'%s' is a socket, which an image cannot hold: remove it", rel);
	if ((type == MF_CHR || type == MF_BLK || type == MF_FIFO) && !o->devices)
		return fail(file, o, "'%s' is a %s: set 'devices = true' in this overlay if the "
			    "image really needs it", rel, type == MF_FIFO ? "FIFO" : "device node");
	if (type == MF_SYMLINK) {
		n = readlinkat(dirfd, name, target, sizeof(target) - 1);
		if (n <= 0)
			return fail(file, o, "cannot read the symlink '%s': %s", rel,
				    n < 0 ? strerror(errno) : "empty link");
		target[n] = 0;
		if (!overlay_link_inside(rel, target))
			return fail(file, o, "the symlink '%s' points outside the overlay ('%s'): "
				    "make it absolute (a path of the image) or keep it inside", rel,
				    target);
	}
	ALLOC_GROW(t->v, t->n + 1, t->alloc);
	e = &t->v[t->n++];
	e->path = xstrdup(rel);
	e->st = *sb;
	e->st.st_mode = kept_mode(sb->st_mode);
	e->target = type == MF_SYMLINK ? xstrdup(target) : NULL;
	hash_meta(&t->h, rel, &e->st, e->target);
	if (type == MF_REG && (ret = hash_contents(t, dirfd, name)) && ret > -MKI_E_BASE)
		return fail(file, o, "cannot read '%s': %s", rel, strerror(-ret));
	return ret;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int not_dots(const struct dirent *d)
{
	return strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
}

static int scan_dir(struct ov_tree *t, const char *file, const struct recipe_overlay *o,
		    int dirfd, const char *rel)
{
	struct dirent **names = NULL;
	int n = scandirat(dirfd, ".", &names, not_dots, by_name), i, ret = 0;

	if (n < 0)
		return fail(file, o, "cannot list '%s': %s", *rel ? rel : ".", strerror(errno));
	for (i = 0; i < n && !ret; i++) {
		const char *name = names[i]->d_name;
		char *child = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
		struct stat sb;
		int sub;

		if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			ret = fail(file, o, "cannot read '%s': %s", child, strerror(errno));
		if (!ret)
			ret = scan_entry(t, file, o, dirfd, name, child, &sb);
		if (!ret && S_ISDIR(sb.st_mode)) {
			sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			ret = sub < 0 ? fail(file, o, "cannot open '%s': %s", child, strerror(errno))
				      : scan_dir(t, file, o, sub, child);
			if (sub >= 0)
				close(sub);
		}
		free(child);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/* The whole source tree of `o`, checked, with its digest in `hex`. */
static int scan(struct ov_tree *t, const char *file, const struct recipe_overlay *o, char *hex)
{
	struct stat sb;
	int fd, ret;

	memset(t, 0, sizeof(*t));
	fd = open(o->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail(file, o, "cannot open the source directory: %s", strerror(errno));
	if (hash_init(&t->h, HASH_SHA256) < 0) {
		close(fd);
		return -ENOMEM;
	}
	ret = fstat(fd, &sb) < 0 ? -errno : scan_entry(t, file, o, fd, ".", "", &sb);
	if (!ret)
		ret = scan_dir(t, file, o, fd, "");
	close(fd);
	if (ret) {
		hash_release(&t->h);
		tree_release(t);
		return ret < -MKI_E_BASE ? ret : fail(file, o, "cannot read it: %s", strerror(-ret));
	}
	hash_final_hex(&t->h, hex);
	return 0;
}

int overlay_check(struct recipe_overlay *o, const char *file)
{
	struct ov_tree t;
	int ret = scan(&t, file, o, o->digest);

	if (!ret)
		tree_release(&t);
	return ret;
}

/* --- into the tree ------------------------------------------------------------------------ */

/* The canonical tree path of `name` in directory `dirfd` (resolved in the tree): new string. */
static char *canonical(const struct ctx *c, int dirfd, const char *name)
{
	char link[64], dir[PATH_MAX];
	size_t rootlen = strlen(c->root_path);
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
	n = readlink(link, dir, sizeof(dir) - 1);
	if (n < 0)
		return NULL;
	dir[n] = 0;
	if ((size_t)n < rootlen || memcmp(dir, c->root_path, rootlen) ||
	    (dir[rootlen] && dir[rootlen] != '/'))
		return NULL;
	if (!dir[rootlen] || !strcmp(dir + rootlen, "/"))
		return xstrdup(name);
	return xasprintf("%s/%s", dir + rootlen + 1, name);
}

static int64_t clamp(const struct ctx *c, int64_t t)
{
	return c->sde >= 0 && t > c->sde ? c->sde : t;
}

/*
 * The overlay's owner, as the build's commands see it. A single-id namespace cannot give
 * files other owners: the manifest (which the image writer trusts) then carries them alone.
 */
static int give_owner(const struct ctx *c, int dirfd, const char *name)
{
	const struct sandbox_info *si = sandbox_get();
	int flags = *name ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH;

	if (!fchownat(dirfd, name, idshift_tree_uid(c->o->uid), idshift_tree_gid(c->o->gid), flags))
		return 0;
	if (si && si->ids == SANDBOX_IDS_SINGLE && (errno == EPERM || errno == EINVAL))
		return 0;
	return -errno;
}

/* Metadata of a new object `name` in `dirfd` (not followed). */
static int finish_meta(const struct ctx *c, int dirfd, const char *name, const struct ov_entry *e)
{
	struct timespec ts[2] = { { .tv_sec = clamp(c, e->st.st_mtime) },
				  { .tv_sec = clamp(c, e->st.st_mtime) } };
	int ret = give_owner(c, dirfd, name);

	if (!ret && !S_ISLNK(e->st.st_mode) && fchmodat(dirfd, name, e->st.st_mode & 07777, 0) < 0)
		ret = -errno;
	if (!ret && utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		ret = -errno;
	return ret;
}

/* Record `e` at canonical `path`, keeping the owning packages of what it replaced. */
static void record(const struct ctx *c, const char *path, const struct ov_entry *e)
{
	struct manifest_entry *me = manifest_get(&c->s->manifest, path);
	struct strv owners = { 0 };

	if (me) {
		owners = me->owners;
		memset(&me->owners, 0, sizeof(me->owners));
		manifest_remove(&c->s->manifest, path);
	}
	me = manifest_add(&c->s->manifest, path);
	me->type = type_of(e->st.st_mode);
	me->mode = e->st.st_mode & 07777;
	me->uid = c->o->uid;
	me->gid = c->o->gid;
	me->mtime = clamp(c, e->st.st_mtime);
	me->size = S_ISREG(e->st.st_mode) ? (uint64_t)e->st.st_size : 0;
	me->major = S_ISCHR(e->st.st_mode) || S_ISBLK(e->st.st_mode) ? major(e->st.st_rdev) : 0;
	me->minor = S_ISCHR(e->st.st_mode) || S_ISBLK(e->st.st_mode) ? minor(e->st.st_rdev) : 0;
	me->target = e->target ? xstrdup(e->target) : NULL;
	me->owners = owners;
}

static int copy_fd(int from, int to)
{
	char *chunk = xmalloc(COPY_CHUNK);
	ssize_t n;
	int ret = 0;

	while (!ret && (n = read(from, chunk, COPY_CHUNK)) != 0) {
		if (n < 0)
			ret = errno == EINTR ? 0 : -errno;
		else
			ret = fsutil_write_all(to, chunk, (size_t)n);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	free(chunk);
	return ret;
}

/* The bytes of source entry `e` into new file TMP_NAME of `dirfd`. */
static int write_file(const struct ctx *c, int dirfd, const struct ov_entry *e)
{
	char *src = xasprintf("%s/%s", c->o->source, e->path);
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), out, ret;
	struct stat sb;

	free(src);
	if (in < 0)
		return -errno;
	/* Changed since the digest was taken: the recipe's digest would not describe the image. */
	if (fstat(in, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size != e->st.st_size) {
		close(in);
		return -ESTALE;
	}
	out = openat(dirfd, TMP_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	ret = out < 0 ? -errno : copy_fd(in, out);
	if (out >= 0 && close(out) < 0 && !ret)
		ret = -errno;
	close(in);
	c->res->bytes += ret ? 0 : (uint64_t)e->st.st_size;
	return ret;
}

/* Create the object of `e` as TMP_NAME in `dirfd`, with its metadata. */
static int make_object(const struct ctx *c, int dirfd, const struct ov_entry *e)
{
	int ret = 0;

	unlinkat(dirfd, TMP_NAME, 0); /* left by a write that failed: ours to remove */
	if (S_ISREG(e->st.st_mode))
		ret = write_file(c, dirfd, e);
	else if (S_ISLNK(e->st.st_mode) && symlinkat(e->target, dirfd, TMP_NAME) < 0)
		ret = -errno;
	else if (S_ISFIFO(e->st.st_mode) && mknodat(dirfd, TMP_NAME, S_IFIFO | 0600, 0) < 0)
		ret = -errno;
	if (!ret)
		ret = finish_meta(c, dirfd, TMP_NAME, e);
	if (ret)
		unlinkat(dirfd, TMP_NAME, 0);
	return ret;
}

/* May `e` take the place of what the tree has at `path` (`old`, when `exists`)? */
static int may_replace(const struct ctx *c, const char *path, const struct ov_entry *e,
		       int exists, const struct stat *old)
{
	const struct manifest_entry *me = manifest_get(&c->s->manifest, path);

	if (exists && S_ISDIR(old->st_mode))
		return fail(c->r->file, c->o, "'%s' would replace the directory '/%s' of the tree: "
			    "an overlay adds to directories, it does not replace them", e->path,
			    path);
	if (me && me->owners.n && !c->o->replace)
		return fail(c->r->file, c->o, "'%s' would replace '/%s' of package '%s': set "
			    "'replace = true' in this overlay if that is intended", e->path, path,
			    me->owners.v[0]);
	if (me && me->owners.n && !c->dry)
		strv_push_take(&c->res->replaced, xasprintf("/%s (%s)", path, me->owners.v[0]));
	return 0;
}

/* A non-directory entry: checked, written beside its place, renamed over it. */
static int put_entry(const struct ctx *c, const char *rel, const struct ov_entry *e)
{
	const char *name;
	char *path = NULL;
	struct stat old;
	int dirfd = beneath_parent(c->rootfd, rel, &name), exists, ret;

	if (dirfd < 0 && c->dry)
		return 0; /* a directory the overlay creates: nothing there to clash with */
	if (dirfd < 0)
		return fail(c->r->file, c->o, "cannot reach the directory of '/%s' in the tree: %s",
			    rel, strerror(-dirfd));
	path = canonical(c, dirfd, name);
	exists = !fstatat(dirfd, name, &old, AT_SYMLINK_NOFOLLOW);
	ret = path ? may_replace(c, path, e, exists, &old) : -EXDEV;
	if (c->dry) {
		close(dirfd);
		free(path);
		return ret == -EXDEV ? 0 : ret;
	}
	if (!ret && (S_ISCHR(e->st.st_mode) || S_ISBLK(e->st.st_mode))) {
		if (exists && unlinkat(dirfd, name, 0) < 0)
			ret = -errno; /* the manifest's node is what the image gets */
	} else if (!ret) {
		ret = make_object(c, dirfd, e);
		if (!ret && renameat(dirfd, TMP_NAME, dirfd, name) < 0) {
			ret = -errno;
			unlinkat(dirfd, TMP_NAME, 0);
		}
	}
	if (!ret)
		record(c, path, e);
	else if (ret > -MKI_E_BASE)
		log_error("overlay '%s' (%s:%d): cannot write '/%s' into the tree '%s': %s",
			  c->o->source, c->r->file, c->o->line, rel, c->s->root,
			  ret == -ESTALE ? "the source changed during the build" : strerror(-ret));
	close(dirfd);
	free(path);
	return ret && ret > -MKI_E_BASE ? -MKI_E_HOOK : ret;
}

/* A directory entry: one that exists (or a link to one) is kept; a new one gets `e`'s metadata. */
static int put_dir(const struct ctx *c, const char *rel, const struct ov_entry *e)
{
	const char *name;
	char *path = NULL;
	int fd = beneath_open(c->rootfd, rel, O_PATH | O_DIRECTORY, 0), dirfd, ret;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd != -ENOENT)
		return fail(c->r->file, c->o, "'%s' is a directory, but '/%s' in the tree is not "
			    "one (%s)", *e->path ? e->path : ".", rel, strerror(-fd));
	if (c->dry)
		return 0;
	dirfd = beneath_parent(c->rootfd, rel, &name);
	if (dirfd < 0)
		return fail(c->r->file, c->o, "the directory holding '/%s' does not exist in the "
			    "tree: create it in the overlay or choose another destination", rel);
	path = canonical(c, dirfd, name);
	ret = !path ? -EXDEV : mkdirat(dirfd, name, 0700) < 0 ? -errno
							: finish_meta(c, dirfd, name, e);
	if (!ret)
		record(c, path, e);
	else
		log_error("overlay '%s' (%s:%d): cannot create the directory '/%s' in '%s': %s",
			  c->o->source, c->r->file, c->o->line, rel, c->s->root, strerror(-ret));
	c->res->dirs += !ret;
	close(dirfd);
	free(path);
	return ret ? -MKI_E_HOOK : 0;
}

static int apply_one(struct ctx *c)
{
	struct ov_tree t;
	char hex[65];
	size_t i;
	int ret = scan(&t, c->r->file, c->o, hex);

	if (!ret && strcmp(hex, c->o->digest))
		ret = fail(c->r->file, c->o, "its contents changed since the recipe was read: build "
			   "again");
	for (i = 0; !ret && i < t.n; i++) {
		const struct ov_entry *e = &t.v[i];
		char *rel = !*e->path ? xstrdup(*c->o->destination ? c->o->destination : ".")
			    : *c->o->destination ? xasprintf("%s/%s", c->o->destination, e->path)
						 : xstrdup(e->path);

		if (err_interrupted())
			ret = -MKI_E_INTERRUPTED;
		else if (S_ISDIR(e->st.st_mode))
			ret = put_dir(c, rel, e);
		else
			ret = put_entry(c, rel, e);
		c->res->files += !ret && S_ISREG(e->st.st_mode);
		c->res->links += !ret && S_ISLNK(e->st.st_mode);
		c->res->specials += !ret && !S_ISREG(e->st.st_mode) && !S_ISLNK(e->st.st_mode) &&
				    !S_ISDIR(e->st.st_mode);
		free(rel);
	}
	tree_release(&t); /* zeroed when the scan failed */
	return ret;
}

/* The tree's root as the kernel names it, which canonical() strips from resolved directories. */
static int ctx_init(struct ctx *c)
{
	char link[64], root[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", c->rootfd);
	n = readlink(link, root, sizeof(root) - 1);
	if (n <= 0) {
		log_error("cannot name the staging tree '%s': %s", c->s->root, strerror(errno));
		return -MKI_E_HOOK;
	}
	root[n] = 0;
	c->root_path = xstrdup(strcmp(root, "/") ? root : "");
	return 0;
}

int overlay_precheck(const struct recipe *r, struct staging *s, int rootfd)
{
	struct ctx c = { .r = r, .s = s, .rootfd = rootfd, .sde = -1, .dry = 1 };
	struct overlay_result scratch = { 0 };
	size_t i;
	int ret = r->n_overlays ? ctx_init(&c) : 0;

	for (i = 0; !ret && i < r->n_overlays; i++) {
		c.o = &r->overlays[i];
		c.res = &scratch;
		ret = apply_one(&c);
	}
	free(c.root_path);
	return ret;
}

int overlay_apply(const struct recipe *r, struct staging *s, int rootfd, int64_t sde,
		  struct overlay_report **out)
{
	struct ctx c = { .r = r, .s = s, .rootfd = rootfd, .sde = sde };
	struct overlay_report *rep;
	size_t i;
	int ret = r->n_overlays ? ctx_init(&c) : 0;

	*out = NULL;
	if (ret || !r->n_overlays)
		return ret;
	rep = xcalloc(1, sizeof(*rep));
	rep->v = xcalloc(r->n_overlays, sizeof(*rep->v));
	for (i = 0; !ret && i < r->n_overlays; i++) {
		double t0 = log_now();

		c.o = &r->overlays[i];
		c.res = &rep->v[rep->n++];
		c.res->o = c.o;
		ret = apply_one(&c);
		if (!ret)
			log_info("overlay '%s' -> '/%s': %u files, %u links, %u new directories, "
				 "%.1f s", c.o->source, c.o->destination, c.res->files, c.res->links,
				 c.res->dirs, log_now() - t0);
	}
	free(c.root_path);
	if (ret)
		overlay_report_free(rep);
	else
		*out = rep;
	return ret;
}

void overlay_report_json(const struct overlay_report *rep, struct buf *b)
{
	size_t i, j;

	buf_adds(b, "  \"overlays\": [");
	for (i = 0; i < rep->n; i++) {
		const struct overlay_result *x = &rep->v[i];
		char *dest = xasprintf("/%s", x->o->destination);

		buf_adds(b, i ? ",\n    { \"source\": " : "\n    { \"source\": ");
		json_str(b, x->o->source);
		buf_adds(b, ", \"destination\": ");
		json_str(b, dest);
		free(dest);
		buf_addf(b, ", \"sha256\": \"%s\", \"files\": %u, \"links\": %u, "
			 "\"directories\": %u, \"special\": %u, \"bytes\": %llu, \"replaced\": [",
			 x->o->digest, x->files, x->links, x->dirs, x->specials,
			 (unsigned long long)x->bytes);
		for (j = 0; j < x->replaced.n; j++) {
			buf_adds(b, j ? ", " : " ");
			json_str(b, x->replaced.v[j]);
		}
		buf_adds(b, x->replaced.n ? " ] }" : "] }");
	}
	buf_adds(b, rep->n ? "\n  ],\n" : "],\n");
}

static void report_release(struct overlay_report *rep)
{
	size_t i;

	for (i = 0; i < rep->n; i++)
		strv_release(&rep->v[i].replaced);
	free(rep->v);
	memset(rep, 0, sizeof(*rep));
}

void overlay_report_free(struct overlay_report *rep)
{
	if (!rep)
		return;
	report_release(rep);
	free(rep);
}
