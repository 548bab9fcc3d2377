#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
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

int fsutil_close_rename(int fd, int ret, const char *tmp, const char *final)
{
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, final))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int fsutil_write_atomic(const char *file, const void *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp.%d", file, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), ret;

	ret = fd < 0 ? -errno : fsutil_close_rename(fd, fsutil_write_all(fd, data, len), tmp, file);
	free(tmp);
	return ret;
}

int fsutil_mkdirs(const char *path)
{
	char *p, *s;
	int ret = 0;

	/* Usually only the leaf is missing, or nothing: one call instead of one per component. */
	if (!mkdir(path, 0755) || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	p = xstrdup(path);
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

/*
 * Why: a journal-less ext4 skips inodes freed in the last minutes when it allocates new ones,
 * checking each such inode in turn (ialloc.c, recently_deleted). A build removes its tree of
 * thousands of inodes at the end, and the next build beside it would create its tree in the same
 * block group, each creation scanning past all of them: a rebuild's restore took 1.9 s instead of
 * 0.2 s that way. Orlov's allocator places a directory created in a "top" directory in the
 * first group with the fewest directories, searching from a hash of its name: a random name
 * lands each tree in a fresh group, a fixed one ("root") in the group the last tree just left.
 */
void fsutil_spread(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), flags;

	if (fd < 0)
		return;
	if (!ioctl(fd, FS_IOC_GETFLAGS, &flags) && !(flags & FS_TOPDIR_FL)) {
		flags |= FS_TOPDIR_FL;
		(void)ioctl(fd, FS_IOC_SETFLAGS, &flags); /* unsupported: only slower */
	}
	close(fd);
}

/*
 * Without RENAME_NOREPLACE (NFS answers EINVAL) a rename would replace an empty directory: the
 * name is checked first, which is enough inside a work directory no one else writes.
 */
static int rename_dir_noreplace(const char *from, const char *to)
{
	struct stat sb;

	if (!renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL)
		return -errno;
	if (!lstat(to, &sb))
		return -EEXIST;
	return rename(from, to) ? -errno : 0;
}

int fsutil_mkdir_apart(const char *path, mode_t mode)
{
	char *tmp = xasprintf("%s.XXXXXX", path);
	int ret = 0;

	if (!mkdtemp(tmp)) {
		ret = -errno;
	} else {
		if (chmod(tmp, mode))
			ret = -errno;
		else
			ret = rename_dir_noreplace(tmp, path);
		if (ret)
			rmdir(tmp);
	}
	free(tmp);
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

int fsutil_remove_tree(const char *path)
{
	nftw(path, open_up, 32, FTW_PHYS);
	return nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

int fsutil_workdir_create(const char *tmp, char **path, int *lock_fd)
{
	char *dir = xasprintf("%s/mkimage.XXXXXX", tmp), *lock;
	int fd, ret = 0;

	*path = NULL;
	*lock_fd = -1;
	if (!mkdtemp(dir)) {
		ret = -errno;
		free(dir);
		return ret;
	}
	fsutil_spread(dir);
	/* Locked under a temp name first: a sweeper never sees the lock file unheld. */
	lock = xasprintf("%s/" WORKDIR_LOCK ".new", dir);
	fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
		ret = -errno;
	if (!ret) {
		char *final = xasprintf("%s/" WORKDIR_LOCK, dir);

		if (rename(lock, final) < 0)
			ret = -errno;
		free(final);
	}
	free(lock);
	if (ret) {
		if (fd >= 0)
			close(fd);
		fsutil_remove_tree(dir);
		free(dir);
		return ret;
	}
	*path = dir;
	*lock_fd = fd;
	return 0;
}

/* A directory of ours whose lock file exists and can be taken: its build is gone. */
static int abandoned(const char *dir)
{
	char *lock = xasprintf("%s/" WORKDIR_LOCK, dir);
	int fd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC), dead;

	free(lock);
	if (fd < 0)
		return 0;
	dead = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return dead;
}

unsigned fsutil_workdir_sweep(const char *tmp, const char *own)
{
	DIR *d = opendir(tmp);
	struct dirent *de;
	unsigned n = 0;

	while (d && (de = readdir(d))) {
		char *dir;
		struct stat sb;

		if (strncmp(de->d_name, "mkimage.", 8) || strlen(de->d_name) != 14)
			continue;
		dir = xasprintf("%s/%s", tmp, de->d_name);
		if (strcmp(dir, own) && lstat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) &&
		    sb.st_uid == geteuid() && abandoned(dir) && fsutil_remove_tree(dir) == 0)
			n++;
		free(dir);
	}
	if (d)
		closedir(d);
	return n;
}

void fsutil_workdir_keep(const char *path, int lock_fd)
{
	char *lock = xasprintf("%s/" WORKDIR_LOCK, path);

	unlink(lock);
	free(lock);
	if (lock_fd >= 0)
		close(lock_fd);
}
