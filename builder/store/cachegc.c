/* Cache expiry and the registrations that keep running builds' objects safe from it (cachegc.h). */
#include "cachegc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/str.h"

#define KEY_LEN 64
/* A build claims a few thousand objects at most; a registration beyond this is not ours. */
#define USER_FILE_MAX (64u << 20)

struct cache_user {
	char *cache_dir;
	char *path;  /* users/XXXXXX */
	int fd;      /* the registration, flock'ed exclusively while the build runs */
	int gc_fd;   /* gc.lock */
};

/*
 * One cached object: its download and its decompressed index, removed together; or a layer
 * (layer.h), whose key never names an object.
 */
struct entry {
	char key[KEY_LEN + 1];
	uint64_t bytes;
	struct timespec used;
	int removed;
};

struct entries {
	struct entry *v;
	size_t n, alloc;
};

static int is_key(const char *s)
{
	size_t i;

	for (i = 0; i < KEY_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[KEY_LEN] == '\0';
}

static int open_gc_lock(const char *cache_dir)
{
	char *path = xasprintf("%s/gc.lock", cache_dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	free(path);
	return fd < 0 ? -errno : fd;
}

static int user_register(struct cache_user *u)
{
	char *dir = xasprintf("%s/users", u->cache_dir);
	int ret = fsutil_mkdirs(dir);

	if (!ret) {
		u->path = xasprintf("%s/XXXXXX", dir);
		u->fd = mkostemp(u->path, O_CLOEXEC | O_APPEND);
		if (u->fd < 0 || flock(u->fd, LOCK_EX | LOCK_NB))
			ret = -errno;
	}
	free(dir);
	return ret;
}

int cachegc_user_open(const char *cache_dir, struct cache_user **out)
{
	struct cache_user *u = xcalloc(1, sizeof(*u));
	int ret;

	u->cache_dir = xstrdup(cache_dir);
	u->fd = -1;
	u->gc_fd = open_gc_lock(cache_dir);
	ret = u->gc_fd < 0 ? u->gc_fd : cache_flock_wait(u->gc_fd, LOCK_SH);
	/* Created under the shared lock: a collector never sees it before it is locked. */
	if (!ret) {
		ret = user_register(u);
		flock(u->gc_fd, LOCK_UN);
	}
	if (ret) {
		log_error("cannot register in the cache '%s': %s", cache_dir, err_text(ret));
		cachegc_user_close(u);
		return ret;
	}
	*out = u;
	return 0;
}

/* The least-recently-used order is ours to keep: noatime mounts never update it by themselves. */
static void touch(const char *path)
{
	const struct timespec t[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };

	if (utimensat(AT_FDCWD, path, t, 0) && errno != ENOENT)
		log_debug("cannot mark '%s' used: %s", path, strerror(errno));
}

int cachegc_claim(struct cache_user *u, const char *sha256)
{
	char line[KEY_LEN + 2], *obj, *idx, *layer;
	int ret;

	if (!u)
		return 0;
	if (strlen(sha256) != KEY_LEN)
		return -EINVAL;
	ret = cache_flock_wait(u->gc_fd, LOCK_SH);
	if (ret)
		return ret;
	memcpy(line, sha256, KEY_LEN);
	line[KEY_LEN] = '\n';
	if (write(u->fd, line, KEY_LEN + 1) != KEY_LEN + 1)
		ret = errno ? -errno : -EIO;
	obj = cache_object_path(u->cache_dir, sha256);
	idx = xasprintf("%s/indexes/%s", u->cache_dir, sha256);
	layer = cache_layer_path(u->cache_dir, sha256);
	touch(obj);
	touch(idx);
	touch(layer);
	flock(u->gc_fd, LOCK_UN);
	free(obj);
	free(idx);
	free(layer);
	if (ret)
		log_error("cannot register '%s' in '%s': %s", sha256, u->path, err_text(ret));
	return ret;
}

void cachegc_user_close(struct cache_user *u)
{
	if (!u)
		return;
	if (u->fd >= 0) {
		unlink(u->path);
		close(u->fd);
	}
	if (u->gc_fd >= 0)
		close(u->gc_fd);
	free(u->path);
	free(u->cache_dir);
	free(u);
}

/* ---- collection ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int claimed(const struct strv *in_use, const char *key)
{
	return in_use->n && bsearch(&key, in_use->v, in_use->n, sizeof(char *), cmp_str);
}

static void add_claims(struct strv *in_use, const struct buf *b)
{
	const char *p = b->p, *nl;

	for (; p && (nl = strchr(p, '\n')); p = nl + 1)
		if (nl - p == KEY_LEN) {
			char *k = xstrndup(p, KEY_LEN);

			if (is_key(k))
				strv_push_take(in_use, k);
			else
				free(k);
		}
}

/*
 * 1: a live build's registration, its claims added to `in_use`; 2: a dead build's (its lock
 * could be taken), removed; 0: gone meanwhile; or a negative errno.
 */
static int read_user(int dfd, const char *dir, const char *name, struct strv *in_use)
{
	char *path = xasprintf("%s/%s", dir, name);
	struct buf b = { 0 };
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), ret = 0;

	if (fd < 0)
		ret = errno == ENOENT ? 0 : -errno;
	else if (!flock(fd, LOCK_SH | LOCK_NB))
		ret = unlinkat(dfd, name, 0) ? -errno : 2;
	else if (errno != EWOULDBLOCK)
		ret = -errno;
	else if (!(ret = readfile_read(path, USER_FILE_MAX, &b, NULL)))
		ret = 1;
	if (ret == 1)
		add_claims(in_use, &b);
	if (ret < 0)
		log_error("cannot read the cache registration '%s': %s", path, err_text(ret));
	if (fd >= 0)
		close(fd);
	buf_release(&b);
	free(path);
	return ret;
}

/* Every live build's claims (unsorted); dead builds' registrations removed. */
static int read_users(const char *cache_dir, struct strv *in_use, struct cache_gc_result *res)
{
	char *dir = xasprintf("%s/users", cache_dir);
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0, r;

	if (!d) {
		ret = errno == ENOENT ? 0 : -errno;
		goto out;
	}
	while (!ret && (e = readdir(d)))
		if (e->d_name[0] != '.' && (r = read_user(dirfd(d), dir, e->d_name, in_use)) != 0) {
			if (r < 0)
				ret = r;
			else if (r == 1)
				res->builds++;
			else
				res->leftovers++;
		}
	closedir(d);
out:
	free(dir);
	return ret;
}

/*
 * The indexes each source's last verified Release named (releases/KEY/verified/indexes, written
 * by the indexes stage): kept for good, since --allow-stale builds from them when the mirror is
 * mid-sync. A newer verified Release replaces the list, and then the old ones may go.
 */
static int read_kept(const char *cache_dir, struct strv *in_use)
{
	char *dir = xasprintf("%s/releases", cache_dir), *path;
	DIR *d = opendir(dir);
	struct dirent *e;
	struct buf b = { 0 };
	int ret = 0;

	if (!d) {
		ret = errno == ENOENT ? 0 : -errno;
		free(dir);
		return ret;
	}
	while (!ret && (e = readdir(d))) {
		if (!is_key(e->d_name))
			continue;
		path = xasprintf("%s/%s/verified/indexes", dir, e->d_name);
		ret = readfile_read(path, USER_FILE_MAX, &b, NULL);
		if (!ret)
			add_claims(in_use, &b);
		else if (ret == -ENOENT)
			ret = 0;
		else
			log_error("cannot read '%s': %s", path, err_text(ret));
		buf_release(&b);
		free(path);
	}
	closedir(d);
	free(dir);
	return ret;
}

static void add_entry(struct entries *es, const char *key, const struct stat *st)
{
	struct entry *e;

	ALLOC_GROW(es->v, es->n + 1, es->alloc);
	e = &es->v[es->n++];
	memcpy(e->key, key, KEY_LEN + 1);
	e->removed = 0;
	e->bytes = (uint64_t)st->st_blocks * 512;
	e->used = st->st_atim;
}

/*
 * Objects in `dir` (regular files named by a key). Temp files (".KEY.XXXXXX") of a download that
 * a killed process left are removed when nobody claims KEY and its writer lock is free.
 */
static int scan_dir(const char *cache_dir, const char *dir, const struct strv *in_use,
		    struct entries *es, struct cache_gc_result *res)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (is_key(e->d_name)) {
			add_entry(es, e->d_name, &st);
		} else if (e->d_name[0] == '.' && strlen(e->d_name) > KEY_LEN + 1 &&
			   e->d_name[KEY_LEN + 1] == '.') {
			char key[KEY_LEN + 1];
			int lock;

			memcpy(key, e->d_name + 1, KEY_LEN);
			key[KEY_LEN] = '\0';
			if (!is_key(key) || claimed(in_use, key))
				continue;
			lock = cache_lock(cache_dir, key, 0);
			if (lock >= 0 && !unlinkat(dirfd(d), e->d_name, 0))
				res->leftovers++;
			cache_unlock(lock);
		}
	}
	closedir(d);
	return 0;
}

