#include "compress.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "compress_internal.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/workpool.h"
#include "lib/x.h"

#define CHUNK (1u << 20)
#define OUT_CHUNK (256u << 10)

/* One compression in progress: the library's state and where its output goes. */
struct cz {
	int out;
	ZSTD_CCtx *zc;
	lzma_stream xs;
	uint8_t *obuf;
	int level; /* zstd's; 0: COMPRESS_ZSTD_LEVEL */
	const char *why; /* the library's words for its failure */
};

struct codec {
	const char *name, *suffix;
	int (*begin)(struct cz *z, uint64_t size, unsigned threads);
	/* Compress `n` bytes of `p`, writing what comes out; `end`: finish the stream. */
	int (*feed)(struct cz *z, const void *p, size_t n, int end);
	void (*release)(struct cz *z);
};

/*
 * zstd in its multi-threaded mode whatever the worker count (at least 1): its jobs are cut every
 * job size of input, so the frame is the same with 1 worker or 8, which the single-threaded
 * mode's is not. The first call never ends the frame: that would compress in one blocking call.
 */
static int zstd_begin(struct cz *z, uint64_t size, unsigned threads)
{
	size_t r;

	z->zc = ZSTD_createCCtx();
	if (!z->zc) {
		z->why = "out of memory";
		return -ENOMEM;
	}
	r = ZSTD_CCtx_setParameter(z->zc, ZSTD_c_compressionLevel,
				   z->level ? z->level : COMPRESS_ZSTD_LEVEL);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(z->zc, ZSTD_c_checksumFlag, 1);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(z->zc, ZSTD_c_nbWorkers, (int)(threads ? threads : 1));
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setPledgedSrcSize(z->zc, size);
	if (ZSTD_isError(r)) {
		/* a libzstd without threads: refused rather than other bytes */
		z->why = ZSTD_getErrorName(r);
		return -MKI_E_IMAGE;
	}
	return 0;
}

static int zstd_feed(struct cz *z, const void *p, size_t n, int end)
{
	ZSTD_inBuffer in = { p, n, 0 };
	size_t left;
	int ret;

	do {
		ZSTD_outBuffer o = { z->obuf, OUT_CHUNK, 0 };

		left = ZSTD_compressStream2(z->zc, &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left)) {
			z->why = ZSTD_getErrorName(left);
			return -MKI_E_IMAGE;
		}
		ret = fsutil_write_all(z->out, z->obuf, o.pos);
		if (ret)
			return ret;
		if (err_interrupted())
			return -MKI_E_INTERRUPTED;
	} while (end ? left != 0 : in.pos < in.size);
	return 0;
}

static void zstd_release(struct cz *z)
{
	ZSTD_freeCCtx(z->zc);
}

/* xz in blocks of a fixed size, each by whichever thread: the same stream for any count. */
static int xz_begin(struct cz *z, uint64_t size, unsigned threads)
{
	lzma_mt mt = {
		.threads = threads ? threads : 1,
		.block_size = COMPRESS_XZ_BLOCK,
		.timeout = 300, /* ms: lzma_code() returns now and then, to see an interruption */
		.preset = COMPRESS_XZ_PRESET,
		.check = LZMA_CHECK_CRC64,
	};
	lzma_ret r;

	r = lzma_stream_encoder_mt(&z->xs, &mt);
	if (r == LZMA_OK)
		return 0;
	z->why = r == LZMA_MEM_ERROR ? "out of memory" : "the encoder refused its options";
	return r == LZMA_MEM_ERROR ? -ENOMEM : -MKI_E_IMAGE;
}

static int xz_feed(struct cz *z, const void *p, size_t n, int end)
{
	lzma_ret r;
	int ret;

	z->xs.next_in = p;
	z->xs.avail_in = n;
	do {
		z->xs.next_out = z->obuf;
		z->xs.avail_out = OUT_CHUNK;
		r = lzma_code(&z->xs, end ? LZMA_FINISH : LZMA_RUN);
		if (r != LZMA_OK && r != LZMA_STREAM_END) {
			z->why = r == LZMA_MEM_ERROR ? "out of memory" : "the encoder failed";
			return -MKI_E_IMAGE;
		}
		ret = fsutil_write_all(z->out, z->obuf, OUT_CHUNK - z->xs.avail_out);
		if (ret)
			return ret;
		if (err_interrupted())
			return -MKI_E_INTERRUPTED;
	} while (end ? r != LZMA_STREAM_END : z->xs.avail_in > 0);
	return 0;
}

static void xz_release(struct cz *z)
{
	lzma_end(&z->xs);
}

static const struct codec codecs[] = {
	[COMPRESS_NONE] = { "none", "", NULL, NULL, NULL },
	[COMPRESS_ZSTD] = { "zstd", ".zst", zstd_begin, zstd_feed, zstd_release },
	[COMPRESS_XZ] = { "xz", ".xz", xz_begin, xz_feed, xz_release },
};

