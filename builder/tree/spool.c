/* The unpacker's spool (spool.h): the directory's life and comparing a spooled file. */
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/str.h"

#define COMPARE_CHUNK (128u << 10)

int spool_open(const char *work_dir, int *dirfd)
{
	char *path = xasprintf("%s/%s", work_dir, SPOOL_DIR);
	int r = 0;

	*dirfd = -1;
	r = fsutil_mkdir_apart(path, 0700); /* apart: its files become the tree's (fsutil.h) */
	if (!r && (*dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		r = -errno;
	if (r)
		log_error("cannot create the unpack spool '%s': %s", path, strerror(-r));
	free(path);
	return r;
}

void spool_close(const char *work_dir, int dirfd)
{
	char *path;

	if (dirfd < 0)
		return;
	close(dirfd);
	path = xasprintf("%s/%s", work_dir, SPOOL_DIR);
	fsutil_remove_tree(path);
	free(path);
}

int spool_same(int dirfd, const char *name, int fd, uint64_t size)
{
	int sfd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char *a = xmalloc(COMPARE_CHUNK), *b = xmalloc(COMPARE_CHUNK);
	uint64_t off = 0;
	ssize_t n = 0;
	int same = sfd >= 0;

	/* one byte past `size` tells a longer file from an equal one */
	while (same && off <= size) {
		size_t want = size - off < COMPARE_CHUNK ? (size_t)(size - off) + 1 : COMPARE_CHUNK;

		n = pread(sfd, a, want, (off_t)off);
		same = n >= 0 && pread(fd, b, want, (off_t)off) == n && !memcmp(a, b, (size_t)n);
		if (n <= 0 || (size_t)n < want)
			break;
		off += (uint64_t)n;
	}
	same = same && n >= 0 && off + (uint64_t)n == size;
	if (sfd >= 0)
		close(sfd);
	free(a);
	free(b);
	return same;
}
