/*
 * One entry of a package applied to the tree: its name checked, the path filters, dpkg's
 * overwrite rules (debian/overwrite.c) against what the tree holds, then the object written
 * (unpack_write.c) and recorded in the manifest and the package's list.
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

/* --- one entry ----------------------------------------------------------------------------- */

static struct pkg *pkg_by_name(struct unpack_ctx *c, const char *dpkg_name)
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
static int same_bytes(struct unpack_ctx *c, struct pkg *k, struct pfile *f, int fd)
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

static int same_object(struct unpack_ctx *c, struct pkg *k, const struct manifest_entry *me,
		       struct pfile *f, const struct unpack_place *pl)
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
static void detach_hardlinks(struct unpack_ctx *c, const char *tree)
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
static void take_over(struct unpack_ctx *c, struct pkg *k, const struct unpack_place *pl,
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
static enum overwrite_verdict decide(struct unpack_ctx *c, const struct pkg *k,
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
static int check_overwrite(struct unpack_ctx *c, struct pkg *k, struct pfile *f,
			   const struct unpack_place *pl, struct manifest_entry *me)
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
static int follow_link(struct unpack_ctx *c, struct pkg *k, const struct unpack_place *pl)
{
	struct buf canon = { 0 }, bad = { 0 };
	int r = beneath_resolve_dir(c->w.rootfd, pl->tree, &canon, &bad);

	if (r && r != -ENOTDIR)
		r = unpack_resolve_error(k, pl->tree, r, bad.p ? bad.p : "");
	buf_release(&canon);
	buf_release(&bad);
	return r;
}

static int apply_dir(struct unpack_ctx *c, struct pkg *k, struct pfile *f, const struct unpack_place *pl,
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
		unpack_meta_at(c, pl->dirfd, pl->name, &f->e);
		me = NULL;
	}
	if (!me) {
		me = manifest_add(c->w.m, pl->tree);
		unpack_manifest_fill(me, &f->e);
	}
	unpack_owner_add(me, k->dpkg_name);
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

static int apply_nondir(struct unpack_ctx *c, struct pkg *k, struct pfile *f,
			const struct unpack_place *pl, const struct stat *st, int exists)
{
	struct manifest_entry *me = manifest_get(c->w.m, pl->tree), *first = NULL;
	enum overwrite_kind ships = f->e.type == MF_SYMLINK ? OVERWRITE_LINK : OVERWRITE_OTHER;
	enum overwrite_shape shape = overwrite_shape(kind_in_tree(st, exists), ships);
	int r;

	if (shape == OVERWRITE_KEEP_DIR) {
		log_debug("package '%s': directory '/%s' kept, not replaced by a symlink",
			  k->dpkg_name, pl->tree);
		if (me)
			unpack_owner_add(me, k->dpkg_name);
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
		unpack_owner_add(me, k->dpkg_name);
	if (r != APPLY_WRITE)
		return r == APPLY_SHARE ? 0 : APPLY_KEEP;
	r = unpack_create_object(c, k, f, pl, exists, &first);
	if (r)
		return r;
	if (f->e.type == MF_SYMLINK)
		unpack_cache_drop(c); /* the link may change how cached directories resolve */
	me = manifest_add(c->w.m, pl->tree);
	unpack_manifest_fill(me, &f->e);
	if (first) {
		me->target = xstrdup(first->type == MF_HARDLINK ? first->target : first->path);
		me->size = first->size;
	}
	unpack_owner_add(me, k->dpkg_name);
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
static int count_staging(struct unpack_ctx *c, struct pkg *k, const struct pfile *f)
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
static int skip_filtered(struct unpack_ctx *c, struct pkg *k, const struct pfile *f, const char *norm)
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
static void explain_filtered_parent(struct unpack_ctx *c, const char *norm)
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

static int apply_entry(struct unpack_ctx *c, struct pkg *k, struct pfile *f)
{
	struct unpack_place pl = { .dirfd = -1 };
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
	r = unpack_locate(c, k, norm, &pl);
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
		unpack_cache_drop(c); /* a replaced link may change how cached directories resolve */
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
static int apply_stream(struct unpack_ctx *c, struct pkg *k)
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

int unpack_apply_pkg(struct unpack_ctx *c, struct pkg *k)
{
	size_t i;
	int r = 0;

	if (k->stream)
		return apply_stream(c, k);
	for (i = 0; i < k->n_files && !r; i++)
		r = apply_entry(c, k, &k->files[i]);
	return r;
}
