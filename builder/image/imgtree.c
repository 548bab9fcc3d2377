#include "imgtree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imgtree_internal.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct imgtree_node *)a)->e->path,
		      ((const struct imgtree_node *)b)->e->path);
}

long imgtree_find(const struct imgtree *t, const char *path)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->v[mid].e->path, path);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const char *imgtree_name(const struct imgtree *t, size_t i)
{
	const char *slash = strrchr(t->v[i].e->path, '/');

	return slash ? slash + 1 : t->v[i].e->path;
}

/* Parents sort before children, so the search is over a prefix of the array. */
static long find_parent(const struct imgtree *t, size_t i)
{
	const char *path = t->v[i].e->path, *slash = strrchr(path, '/');
	char *parent;
	long at;

	if (!slash)
		return 0;
	parent = xstrndup(path, (size_t)(slash - path));
	at = imgtree_find(t, parent);
	free(parent);
	return at;
}

size_t imgtree_parent(const struct imgtree *t, size_t i)
{
	long at = find_parent(t, i);

	return at < 0 ? 0 : (size_t)at;
}

/* `path` is strictly below `dir` ("" holds every path but the root). */
static int below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!n)
		return path[0] != 0;
	return !strncmp(path, dir, n) && path[n] == '/';
}

/* Below a subtree another partition holds: left out of this view. */
static int excluded(const struct imgtree_scope *sc, const char *path)
{
	size_t i;

	for (i = 0; sc && i < sc->n_exclude; i++)
		if (below(path, sc->exclude[i]))
			return 1;
	return 0;
}

/* Parents of a device-table path that the manifest lacks (e.g. "dev"): root-owned 0755. */
static void add_parents(struct imgtree *t, const struct manifest *m, const char *path)
{
	char *dir = xstrdup(path), *slash;
	struct manifest_entry *e;

	while ((slash = strrchr(dir, '/'))) {
		*slash = 0;
		if (manifest_get(m, dir) || manifest_get(&t->extra, dir))
			break;
		e = manifest_add(&t->extra, dir);
		e->type = MF_DIR;
		e->mode = 0755;
		e->mtime = t->sde;
	}
	free(dir);
}

static int add_devices(struct imgtree *t, const struct manifest *m, const struct recipe_image *im,
		       const struct imgtree_scope *sc)
{
	size_t i;

	for (i = 0; im && i < im->n_devices; i++) {
		const struct recipe_device *d = &im->devices[i];
		char *path = manifest_normalize(d->path);
		struct manifest_entry *e;

		if (!path || !*path) {
			log_error("device table: path '%s' is not usable in the image", d->path);
			free(path);
			return -MKI_E_IMAGE;
		}
		if (excluded(sc, path)) {
			free(path); /* in another partition's subtree: that filesystem has no devices */
			continue;
		}
		add_parents(t, m, path);
		e = manifest_add(&t->extra, path);
		free(path);
		e->type = d->type;
		e->mode = d->mode & 07777;
		e->uid = d->uid;
		e->gid = d->gid;
		e->major = d->major;
		e->minor = d->minor;
		e->mtime = t->sde;
	}
	return 0;
}

static int64_t newest_mtime(const struct manifest *m)
{
	int64_t newest = 0;
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->v[i]->mtime > newest)
			newest = m->v[i]->mtime;
	return newest;
}

static void collect(struct imgtree *t, const struct manifest *m, const struct imgtree_scope *sc)
{
	size_t i, cap = m->n + t->extra.n + 1;

	t->v = xcalloc(cap, sizeof(*t->v));
	for (i = 0; i < t->extra.n; i++)
		t->v[t->n++].e = t->extra.v[i];
	for (i = 0; i < m->n; i++)
		if (!manifest_get(&t->extra, m->v[i]->path) && !excluded(sc, m->v[i]->path))
			t->v[t->n++].e = m->v[i];
	qsort(t->v, t->n, sizeof(*t->v), node_cmp);
	for (i = 0; i < t->n; i++) {
		t->v[i].mtime = t->v[i].e->mtime > t->sde ? t->sde : t->v[i].e->mtime;
		t->v[i].nlink = 1;
		t->v[i].first = i;
	}
}

static int check_type(const struct manifest_entry *e)
{
	switch (e->type) {
	case MF_REG: case MF_DIR: case MF_SYMLINK: case MF_HARDLINK:
	case MF_CHR: case MF_BLK: case MF_FIFO: case MF_SOCK:
		if ((e->type == MF_SYMLINK || e->type == MF_HARDLINK) && (!e->target || !*e->target))
			break;
		return 0;
	default:
		break;
	}
	log_error("manifest: '%s' has an unknown type or lacks its link target", e->path);
	return -MKI_E_IMAGE;
}

