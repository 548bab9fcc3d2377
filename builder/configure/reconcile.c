/*
 * Reconcile the manifest with the staging tree after scripts and hooks changed it: the tree is
 * walked through directory fds (no path is re-resolved from the host) and every entry recorded
 * as a command in the sandbox sees it.
 */
#include "reconcile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "sandbox/idshift.h"
#include "sandbox/sandbox.h"
#include "tree/treeread.h"
#include "tree/treesum.h"

struct link_ref {
	dev_t dev;
	ino_t ino;
	struct manifest_entry *e;
	uint64_t bytes; /* allocated: counted once per group, after the walk */
};

struct scan {
	struct manifest *fresh;
	struct link_ref *links;
	size_t n_links, alloc_links;
	int64_t sde;
	char *root;
	struct treesum sum;
	const struct limits *lim;
};

/* The owner a command sees; refused when the tree holds one no command could have set. */
static int owner_inside(const struct stat *sb, const char *path, struct manifest_entry *e)
{
	long uid = idshift_inside_uid(sb->st_uid), gid = idshift_inside_gid(sb->st_gid);

	if (uid < 0 || gid < 0) {
		log_error("'%s' is owned by %lu:%lu on disk, outside the ids of the build's commands; "
			  "this is a bug in mkimage, please report it", path,
			  (unsigned long)sb->st_uid, (unsigned long)sb->st_gid);
		return -MKI_E_HOOK;
	}
	e->uid = (uid_t)uid;
	e->gid = (gid_t)gid;
	return 0;
}

static char entry_type(mode_t m)
{
	return S_ISREG(m) ? MF_REG : S_ISDIR(m) ? MF_DIR : S_ISLNK(m) ? MF_SYMLINK
		: S_ISCHR(m) ? MF_CHR : S_ISBLK(m) ? MF_BLK : S_ISFIFO(m) ? MF_FIFO : MF_SOCK;
}

static int record(void *arg, int dirfd, const char *name, const char *rel,
		  const struct stat *sb)
{
	struct scan *sc = arg;
	struct manifest_entry *e = manifest_add(sc->fresh, rel);
	char *full = xasprintf("/proc/self/fd/%d/%s", dirfd, name);
	uint64_t blocks = (uint64_t)sb->st_blocks * 512; /* what the image stores: holes are free */
	int ret = 0;

	e->type = entry_type(sb->st_mode);
	e->mode = sb->st_mode & 07777;
	ret = owner_inside(sb, full, e);
	e->mtime = sc->sde >= 0 && sb->st_mtime > sc->sde ? sc->sde : sb->st_mtime;
	e->major = major(sb->st_rdev);
	e->minor = minor(sb->st_rdev);
	if (e->type == MF_REG)
		e->size = (uint64_t)sb->st_size;
	if (!ret && e->type == MF_SYMLINK) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

		if (n < 0)
			ret = -errno;
		else
			e->target = xstrndup(target, (size_t)n);
	}
	if (!ret && e->type == MF_REG && sb->st_nlink > 1) {
		ALLOC_GROW(sc->links, sc->n_links + 1, sc->alloc_links);
		sc->links[sc->n_links++] = (struct link_ref){ sb->st_dev, sb->st_ino, e, blocks };
		blocks = 0;
	}
	/* Stop at the limit: a tree of millions of entries is refused, not held in memory. */
	if (!ret && treesum_add(&sc->sum, rel, 1, blocks) >= 0)
		ret = -MKI_E_LIMIT;
	if (!ret && (ret = treeread_xattrs(dirfd, name, e)))
		log_error("cannot read the extended attributes of '/%s' in the tree: %s", rel,
			  strerror(-ret));
	free(full);
	return ret;
}

static int scan_tree(struct scan *sc, int rootfd)
{
	char *failed = NULL;
	int ret = treeread_walk(rootfd, "", record, sc, &failed);

	if (ret && ret > -MKI_E_BASE)
		log_error("cannot scan '%s/%s': %s", sc->root, failed ? failed : "", strerror(-ret));
	free(failed);
	return ret == -MKI_E_LIMIT ? ret : ret ? -MKI_E_HOOK : 0;
}

/*
 * Refuse a tree past staging-entries or staging-size (`n` the entries the image would get:
 * the walk's and the device nodes kept): the image writer is never handed more.
 */
static int check_limits(const struct scan *sc, size_t n)
{
	int over = treesum_over(&sc->sum);
	struct buf top = { 0 };

	if (over < 0 && n > sc->sum.max_entries)
		over = LIMIT_STAGING_ENTRIES;
	if (over < 0)
		return 0;
	treesum_top(&sc->sum, over, 3, &top);
	if (over == LIMIT_STAGING_ENTRIES)
		log_error("the tree holds more than %llu entries after the maintainer scripts and "
			  "hooks (%llu found, most under %s): refused before writing the image (%s)",
			  (unsigned long long)sc->sum.max_entries,
			  (unsigned long long)(n > sc->sum.entries ? n : sc->sum.entries), top.p,
			  runlimits_hint(sc->lim, LIMIT_STAGING_ENTRIES).s);
	else
		log_error("the tree holds more than %s of data after the maintainer scripts and "
			  "hooks (%.1f MiB allocated found, most under %s): refused before writing "
			  "the image (%s)", runlimits_format(LIMIT_STAGING_SIZE, sc->sum.max_bytes).s,
			  (double)sc->sum.bytes / (1 << 20), top.p,
			  runlimits_hint(sc->lim, LIMIT_STAGING_SIZE).s);
	buf_release(&top);
	return -MKI_E_HOOK;
}

