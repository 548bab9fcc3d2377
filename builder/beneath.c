#include "beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "str.h"

#define RESOLVE_TREE (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

static const char *skip_slashes(const char *rel)
{
	while (*rel == '/')
		rel++;
	return *rel ? rel : ".";
}

static int open_how(int rootfd, const char *rel, int flags, mode_t mode, uint64_t resolve)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC),
				.mode = flags & (O_CREAT | O_TMPFILE) ? mode : 0,
				.resolve = resolve };
	long fd;

	do
		fd = syscall(SYS_openat2, rootfd, skip_slashes(rel), &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN); /* a rename raced the lookup: try again */
	return fd < 0 ? -errno : (int)fd;
}

static int open2(int rootfd, const char *rel, int flags, mode_t mode)
{
	return open_how(rootfd, rel, flags, mode, RESOLVE_TREE);
}

int beneath_open(int rootfd, const char *rel, int flags, mode_t mode)
{
	return open2(rootfd, rel, flags, mode);
}

int beneath_open_canonical(int rootfd, const char *rel, int flags)
{
	return open_how(rootfd, rel, flags | O_NOFOLLOW, 0,
			RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

int beneath_parent(int rootfd, const char *rel, const char **name)
{
	const char *p = skip_slashes(rel), *slash = strrchr(p, '/');
	char *dir;
	int fd;

	if (!slash) {
		*name = p;
		return open2(rootfd, ".", O_PATH | O_DIRECTORY, 0);
	}
	if (!slash[1])
		return -EINVAL; /* "dir/": no last component to act on */
	*name = slash + 1;
	dir = xstrndup(p, (size_t)(slash - p));
	fd = open2(rootfd, dir, O_PATH | O_DIRECTORY, 0);
	free(dir);
	return fd;
}

int beneath_lstat(int rootfd, const char *rel, struct stat *st)
{
	const char *name;
	int dfd = beneath_parent(rootfd, rel, &name), ret = 0;

	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		ret = -errno;
	close(dfd);
	return ret;
}

int beneath_unlink(int rootfd, const char *rel, int flags)
{
	const char *name;
	int dfd = beneath_parent(rootfd, rel, &name), ret = 0;

	if (dfd < 0)
		return dfd;
	if (unlinkat(dfd, name, flags) < 0)
		ret = -errno;
	close(dfd);
	return ret;
}

int beneath_mkdir(int rootfd, const char *rel, mode_t mode)
{
	const char *name;
	struct stat st;
	int dfd = beneath_parent(rootfd, rel, &name), ret = 0;

	if (dfd < 0)
		return dfd;
	if (mkdirat(dfd, name, mode) < 0) {
		ret = -errno;
		if (ret == -EEXIST && !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISDIR(st.st_mode))
			ret = 0;
	}
	close(dfd);
	return ret;
}

int beneath_rename(int rootfd, const char *from, const char *to)
{
	const char *n1, *n2;
	int d1 = beneath_parent(rootfd, from, &n1), d2, ret = 0;

	if (d1 < 0)
		return d1;
	d2 = beneath_parent(rootfd, to, &n2);
	if (d2 < 0) {
		close(d1);
		return d2;
	}
	if (renameat(d1, n1, d2, n2) < 0)
		ret = -errno;
	close(d1);
	close(d2);
	return ret;
}

int beneath_mkstemp(int rootfd, const char *dir, const char *prefix, char **rel)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	int dfd = open2(rootfd, dir, O_PATH | O_DIRECTORY, 0), fd = -EEXIST, tries;

	if (dfd < 0)
		return dfd;
	for (tries = 0; fd == -EEXIST && tries < 100; tries++) {
		unsigned char rnd[6];
		char name[256];
		size_t i, len = (size_t)snprintf(name, sizeof(name), "%s", prefix);

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd) ||
		    len + sizeof(rnd) >= sizeof(name)) {
			fd = -EINVAL;
			break;
		}
		for (i = 0; i < sizeof(rnd); i++)
			name[len + i] = chars[rnd[i] % (sizeof(chars) - 1)];
		name[len + sizeof(rnd)] = 0;
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		fd = fd < 0 ? -errno : fd;
		if (fd >= 0 && !strcmp(skip_slashes(dir), "."))
			*rel = xstrdup(name);
		else if (fd >= 0)
			*rel = xasprintf("%s/%s", skip_slashes(dir), name);
	}
	close(dfd);
	return fd;
}

int beneath_supported(int rootfd)
{
	int fd = open2(rootfd, ".", O_PATH | O_DIRECTORY, 0);

	if (fd >= 0)
		close(fd);
	return fd == -ENOSYS ? -ENOSYS : 0;
}