static int resolve_link(struct imgtree *t, size_t i)
{
	const struct manifest_entry *e = t->v[i].e;
	char *target = manifest_normalize(e->target);
	long j = target ? imgtree_find(t, target) : -1;

	free(target);
	if (j < 0 || t->v[j].e->type == MF_DIR || t->v[j].e->type == MF_HARDLINK) {
		log_error("manifest: hard link '%s' names '%s', which is not a file in the manifest",
			  e->path, e->target);
		return -MKI_E_IMAGE;
	}
	t->v[i].link = (size_t)j;
	t->v[j].nlink++;
	if (i < t->v[j].first)
		t->v[j].first = i;
	return 0;
}

static const char *name_of(const struct imgtree *t, size_t i)
{
	return imgtree_name(t, i);
}

static int check_nodes(struct imgtree *t)
{
	size_t i;
	int ret;

	if (!t->n || t->v[0].e->path[0] || t->v[0].e->type != MF_DIR) {
		log_error("manifest: the root entry is not a directory");
		return -MKI_E_IMAGE;
	}
	for (i = 1; i < t->n; i++) {
		long parent = find_parent(t, i);

		ret = check_type(t->v[i].e);
		if (ret)
			return ret;
		if (!*name_of(t, i) || !strcmp(name_of(t, i), ".") || !strcmp(name_of(t, i), "..")) {
			log_error("manifest: '%s' is not a usable path", t->v[i].e->path);
			return -MKI_E_IMAGE;
		}
		if (parent < 0 || t->v[parent].e->type != MF_DIR) {
			log_error("manifest: the parent of '%s' is %s", t->v[i].e->path,
				  parent < 0 ? "missing" : "not a directory");
			return -MKI_E_IMAGE;
		}
		if (t->v[i].e->type == MF_HARDLINK && (ret = resolve_link(t, i)))
			return ret;
	}
	for (i = 1; i < t->n; i++)
		if (t->v[i].e->type == MF_HARDLINK)
			t->v[i].first = t->v[t->v[i].link].first;
	return 0;
}

/* A hard link's target in the view's paths; an error when it lies outside the view. */
static int link_target(const struct manifest_entry *e, const struct imgtree_scope *sc,
		       size_t cut, char **out)
{
	const char *sub = sc && sc->subtree ? sc->subtree : "";
	char *target = manifest_normalize(e->target);
	int ok = target && (!*sub || below(target, sub)) && !excluded(sc, target);

	if (!ok) {
		log_error("'/%s' is a hard link to '/%s', which another partition holds: a hard "
			  "link cannot cross filesystems (make it a copy or a symbolic link)",
			  e->path, e->target);
		free(target);
		return -MKI_E_IMAGE;
	}
	*out = xstrdup(target + cut);
	free(target);
	return 0;
}

/* A subtree's view: its entries copied with paths relative to it; the subtree is the root. */
static int copy_subtree(struct imgtree *t, const struct manifest *m, const struct imgtree_scope *sc)
{
	size_t i, cut = strlen(sc->subtree) + 1;
	struct manifest_entry *top = manifest_get(m, sc->subtree), *c;
	char *target;
	int ret;

	if (top && top->type != MF_DIR) {
		log_error("'/%s' is not a directory in the tree, so no partition can hold it",
			  sc->subtree);
		return -MKI_E_IMAGE;
	}
	if (top)
		manifest_add_copy(&t->extra, "", top);
	for (i = 0; i < m->n; i++) {
		const struct manifest_entry *e = m->v[i];

		if (!below(e->path, sc->subtree) || excluded(sc, e->path))
			continue;
		c = manifest_add_copy(&t->extra, e->path + cut, e);
		if (e->type == MF_SYMLINK && e->target)
			c->target = xstrdup(e->target);
		if (e->type != MF_HARDLINK)
			continue;
		ret = link_target(e, sc, cut, &target);
		if (ret)
			return ret;
		c->target = target;
	}
	return 0;
}

