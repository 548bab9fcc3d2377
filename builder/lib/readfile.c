#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

const char *readfile_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return S_ISREG(mode) ? "a regular file" : "not a regular file";
}

const char *readfile_why(int err, const char *kind)
{
	static char why[64];

	if (err == -EINVAL && kind) {
		snprintf(why, sizeof(why), "it is %s, not a regular file", kind);
		return why;
	}
	if (err == -EFBIG)
		return "it is larger than the limit for such a file";
	return strerror(-err);
}

int readfile_regular_fd(int fd, const char **kind)
{
	struct stat st;
	int flags;

	if (fstat(fd, &st) < 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		if (kind)
			*kind = readfile_kind(st.st_mode);
		close(fd);
		return -EINVAL;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

int readfile_open(const char *path, const char **kind)
{
	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	return fd < 0 ? -errno : readfile_regular_fd(fd, kind);
}

int readfile_read_fd(int fd, size_t limit, struct buf *b, const char **kind)
{
	char chunk[65536];
	int ret = 0;
	ssize_t n;

	b->len = 0;
	fd = readfile_regular_fd(fd, kind);
	if (fd < 0)
		return fd;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (err_interrupted()) {
			ret = -MKI_E_INTERRUPTED;
			break;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (b->len + (size_t)n > limit) {
			ret = -EFBIG;
			break;
		}
		buf_add(b, chunk, (size_t)n);
	}
	close(fd);
	if (!ret && !b->p)
		buf_add(b, "", 0);
	return ret;
}

int readfile_read(const char *path, size_t limit, struct buf *b, const char **kind)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	b->len = 0;
	return fd < 0 ? -errno : readfile_read_fd(fd, limit, b, kind);
}
