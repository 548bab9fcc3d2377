/*
 * Indexes, decompression: a downloaded Packages file (xz through liblzma, the rest through
 * libarchive) streamed into the cache, hashed on the way and bounded whatever it claims.
 */
#include <archive.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "indexes_ctx.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/runlimits.h"
#include "lib/xz.h"
#include "store/cache.h"

/* Where decompressed bytes go: hashed, bounded by `max`, written to `fd`. */
struct sink {
	int fd;
	struct hash *h;
	uint64_t total, max;
};

/* -MKI_E_LIMIT as soon as more than `max` bytes came out. */
static int sink_add(struct sink *k, const void *p, size_t n)
{
	k->total += n;
	if (k->total > k->max)
		return -MKI_E_LIMIT;
	hash_update(k->h, p, n);
	return fsutil_write_all(k->fd, p, n);
}

static int copy_out(struct archive *a, struct sink *k)
{
	char chunk[65536];
	la_ssize_t n;
	int ret = 0;

	while (!ret && (n = archive_read_data(a, chunk, sizeof(chunk))) > 0)
		ret = sink_add(k, chunk, (size_t)n);
	return ret ? ret : n < 0 ? -MKI_E_PARSE : 0;
}

static int archive_into(const char *src, struct sink *k)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int ret = 0;

	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	archive_read_support_format_empty(a);
	if (archive_read_open_filename(a, src, 65536) != ARCHIVE_OK) {
		log_error("cannot open '%s': %s", src, archive_error_string(a));
		ret = -MKI_E_PARSE;
	} else if (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		ret = copy_out(a, k);
		if (ret == -MKI_E_PARSE)
			log_error("cannot decompress '%s': %s", src, archive_error_string(a));
	}
	archive_read_free(a);
	return ret;
}

/* .xz through liblzma under 'xz-memory' (see xz.h); -MKI_E_LIMIT for the output bound. */
static int xz_into(const char *src, int in, struct sink *k, uint64_t memlimit, uint64_t *memneed)
{
	struct xz *x = xz_new(memlimit, 0);
	uint8_t *ibuf = xmalloc(65536), *obuf = xmalloc(65536);
	const uint8_t *p = ibuf;
	size_t avail = 0, out;
	ssize_t got = 1;
	int ret = x ? 0 : -ENOMEM;

	while (!ret) {
		if (!avail && got > 0 && (got = read(in, ibuf, 65536)) >= 0) {
			avail = (size_t)got;
			p = ibuf;
		}
		out = 65536;
		ret = got < 0 ? -errno : xz_decode(x, &p, &avail, obuf, &out, got == 0);
		if (ret >= 0 && out) {
			int r = sink_add(k, obuf, out);

			ret = r ? r : ret;
		}
	}
	if (ret == -MKI_E_LIMIT && k->total <= k->max)
		*memneed = xz_memneed(x);
	if (ret == -MKI_E_PARSE)
		log_error("cannot decompress '%s': %s", src, xz_error(x));
	xz_free(x);
	free(ibuf);
	free(obuf);
	return ret == 1 ? 0 : ret;
}

static int decompress_into(const char *src, struct sink *k, uint64_t memlimit, uint64_t *memneed)
{
	unsigned char magic[6];
	int in = open(src, O_RDONLY | O_CLOEXEC), ret;

	if (in < 0)
		return log_errno(-errno, "cannot open '%s': %m", src);
	if (read(in, magic, sizeof(magic)) == sizeof(magic) && xz_is_xz(magic, sizeof(magic)) &&
	    lseek(in, 0, SEEK_SET) == 0)
		ret = xz_into(src, in, k, memlimit, memneed);
	else
		ret = archive_into(src, k);
	close(in);
	return ret;
}

