#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/str.h"

#define LOCK_POLL_MS 50 /* how often a waiting process tries the lock again */

char *cache_object_path(const char *cache_dir, const char *sha256)
{
	return xasprintf("%s/objects/sha256/%.2s/%s", cache_dir, sha256, sha256);
}

char *cache_layer_path(const char *cache_dir, const char *key)
{
	return xasprintf("%s/layers/%s", cache_dir, key);
}

int cache_lookup(const char *cache_dir, const char *sha256, uint64_t size, char **path)
{
	char *p = cache_object_path(cache_dir, sha256);
	struct stat st;

	*path = NULL;
	if (stat(p, &st)) {
		int err = errno;

		free(p);
		return err == ENOENT ? 0 : -err;
	}
	if (!S_ISREG(st.st_mode) || (size && (uint64_t)st.st_size != size)) {
		free(p);
		return 0;
	}
	*path = p;
	return 1;
}

int cache_tmp_open(const char *final, char **tmp)
{
	const char *slash = strrchr(final, '/');
	char *dir;
	int fd, ret;

	*tmp = NULL;
	if (!slash)
		return -EINVAL;
	dir = xstrndup(final, (size_t)(slash - final));
	ret = fsutil_mkdirs(dir);
	if (ret) {
		free(dir);
		return ret;
	}
	/* A dot name never matches an object name, so a crash leaves nothing that looks valid. */
	*tmp = xasprintf("%s/.%s.XXXXXX", dir, slash + 1);
	free(dir);
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		free(*tmp);
		*tmp = NULL;
		return ret;
	}
	fchmod(fd, 0644);
	return fd;
}

static void sync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = xstrndup(path, slash ? (size_t)(slash - path) : 0);
	int fd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

int cache_commit(int fd, const char *tmp, const char *final)
{
	int ret = fsutil_close_rename(fd, 0, tmp, final);

	if (!ret)
		sync_dir_of(final);
	return ret;
}

int cache_store(const char *final, const void *p, size_t n, time_t mtime)
{
	char *tmp = NULL;
	int fd = cache_tmp_open(final, &tmp), ret;

	if (fd < 0)
		return fd;
	ret = fsutil_write_all(fd, p, n);
	if (!ret && mtime > 0)
		futimens(fd, (struct timespec[2]){ { mtime, 0 }, { mtime, 0 } });
	if (ret)
		cache_discard(fd, tmp);
	else
		ret = cache_commit(fd, tmp, final);
	free(tmp);
	return ret;
}

int cache_publish(const char *tmp, const char *final)
{
	if (!rename(tmp, final))
		return 0;
	unlink(tmp);
	return -errno;
}

void cache_sweep_tmp(const char *final)
{
	const char *slash = strrchr(final, '/');
	char *dir, *prefix;
	size_t plen;
	struct dirent *de;
	DIR *d;

	if (!slash)
		return;
	dir = xstrndup(final, (size_t)(slash - final));
	prefix = xasprintf(".%s.", slash + 1);
	plen = strlen(prefix);
	d = opendir(dir);
	while (d && (de = readdir(d)))
		/* cache_tmp_open's names: the prefix and mkostemp's six characters. */
		if (!strncmp(de->d_name, prefix, plen) && strlen(de->d_name) == plen + 6 &&
		    !unlinkat(dirfd(d), de->d_name, 0))
			log_debug("removed '%s/%s', left by a process that died downloading it", dir,
				  de->d_name);
	if (d)
		closedir(d);
	free(prefix);
	free(dir);
}

void cache_discard(int fd, const char *tmp)
{
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
}

/*
 * Waiting polls instead of blocking in flock(): the build's signal handlers use SA_RESTART, under
 * which a blocking flock() is restarted after SIGINT, so a build waiting for another process's
 * download would not notice the signal until that download ended (or never, if it hangs).
 */
int cache_flock_wait(int fd, int op)
{
	struct timespec nap = { 0, LOCK_POLL_MS * 1000000L };

	while (flock(fd, op | LOCK_NB)) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (err_interrupted())
			return -MKI_E_INTERRUPTED;
		nanosleep(&nap, NULL);
		if (err_interrupted())
			return -MKI_E_INTERRUPTED;
	}
	return 0;
}

int cache_lock(const char *cache_dir, const char *key, int wait)
{
	char *dir = xasprintf("%s/locks", cache_dir), *path = NULL;
	int fd = -1, ret;

	ret = fsutil_mkdirs(dir);
	if (ret)
		goto out;
	path = xasprintf("%s/%s", dir, key);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (wait)
		ret = cache_flock_wait(fd, LOCK_EX);
	else if (flock(fd, LOCK_EX | LOCK_NB))
		ret = -errno;
	if (ret) {
		close(fd);
		goto out;
	}
	ret = fd;
out:
	free(dir);
	free(path);
	return ret;
}

void cache_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
