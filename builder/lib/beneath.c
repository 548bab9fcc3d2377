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

#include "readfile.h"
#include "str.h"

#define RESOLVE_TREE (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
#define SYMLINK_MAX 40 /* symlinks followed while resolving one path (as Linux) */
#define TARGET_MAX 4096  /* longest symlink target read (PATH_MAX) */

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

int beneath_open_regular(int rootfd, const char *rel, int canonical, const char **kind)
{
	int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY;
	int fd = canonical ? beneath_open_canonical(rootfd, rel, flags)
			   : beneath_open(rootfd, rel, flags, 0);

	return fd < 0 ? fd : readfile_regular_fd(fd, kind);
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

/* --- canonical paths, resolved in userspace (the unpacker's view) --- */

static void buf_truncate_last(struct buf *b)
{
	char *slash = strrchr(b->p, '/');

	b->len = slash ? (size_t)(slash - b->p) : 0;
	b->p[b->len] = 0;
}

/* Follow symlink `at` (a tree path): replace *rest by target + "/" + remainder. */
static int splice_link(int rootfd, const char *at, char **rest, const char *remainder,
		       struct buf *out)
{
	char target[TARGET_MAX];
	ssize_t n = readlinkat(rootfd, at, target, sizeof(target) - 1);
	char *next;

	if (n < 0)
		return -errno;
	target[n] = 0;
	next = xasprintf("%s/%s", target, remainder);
	free(*rest);
	*rest = next;
	if (target[0] == '/') {
		out->len = 0;
		out->p[0] = 0;
	}
	return 0;
}

int beneath_resolve_dir(int rootfd, const char *path, struct buf *out, struct buf *bad)
{
	char *rest = xstrdup(path), *p = rest, *end;
	unsigned links = 0;
	struct stat st;
	int r = 0;

	buf_adds(out, "");
	out->len = 0;
	out->p[0] = 0;
	while (!r && *p) {
		size_t mark = out->len;

		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		if (end == p || (end - p == 1 && *p == '.')) {
			p = end;
			continue;
		}
		if (end - p == 2 && !strncmp(p, "..", 2)) {
			if (!out->len)
				r = -EXDEV;
			else
				buf_truncate_last(out);
			p = end;
			continue;
		}
		if (out->len)
			buf_adds(out, "/");
		buf_add(out, p, (size_t)(end - p));
		if (fstatat(rootfd, out->p, &st, AT_SYMLINK_NOFOLLOW)) {
			r = -errno;
		} else if (S_ISLNK(st.st_mode)) {
			char *link = xstrdup(out->p);

			out->len = mark;
			out->p[mark] = 0;
			r = ++links > SYMLINK_MAX ? -ELOOP : splice_link(rootfd, link, &rest, end, out);
			free(link);
			p = rest;
			continue;
		} else if (!S_ISDIR(st.st_mode)) {
			r = -ENOTDIR;
		}
		p = end;
	}
	if (r && bad) {
		bad->len = 0;
		buf_adds(bad, out->p);
	}
	free(rest);
	return r;
}