static int check_plain(const struct want *x, const char *hex, uint64_t total)
{
	if (!x->plain || (x->plain->size == total && !strcmp(x->plain->sha256, hex)))
		return 0;
	log_error("'%s' decompresses to %llu bytes with SHA-256 %s, but the Release says %llu "
		  "bytes, %s for '%s': the mirror is inconsistent; nothing was cached", x->url,
		  (unsigned long long)total, hex, (unsigned long long)x->plain->size,
		  x->plain->sha256, x->plain->path);
	return -MKI_E_INTEGRITY;
}

/*
 * Decompression went past `max` (the Release's own size for the plain file, or the limit), or
 * its xz headers asked for `memneed` bytes of memory.
 */
static int too_big(const struct indexes_ctx *c, const struct want *x, uint64_t max,
		   uint64_t memneed)
{
	const struct limits *lim = &c->st->limits;

	if (memneed)
		return log_errno(-MKI_E_LIMIT_REPO, "'%s' needs %llu MiB of memory to decompress "
				 "(its xz dictionary), more than %s: refused before decompressing "
				 "(%s)", x->url, (unsigned long long)(memneed >> 20),
				 runlimits_format(LIMIT_XZ_MEMORY, runlimits_get(lim, LIMIT_XZ_MEMORY)).s,
				 runlimits_hint(lim, LIMIT_XZ_MEMORY).s);
	if (x->plain && x->plain->size == max)
		return log_errno(-MKI_E_INTEGRITY, "'%s' decompresses to more than the %llu bytes "
				 "the Release declares for '%s': the mirror is inconsistent or "
				 "hostile; stopped there, nothing was cached", x->url,
				 (unsigned long long)max, x->plain->path);
	log_error("'%s' decompresses to more than %s (a decompression bomb?): stopped there, "
		  "nothing was cached (%s)", x->url, runlimits_format(LIMIT_INDEX_UNPACKED, max).s,
		  runlimits_hint(lim, LIMIT_INDEX_UNPACKED).s);
	return -MKI_E_LIMIT_REPO;
}

/* A refused download leaves the cache too: the next build fetches it again, if it must. */
static void evict(const struct want *x, int ret)
{
	if ((ret == -MKI_E_LIMIT_REPO || ret == -MKI_E_INTEGRITY || ret == -MKI_E_PARSE) &&
	    x->item.path && !unlink(x->item.path))
		log_debug("removed the refused '%s' from the cache", x->item.path);
}

/*
 * Stream the download through the decompressor into the cache. Memory stays bounded whatever the
 * file claims; the output stops at the plain file's declared size or the limit, whichever is less.
 */
int indexes_decompress_want(const struct indexes_ctx *c, struct want *x)
{
	const struct limits *lim = &c->st->limits;
	uint64_t memneed = 0;
	struct hash h = { 0 };
	struct sink k = { .h = &h, .max = runlimits_get(lim, LIMIT_INDEX_UNPACKED) };
	char *tmp = NULL, hex[65];
	int ret;

	k.fd = cache_tmp_open(x->derived, &tmp);
	if (k.fd < 0)
		return log_errno(k.fd, "cannot create a temp file for '%s': %s", x->derived,
				 strerror(-k.fd));
	if (x->plain && x->plain->size < k.max)
		k.max = x->plain->size;
	ret = hash_init(&h, HASH_SHA256);
	if (!ret)
		ret = decompress_into(x->item.path, &k, runlimits_get(lim, LIMIT_XZ_MEMORY), &memneed);
	if (ret == -MKI_E_LIMIT)
		ret = too_big(c, x, k.max, memneed);
	if (!ret) {
		hash_final_hex(&h, hex);
		ret = check_plain(x, hex, k.total);
	} else if (h.ctx) {
		hash_release(&h);
	}
	if (!ret)
		ret = cache_commit(k.fd, tmp, x->derived);
	else
		cache_discard(k.fd, tmp);
	if (ret < 0 && ret > -MKI_E_BASE)
		log_error("cannot store '%s': %s", x->derived, strerror(-ret));
	evict(x, ret);
	free(tmp);
	return ret;
}
