#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "str.h"

int fsutil_write_all(int fd, const void *data, size_t n)
{
	const char *p = data;
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int fsutil_commit(int fd, const char *tmp, const char *output)
{
	mode_t mask = umask(0);

	umask(mask);
	if (fsync(fd) || fchmod(fd, 0666 & ~mask) || rename(tmp, output))
		return -errno;
	return 0;
}

int write_file_atomic(const char *file, const void *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp.%d", file, (int)getpid());
	int fd, ret = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = fsutil_write_all(fd, data, len);
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, file))
		ret = -errno;
	if (ret)
		unlink(tmp);
out:
	free(tmp);
	return ret;
}

int make_dirs(const char *path)
{
	char *p = xstrdup(path), *s;
	int ret = 0;

	for (s = p + 1; *s && !ret; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) && errno != EEXIST)
			ret = -errno;
		*s = '/';
	}
	if (!ret && mkdir(p, 0755) && errno != EEXIST)
		ret = -errno;
	free(p);
	return ret;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) && errno != ENOENT ? -1 : 0;
}

/* Directories must be writable (and searchable) before their entries can go. */
static int open_up(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_D && (st->st_mode & 0700) != 0700)
		chmod(path, st->st_mode | 0700);
	return 0;
}

int remove_tree(const char *path)
{
	nftw(path, open_up, 32, FTW_PHYS);
	return nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}