static int scan_objects(const char *cache_dir, const struct strv *in_use, struct entries *es,
			struct cache_gc_result *res)
{
	char *top = xasprintf("%s/objects/sha256", cache_dir), *sub;
	DIR *d = opendir(top);
	struct dirent *e;
	int ret = 0;

	if (!d) {
		ret = errno == ENOENT ? 0 : -errno;
		free(top);
		return ret;
	}
	while (!ret && (e = readdir(d))) {
		if (strlen(e->d_name) != 2 || e->d_name[0] == '.')
			continue;
		sub = xasprintf("%s/%s", top, e->d_name);
		ret = scan_dir(cache_dir, sub, in_use, es, res);
		free(sub);
	}
	closedir(d);
	free(top);
	return ret;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->key, ((const struct entry *)b)->key);
}

/* Oldest use first; the key breaks ties so two collections of one cache agree. */
static int cmp_used(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* A download and its decompressed index share a key: one entry, last used when either was. */
static void merge_keys(struct entries *es)
{
	size_t i, o = 0;

	if (!es->n)
		return;
	qsort(es->v, es->n, sizeof(*es->v), cmp_key);
	for (i = 1; i < es->n; i++) {
		struct entry *last = &es->v[o];

		if (strcmp(last->key, es->v[i].key)) {
			es->v[++o] = es->v[i];
			continue;
		}
		last->bytes += es->v[i].bytes;
		if (cmp_used(last, &es->v[i]) < 0)
			last->used = es->v[i].used;
	}
	es->n = o + 1;
}

static int remove_entry(const char *cache_dir, const struct entry *e)
{
	char *obj = cache_object_path(cache_dir, e->key);
	char *idx = xasprintf("%s/indexes/%s", cache_dir, e->key);
	char *lock = xasprintf("%s/locks/%s", cache_dir, e->key);
	char *layer = cache_layer_path(cache_dir, e->key);
	int ret = 0;

	if (unlink(obj) && errno != ENOENT)
		ret = -errno;
	if (unlink(idx) && errno != ENOENT && !ret)
		ret = -errno;
	if (unlink(layer) && errno != ENOENT && !ret)
		ret = -errno;
	/* Nobody claims the key, so nobody can be about to take its writer lock. */
	unlink(lock);
	if (ret)
		log_error("cannot remove '%s' from the cache: %s", obj, err_text(ret));
	free(obj);
	free(idx);
	free(lock);
	free(layer);
	return ret;
}

static int cmp_key_str(const void *key, const void *e)
{
	return strcmp(key, ((const struct entry *)e)->key);
}

static int has_object(const struct entries *es, const char *key)
{
	const struct entry *e = bsearch(key, es->v, es->n, sizeof(*es->v), cmp_key_str);

	return e && !e->removed;
}

/*
 * Writer locks of keys with no object (failed or abandoned downloads) would pile up forever.
 * Unclaimed keys only: a process about to lock a key has claimed it first.
 */
static int sweep_locks(const char *cache_dir, const struct strv *in_use, struct entries *es,
		       struct cache_gc_result *res)
{
	char *dir = xasprintf("%s/locks", cache_dir);
	DIR *d = opendir(dir);
	struct dirent *e;

	free(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	if (es->n)
		qsort(es->v, es->n, sizeof(*es->v), cmp_key);
	while ((e = readdir(d)))
		if (is_key(e->d_name) && !claimed(in_use, e->d_name) &&
		    !has_object(es, e->d_name) && !unlinkat(dirfd(d), e->d_name, 0))
			res->leftovers++;
	closedir(d);
	return 0;
}

static int collect(const char *cache_dir, uint64_t limit, struct cache_gc_result *res)
{
	struct strv in_use = { 0 }, kept = { 0 };
	struct entries es = { 0 };
	char *idx = xasprintf("%s/indexes", cache_dir);
	char *layers = xasprintf("%s/layers", cache_dir);
	size_t i;
	int ret;

	ret = read_users(cache_dir, &in_use, res);
	if (!ret)
		ret = read_kept(cache_dir, &kept);
	if (in_use.n)
		qsort(in_use.v, in_use.n, sizeof(char *), cmp_str);
	if (kept.n)
		qsort(kept.v, kept.n, sizeof(char *), cmp_str);
	if (!ret)
		ret = scan_objects(cache_dir, &in_use, &es, res);
	if (!ret)
		ret = scan_dir(cache_dir, idx, &in_use, &es, res);
	if (!ret)
		ret = scan_dir(cache_dir, layers, &in_use, &es, res);
	merge_keys(&es);
	if (es.n)
		qsort(es.v, es.n, sizeof(*es.v), cmp_used);
	res->objects_before = es.n;
	for (i = 0; i < es.n; i++)
		res->bytes_before += es.v[i].bytes;
	res->bytes_after = res->bytes_before;
	for (i = 0; !ret && i < es.n && res->bytes_after > limit; i++) {
		if (err_interrupted()) {
			ret = -MKI_E_INTERRUPTED;
		} else if (claimed(&in_use, es.v[i].key)) {
			res->objects_in_use++;
		} else if (claimed(&kept, es.v[i].key)) {
			res->objects_kept++;
		} else if (!(ret = remove_entry(cache_dir, &es.v[i]))) {
			res->bytes_after -= es.v[i].bytes;
			res->objects_removed++;
			es.v[i].removed = 1;
		}
	}
	if (!ret)
		ret = sweep_locks(cache_dir, &in_use, &es, res);
	free(es.v);
	strv_release(&in_use);
	strv_release(&kept);
	free(idx);
	free(layers);
	return ret;
}

int cachegc_run(const char *cache_dir, uint64_t limit, struct cache_gc_result *res)
{
	int fd, ret;

	memset(res, 0, sizeof(*res));
	fd = open_gc_lock(cache_dir);
	ret = fd < 0 ? fd : cache_flock_wait(fd, LOCK_EX);
	if (!ret)
		ret = collect(cache_dir, limit, res);
	if (fd >= 0)
		close(fd);
	return ret;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

int cachegc_expire(const char *cache_dir, uint64_t limit)
{
	struct cache_gc_result res;
	struct stat st;
	int ret;

	if (stat(cache_dir, &st) && errno == ENOENT) {
		log_info("no cache at '%s': nothing to remove", cache_dir);
		return 0;
	}
	ret = cachegc_run(cache_dir, limit, &res);
	if (ret) {
		log_error("cannot expire the cache '%s': %s", cache_dir, err_text(ret));
		return ret;
	}
	log_info("cache '%s': %zu objects, %.1f MiB; removed %zu least recently used (%.1f MiB) "
		 "and %zu leftovers of dead processes; now %.1f MiB", cache_dir,
		 res.objects_before, mib(res.bytes_before), res.objects_removed,
		 mib(res.bytes_before - res.bytes_after), res.leftovers, mib(res.bytes_after));
	if (res.objects_kept)
		log_info("cache '%s': kept %zu indexes that the last verified Releases name (what "
			 "--allow-stale builds from when a mirror is mid-sync)", cache_dir,
			 res.objects_kept);
	if (res.bytes_after > limit && res.objects_in_use)
		log_warn("the cache is still above %.1f MiB: %zu objects are in use by %zu running "
			 "builds", mib(limit), res.objects_in_use, res.builds);
	return 0;
}