int compress_parse(const char *name, enum compress_kind *k)
{
	size_t i;

	for (i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
		if (name && !strcmp(name, codecs[i].name)) {
			*k = (enum compress_kind)i;
			return 0;
		}
	return -EINVAL;
}

const char *compress_name(enum compress_kind k)
{
	return codecs[k].name;
}

const char *compress_suffix(enum compress_kind k)
{
	return codecs[k].suffix;
}

/* Zeros for [pos, to): a hole is never read, only counted out. */
static int feed_zeros(struct cz *z, const struct codec *c, uint64_t pos, uint64_t to)
{
	static const uint8_t zeros[CHUNK];
	int ret = 0;

	while (!ret && pos < to) {
		size_t n = to - pos < CHUNK ? (size_t)(to - pos) : CHUNK;

		ret = err_interrupted() ? -MKI_E_INTERRUPTED : c->feed(z, zeros, n, 0);
		pos += n;
	}
	return ret;
}

static int feed_data(struct cz *z, const struct codec *c, int fd, uint64_t pos, uint64_t to,
		     uint8_t *chunk)
{
	ssize_t got;
	int ret = 0;

	while (!ret && pos < to) {
		size_t want = to - pos < CHUNK ? (size_t)(to - pos) : CHUNK;

		if (err_interrupted())
			return -MKI_E_INTERRUPTED;
		got = pread(fd, chunk, want, (off_t)pos);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -ESTALE; /* shorter than it was: changed */
		ret = c->feed(z, chunk, (size_t)got, 0);
		pos += (uint64_t)got;
	}
	return ret;
}

/* The whole of `fd` (`size` bytes) through the codec: data read, holes as zeros. */
static int feed_file(struct cz *z, const struct codec *c, int fd, uint64_t size)
{
	uint8_t *chunk = xmalloc(CHUNK);
	off_t data, hole;
	uint64_t pos = 0;
	int ret = 0;

	while (!ret && pos < size) {
		data = lseek(fd, (off_t)pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			data = (off_t)size;
		if (data < 0 || (hole = (uint64_t)data < size ? lseek(fd, data, SEEK_HOLE)
							      : (off_t)size) < 0) {
			ret = -errno;
			break;
		}
		hole = (uint64_t)hole < size ? hole : (off_t)size;
		ret = feed_zeros(z, c, pos, (uint64_t)data);
		if (!ret)
			ret = feed_data(z, c, fd, (uint64_t)data, (uint64_t)hole, chunk);
		pos = (uint64_t)hole;
	}
	if (!ret)
		ret = c->feed(z, NULL, 0, 1);
	free(chunk);
	return ret;
}

static int open_input(const char *in, int *fd, uint64_t *size)
{
	struct stat st;

	*fd = open(in, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &st) < 0) {
		log_error("cannot read the image '%s' to compress it: %s", in, strerror(errno));
		return -MKI_E_IMAGE;
	}
	if (!S_ISREG(st.st_mode)) {
		log_error("cannot compress '%s': not a regular file", in);
		return -MKI_E_IMAGE;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

/* Log what went wrong once, with the file it concerns; the code the caller sees. */
static int say(int ret, const struct codec *c, const char *in, const char *out, const char *why)
{
	if (ret == -MKI_E_INTERRUPTED)
		log_error("interrupted: the unfinished '%s' is removed", out);
	else if (why)
		log_error("cannot compress '%s' with %s: %s", in, c->name, why);
	else if (ret == -ESTALE)
		log_error("cannot compress '%s': it changed while being read", in);
	else
		log_error("cannot write '%s': %s", out, err_text(ret));
	return ret == -MKI_E_INTERRUPTED ? ret : -MKI_E_IMAGE;
}

static int compress_run(const char *in, const char *out, enum compress_kind k, int level,
			unsigned threads)
{
	const struct codec *c = &codecs[k];
	struct cz z = { .out = -1, .xs = LZMA_STREAM_INIT, .level = level };
	char *tmp = NULL;
	uint64_t size = 0;
	int fd = -1, ret, begun = 0;

	if (k == COMPRESS_NONE)
		return 0;
	ret = open_input(in, &fd, &size);
	if (ret)
		goto out;
	tmp = xasprintf("%s.tmp-%d", out, (int)getpid());
	z.out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (z.out < 0) {
		ret = log_errno(-MKI_E_IMAGE, "cannot create '%s': %s; check that its directory "
				"exists and is writable", tmp, strerror(errno));
		goto out;
	}
	z.obuf = xmalloc(OUT_CHUNK);
	ret = c->begin(&z, size, threads);
	begun = 1;
	if (!ret)
		ret = feed_file(&z, c, fd, size);
	ret = fsutil_close_rename(z.out, ret, tmp, out);
	if (ret)
		ret = say(ret, c, in, out, z.why);
out:
	if (begun)
		c->release(&z);
	if (fd >= 0)
		close(fd);
	free(z.obuf);
	free(tmp);
	return ret;
}

int compress_file_threads(const char *in, const char *out, enum compress_kind k,
			  unsigned threads)
{
	return compress_run(in, out, k, 0, threads);
}

/* Every usable CPU, up to COMPRESS_MAX_THREADS: the bytes do not depend on it. */
int compress_file_level(const char *in, const char *out, enum compress_kind k, int level)
{
	return compress_run(in, out, k, level,
			    workpool_threads(COMPRESS_MAX_THREADS, COMPRESS_MAX_THREADS));
}

int compress_file(const char *in, const char *out, enum compress_kind k)
{
	return compress_file_level(in, out, k, 0);
}
