#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/str.h"

#define ZERO_CHUNK (1u << 20)

void sink_init_file(struct sink *k, const char *output)
{
	memset(k, 0, sizeof(*k));
	k->fd = -1;
	k->output = xstrdup(output);
	k->tmp = xasprintf("%s.tmp-%d", output, (int)getpid());
	k->name = xstrdup(k->tmp);
}

void sink_init_region(struct sink *k, int fd, uint64_t offset, uint64_t length, const char *name)
{
	memset(k, 0, sizeof(*k));
	k->fd = fd;
	k->offset = offset;
	k->length = length;
	k->name = xstrdup(name);
}

/* A fresh file of `size` bytes, all hole: what mke2fs's lazy initialisation relies on. */
static int begin_file(struct sink *k, uint64_t size)
{
	int ret;

	if (k->fd < 0)
		k->fd = open(k->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	else if (ftruncate(k->fd, 0) < 0)
		goto fail;
	if (k->fd < 0 || ftruncate(k->fd, (off_t)size) < 0)
		goto fail;
	return 0;
fail:
	ret = -errno;
	log_error("cannot create '%s': %s", k->tmp, strerror(-ret));
	return ret;
}

/* Zeros over the region's first `size` bytes: punched where the file system can, else written. */
static int zero_region(struct sink *k, uint64_t size)
{
	uint8_t *zero = NULL;
	uint64_t done = 0;
	size_t n;
	int ret = 0;

	if (!fallocate(k->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)k->offset,
		       (off_t)size))
		return 0;
	zero = xcalloc(1, ZERO_CHUNK);
	while (!ret && done < size) {
		n = size - done < ZERO_CHUNK ? (size_t)(size - done) : ZERO_CHUNK;
		ret = sink_pwrite(k, zero, n, done);
		done += n;
	}
	free(zero);
	if (ret)
		log_error("cannot clear '%s': %s", k->name, strerror(-ret));
	return ret;
}

int sink_begin(struct sink *k, uint64_t size)
{
	if (!k->length)
		return begin_file(k, size);
	if (size > k->length) {
		log_error("'%s': an image of %" PRIu64 " bytes does not fit its region of %" PRIu64
			  " bytes", k->name, size, k->length);
		return -MKI_E_NOSPACE;
	}
	return zero_region(k, size);
}

int sink_pwrite(struct sink *k, const void *buf, size_t n, uint64_t off)
{
	const char *p = buf;
	ssize_t got;

	if (k->length && (off > k->length || n > k->length - off))
		return -EFBIG;
	while (n) {
		got = pwrite(k->fd, p, n, (off_t)(k->offset + off));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got ? -errno : -ENOSPC; /* a full disk's short write: say so */
		p += got;
		n -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

char *sink_path(const struct sink *k)
{
	return k->tmp ? xstrdup(k->tmp) : xasprintf("/proc/%d/fd/%d", (int)getpid(), k->fd);
}

void sink_writeback(struct sink *k)
{
	sync_file_range(k->fd, (off_t)k->offset, (off_t)k->length, SYNC_FILE_RANGE_WRITE);
}

/* An output this large is freed beside the build, not in the rename (ext4: some 0.1-0.6 s). */
#define OLD_ASYNC_BYTES (64ull << 20)

static void *close_main(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/*
 * The output the rename is about to replace, held open when it is a large regular file: the
 * rename then only drops its name, and its blocks are freed when this is closed.
 */
static int hold_old(const char *output)
{
	int fd = open(output, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
			(uint64_t)st.st_blocks * 512 < OLD_ASYNC_BYTES)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Close the replaced output on a detached thread: freeing a large image's extents is file
 * system work the rest of the build need not wait for. The name is gone already, so nothing
 * is left behind whenever it ends: at the latest, the process's exit closes it. Without a
 * thread it is closed here.
 */
static void free_old(int fd)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t t;
	int started;

	if (fd < 0)
		return;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* SIGINT and SIGTERM stay the main thread's */
	started = !pthread_create(&t, &a, close_main, (void *)(intptr_t)fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	if (!started)
		close(fd);
}

int sink_commit(struct sink *k)
{
	int ret, old;

	if (!k->tmp)
		return 0;
	old = hold_old(k->output);
	ret = fsutil_commit(k->fd, k->tmp, k->output);
	if (ret)
		log_error("cannot write '%s': %s", k->output, strerror(-ret));
	k->committed = !ret;
	free_old(old);
	return ret;
}

void sink_release(struct sink *k)
{
	if (k->tmp && k->fd >= 0)
		close(k->fd);
	if (k->tmp && k->fd >= 0 && !k->committed)
		unlink(k->tmp);
	free(k->tmp);
	free(k->output);
	free(k->name);
	memset(k, 0, sizeof(*k));
	k->fd = -1;
}