/* The root view's hard links never lead into a subtree another partition holds. */
static int check_links_out(const struct manifest *m, const struct imgtree_scope *sc)
{
	char *target = NULL;
	size_t i;
	int ret;

	for (i = 0; sc && sc->n_exclude && i < m->n; i++) {
		if (m->v[i]->type != MF_HARDLINK || excluded(sc, m->v[i]->path))
			continue;
		ret = link_target(m->v[i], sc, 0, &target);
		free(target);
		target = NULL;
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Where another partition's subtree is mounted stays an empty directory: the tree's own (its
 * owner and mode), or a root-owned 0755 one with its missing parents when the tree has none.
 */
static int add_mount_points(struct imgtree *t, const struct manifest *m,
			    const struct imgtree_scope *sc)
{
	const char *sub = sc && sc->subtree ? sc->subtree : "";
	size_t i, cut = *sub ? strlen(sub) + 1 : 0;
	struct manifest_entry *e;

	for (i = 0; sc && i < sc->n_exclude; i++) {
		const char *dir = sc->exclude[i];

		if (*sub && !below(dir, sub))
			continue;
		e = manifest_get(m, dir);
		if (e && e->type != MF_DIR) {
			log_error("'/%s' is where a partition is mounted, but it is not a directory in "
				  "the tree", dir);
			return -MKI_E_IMAGE;
		}
		if (e && !*sub)
			continue; /* the root view takes the tree's own entry */
		if (!e)
			add_parents(t, *sub ? &t->extra : m, dir + cut);
		e = e ? manifest_add_copy(&t->extra, dir + cut, e) : manifest_add(&t->extra, dir + cut);
		if (!e->type) {
			e->type = MF_DIR;
			e->mode = 0755;
			e->mtime = t->sde;
		}
	}
	return 0;
}

static int open_root(struct imgtree *t, const struct staging *s, const struct imgtree_scope *sc)
{
	const char *sub = sc && sc->subtree ? sc->subtree : "";
	int fd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		log_error("cannot open the staging tree '%s': %s", s->root, strerror(errno));
		return -errno;
	}
	if (!*sub || !manifest_get(&s->manifest, sub)) {
		t->root_fd = fd; /* a subtree the tree lacks is an empty filesystem: nothing read */
		return 0;
	}
	t->root_fd = beneath_open_canonical(fd, sub, O_PATH | O_DIRECTORY);
	close(fd);
	if (t->root_fd >= 0)
		return 0;
	log_error("cannot open '/%s' in the staging tree: %s%s", sub, strerror(-t->root_fd),
		  t->root_fd == -ELOOP ? " (a script replaced it by a symlink)" : "");
	return -MKI_E_IMAGE;
}

int imgtree_build(struct imgtree *t, const struct staging *s, const struct image_params *p)
{
	return imgtree_build_scoped(t, s, p, NULL);
}

int imgtree_build_scoped(struct imgtree *t, const struct staging *s, const struct image_params *p,
			 const struct imgtree_scope *sc)
{
	int sub = sc && sc->subtree && *sc->subtree;
	struct manifest none;
	struct manifest_entry *root;
	int ret;

	memset(t, 0, sizeof(*t));
	t->root_fd = -1;
	manifest_init(&t->extra);
	manifest_init(&none);
	t->sde = p->source_date_epoch >= 0 ? p->source_date_epoch : newest_mtime(&s->manifest);
	ret = sub ? copy_subtree(t, &s->manifest, sc) : add_devices(t, &s->manifest, p->im, sc);
	if (!ret)
		ret = check_links_out(&s->manifest, sub ? NULL : sc);
	if (!ret)
		ret = add_mount_points(t, &s->manifest, sc);
	if (ret)
		goto out;
	if ((sub || !manifest_get(&s->manifest, "")) && !manifest_get(&t->extra, "")) {
		root = manifest_add(&t->extra, "");
		root->type = MF_DIR;
		root->mode = 0755;
		root->mtime = t->sde;
	}
	collect(t, sub ? &none : &s->manifest, sc);
	ret = check_nodes(t);
	if (!ret)
		ret = open_root(t, s, sc);
out:
	manifest_release(&none);
	if (ret)
		imgtree_release(t);
	return ret;
}

void imgtree_release(struct imgtree *t)
{
	if (t->root_fd >= 0)
		close(t->root_fd);
	free(t->v);
	manifest_release(&t->extra);
	memset(t, 0, sizeof(*t));
	t->root_fd = -1;
}

int imgtree_open(const struct imgtree *t, size_t i)
{
	const char *path = t->v[i].e->path, *kind = NULL;
	/*
	 * The tree is data, never a path to follow: a symlink anywhere on the way is refused, and a
	 * FIFO or device a script left in a regular file's place is refused without waiting on it.
	 */
	int fd = beneath_open_regular(t->root_fd, path, 1, &kind);

	if (fd == -EINVAL && kind) {
		log_error("'%s' is a regular file in the manifest but not in the staging tree (it is "
			  "%s there: a script replaced it)", path, kind);
		return -MKI_E_IMAGE;
	}
	if (fd < 0)
		log_error("cannot read '%s' from the staging tree: %s%s", path, strerror(-fd),
			  fd == -ELOOP ? " (a script replaced it or a directory on its way by a "
					 "symlink)" : "");
	return fd;
}