static int cmp_link(const void *a, const void *b)
{
	const struct link_ref *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->e->path, y->e->path);
}

/*
 * In each hardlink group the bytewise first path holds the data, and its blocks are counted
 * once; the others point at it.
 */
static void group_links(struct scan *sc)
{
	size_t i, first = 0;

	if (sc->n_links)
		qsort(sc->links, sc->n_links, sizeof(*sc->links), cmp_link);
	for (i = 0; i < sc->n_links; i++) {
		if (!i || sc->links[i].dev != sc->links[first].dev ||
		    sc->links[i].ino != sc->links[first].ino) {
			first = i;
			treesum_add(&sc->sum, sc->links[i].e->path, 0, sc->links[i].bytes);
			continue;
		}
		sc->links[i].e->type = MF_HARDLINK;
		sc->links[i].e->target = xstrdup(sc->links[first].e->path);
		sc->links[i].e->size = 0;
	}
}

static int same_xattrs(const struct manifest_entry *a, const struct manifest_entry *b)
{
	size_t i;

	if (a->n_xattrs != b->n_xattrs)
		return 0;
	for (i = 0; i < a->n_xattrs; i++)
		if (strcmp(a->xattrs[i].name, b->xattrs[i].name) ||
		    a->xattrs[i].len != b->xattrs[i].len ||
		    memcmp(a->xattrs[i].value, b->xattrs[i].value, a->xattrs[i].len))
			return 0;
	return 1;
}

static int same_entry(const struct manifest_entry *a, const struct manifest_entry *b)
{
	return a->type == b->type && a->mode == b->mode && a->uid == b->uid && a->gid == b->gid &&
	       a->size == b->size && a->mtime == b->mtime &&
	       !strcmp(a->target ? a->target : "", b->target ? b->target : "") &&
	       same_xattrs(a, b);
}

static void copy_entry(struct manifest *m, const struct manifest_entry *src)
{
	struct manifest_entry *e = manifest_add_copy(m, src->path, src);
	size_t i;

	e->target = src->target ? xstrdup(src->target) : NULL;
	for (i = 0; i < src->owners.n; i++)
		strv_push(&e->owners, src->owners.v[i]);
}

/* Carry owners (and, single-id, ownership) over; count what changed; keep device nodes. */
static void merge(struct manifest *old, struct manifest *fresh, struct reconcile_changes *ch)
{
	int single = sandbox_get() && sandbox_get()->ids == SANDBOX_IDS_SINGLE;
	size_t i, j;

	for (i = 0; i < fresh->n; i++) {
		struct manifest_entry *e = fresh->v[i], *o = manifest_get(old, e->path);

		if (!o) {
			ch->added++;
			continue;
		}
		if (single) {
			e->uid = o->uid;
			e->gid = o->gid;
			e->mode = o->type == e->type ? o->mode : e->mode;
		}
		for (j = 0; j < o->owners.n; j++)
			strv_push(&e->owners, o->owners.v[j]);
		ch->changed += !same_entry(e, o);
	}
	for (i = 0; i < old->n; i++) {
		const struct manifest_entry *o = old->v[i];

		if (manifest_get(fresh, o->path))
			continue;
		if (o->type == MF_CHR || o->type == MF_BLK)
			copy_entry(fresh, o);
		else
			ch->removed++;
	}
}

int reconcile_manifest(struct staging *s, int64_t source_date_epoch, const struct limits *lim,
		       struct reconcile_changes *ch)
{
	struct manifest fresh;
	struct reconcile_changes local = { 0 };
	struct scan sc = { .fresh = &fresh, .sde = source_date_epoch, .root = s->root, .lim = lim };
	struct stat sb;
	int rootfd, ret;

	manifest_init(&fresh);
	treesum_init(&sc.sum, lim);
	rootfd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || fstat(rootfd, &sb) < 0) {
		log_error("cannot open the staging tree '%s': %s", s->root, strerror(errno));
		ret = -MKI_E_HOOK;
		goto out;
	}
	ret = record(&sc, rootfd, ".", "", &sb);
	if (!ret)
		ret = scan_tree(&sc, rootfd);
	if (ret == -MKI_E_LIMIT)
		ret = check_limits(&sc, fresh.n);
	if (ret)
		goto out;
	group_links(&sc);
	merge(&s->manifest, &fresh, &local);
	ret = check_limits(&sc, fresh.n);
	if (ret)
		goto out;
	manifest_sort(&fresh);
	manifest_release(&s->manifest);
	s->manifest = fresh;
	manifest_init(&fresh);
	if (ch)
		*ch = local;
out:
	if (rootfd >= 0)
		close(rootfd);
	manifest_release(&fresh);
	treesum_release(&sc.sum);
	free(sc.links);
	return ret;
}
