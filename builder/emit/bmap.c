#include "bmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bmap_internal.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/x.h"

#define CHUNK (1u << 20)
#define FIEMAP_BATCH 256
#define BS ((uint64_t)BMAP_BLOCK_SIZE)
/* Bytes [from, to) of the image. */
struct span {
	uint64_t from, to;
};

#define ZERO_SUM "0000000000000000000000000000000000000000000000000000000000000000"

/* Append [first, last] to the list, merged with the previous range when they touch. */
static void add_range(struct bmap_range **v, size_t *n, size_t *alloc, uint64_t first,
		      uint64_t last)
{
	if (*n && first <= (*v)[*n - 1].last + 1) {
		if (last > (*v)[*n - 1].last)
			(*v)[*n - 1].last = last;
		return;
	}
	if (*n == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 64;
		*v = xrealloc(*v, *alloc * sizeof(**v));
	}
	(*v)[(*n)++] = (struct bmap_range){ first, last };
}

/* Bytes [from, to) hold data: the blocks they touch are mapped. */
static void add_bytes(struct bmap_range **v, size_t *n, size_t *alloc, uint64_t from, uint64_t to)
{
	if (from < to)
		add_range(v, n, alloc, from / BS, (to + BS - 1) / BS - 1);
}

/*
 * The extents of `fd` allocated but never written (FIEMAP's "unwritten": what fallocate and
 * libext2fs's zeroing leave on ext4, xfs, btrfs), in bytes, after the file's dirty pages are
 * written out (FIEMAP_FLAG_SYNC) so that written data is no longer reported as such. They read
 * as zeros, and SEEK_DATA calls them data only once something has read them into the page
 * cache: left out always, the map does not depend on who read the image before (and matches
 * tmpfs, where the same zeroing punches holes). Where FIEMAP is not supported there are none.
 */
static int unwritten(int fd, uint64_t size, struct span **v, size_t *n)
{
	struct fiemap *fm = xcalloc(1, sizeof(*fm) + FIEMAP_BATCH * sizeof(struct fiemap_extent));
	uint64_t start = 0, end = 0;
	size_t alloc = 0, i;
	int ret = 0, last = 0;

	while (!last && start < size) {
		fm->fm_start = start;
		fm->fm_length = size - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			ret = errno == EOPNOTSUPP || errno == ENOTTY ? 0 : -errno;
			break;
		}
		for (i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];

			end = e->fe_logical + e->fe_length;
			last |= !!(e->fe_flags & FIEMAP_EXTENT_LAST);
			if (!(e->fe_flags & FIEMAP_EXTENT_UNWRITTEN))
				continue;
			if (*n == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				*v = xrealloc(*v, alloc * sizeof(**v));
			}
			(*v)[(*n)++] = (struct span){ e->fe_logical, end };
		}
		if (!fm->fm_mapped_extents || end <= start)
			break;
		start = end;
	}
	free(fm);
	return ret;
}

/* Data bytes [from, to) less the unwritten extents `u` (sorted, from *j on) into the map. */
static void add_written(struct bmap_range **v, size_t *n, size_t *alloc, uint64_t from,
			uint64_t to, const struct span *u, size_t n_u, size_t *j)
{
	while (*j < n_u && u[*j].to <= from)
		(*j)++;
	for (size_t k = *j; k < n_u && u[k].from < to; k++) {
		add_bytes(v, n, alloc, from, u[k].from < from ? from : u[k].from);
		from = u[k].to > from ? u[k].to : from;
	}
	add_bytes(v, n, alloc, from, to);
}

int bmap_ranges(int fd, uint64_t size, struct bmap_range **v, size_t *n)
{
	struct span *u = NULL;
	size_t alloc = 0, n_u = 0, j = 0;
	off_t pos = 0, start, end;
	int ret;

	*v = NULL;
	*n = 0;
	ret = unwritten(fd, size, &u, &n_u);
	while (!ret && (uint64_t)pos < size) {
		start = lseek(fd, pos, SEEK_DATA);
		if (start < 0 && errno == ENXIO)
			break; /* the rest is a hole */
		if (start < 0 || (end = lseek(fd, start, SEEK_HOLE)) < 0) {
			ret = -errno;
			break;
		}
		if ((uint64_t)start >= size)
			break;
		if ((uint64_t)end > size)
			end = (off_t)size;
		/* The host's holes may be finer than the map's blocks: any data maps its block. */
		add_written(v, n, &alloc, (uint64_t)start, (uint64_t)end, u, n_u, &j);
		pos = end;
	}
	free(u);
	if (ret) {
		free(*v);
		*v = NULL;
		*n = 0;
	}
	return ret;
}

void bmap_human_size(uint64_t size, char *out, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double s = (double)size;
	size_t i;

	if (size == 1) {
		snprintf(out, len, "1 byte");
		return;
	}
	if (size < 512) {
		snprintf(out, len, "%" PRIu64 " bytes", size);
		return;
	}
	for (i = 0; i < 4; i++) {
		s /= 1024.0;
		if (s < 1024) {
			snprintf(out, len, "%.1f %s", s, unit[i]);
			return;
		}
	}
	snprintf(out, len, "%.1f EiB", s);
}

/* The SHA-256 of the image's bytes in range `r` (the last block may be short). */
static int hash_range(int fd, uint64_t size, const struct bmap_range *r, char *chunk, char *hex)
{
	uint64_t pos = r->first * BS, end = (r->last + 1) * BS;
	struct hash h;
	ssize_t got;

	end = end < size ? end : size;
	if (hash_init(&h, HASH_SHA256))
		return -ENOMEM;
	while (pos < end) {
		size_t want = end - pos < CHUNK ? (size_t)(end - pos) : CHUNK;

		if (err_interrupted()) {
			hash_release(&h);
			return -MKI_E_INTERRUPTED;
		}
		got = pread(fd, chunk, want, (off_t)pos);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			hash_release(&h);
			return got < 0 ? -errno : -ESTALE; /* shorter than it was: changed */
		}
		hash_update(&h, chunk, (size_t)got);
		pos += (uint64_t)got;
	}
	hash_final_hex(&h, hex);
	return 0;
}

/* The <Range> lines of every range into `b`; the mapped block count into *mapped. */
static int add_ranges(struct buf *b, int fd, uint64_t size, const struct bmap_range *v, size_t n,
		      uint64_t *mapped)
{
	char *chunk = xmalloc(CHUNK), hex[SHA256_HEX_LEN + 1];
	size_t i;
	int ret = 0;

	*mapped = 0;
	for (i = 0; i < n && !ret; i++) {
		ret = hash_range(fd, size, &v[i], chunk, hex);
		if (ret)
			break;
		*mapped += v[i].last - v[i].first + 1;
		if (v[i].first == v[i].last)
			buf_addf(b, "        <Range chksum=\"%s\"> %" PRIu64 " </Range>\n", hex,
				 v[i].first);
		else
			buf_addf(b, "        <Range chksum=\"%s\"> %" PRIu64 "-%" PRIu64
				 " </Range>\n", hex, v[i].first, v[i].last);
	}
	free(chunk);
	return ret;
}

/*
 * The head of the map: the sizes, and the file's own checksum as zeros, replaced once the whole
 * text is known. Returns the offset of that checksum in `b`.
 */
static size_t add_head(struct buf *b, uint64_t size, uint64_t mapped)
{
	uint64_t blocks = (size + BS - 1) / BS;
	char hs[32], hm[32];
	size_t pos;

	bmap_human_size(size, hs, sizeof(hs));
	bmap_human_size(mapped * BS, hm, sizeof(hm));
	buf_adds(b, "<?xml version=\"1.0\" ?>\n"
		 "<!-- The blocks of a disk image that hold data, each range with the SHA-256\n"
		 "     of its bytes, written by mkimage. Flash the image with\n"
		 "         bmaptool copy IMAGE DEVICE\n"
		 "     with this file beside IMAGE (or named by its bmap option): only these\n"
		 "     blocks are written, and each range is checked. -->\n\n");
	buf_addf(b, "<bmap version=\"2.0\">\n"
		 "    <!-- Image size in bytes: %s -->\n"
		 "    <ImageSize> %" PRIu64 " </ImageSize>\n\n"
		 "    <BlockSize> %" PRIu64 " </BlockSize>\n\n"
		 "    <BlocksCount> %" PRIu64 " </BlocksCount>\n\n"
		 "    <!-- Count of mapped blocks: %s or %.1f%% -->\n"
		 "    <MappedBlocksCount> %" PRIu64 " </MappedBlocksCount>\n\n"
		 "    <ChecksumType> sha256 </ChecksumType>\n\n"
		 "    <!-- The SHA-256 of this file with this value as zeros -->\n"
		 "    <BmapFileChecksum> ", hs, size, BS, blocks, hm,
		 blocks ? (double)mapped * 100.0 / (double)blocks : 0.0, mapped);
	pos = b->len;
	buf_adds(b, ZERO_SUM " </BmapFileChecksum>\n\n    <BlockMap>\n");
	return pos;
}

static int open_image(const char *image, int *fd, uint64_t *size)
{
	struct stat st;

	*fd = open(image, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &st) < 0) {
		log_error("cannot read the image '%s' to map its blocks: %s", image,
			  strerror(errno));
		return -MKI_E_IMAGE;
	}
	if (!S_ISREG(st.st_mode) || !st.st_size) {
		log_error("cannot map the blocks of '%s': %s", image,
			  S_ISREG(st.st_mode) ? "the file is empty" : "not a regular file");
		return -MKI_E_IMAGE;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

static int map_error(int ret, const char *image)
{
	if (ret == -MKI_E_INTERRUPTED)
		return ret;
	log_error("cannot map the blocks of '%s': %s", image,
		  ret == -ESTALE ? "it changed while being read" : err_text(ret));
	return -MKI_E_IMAGE;
}

/* `b` into `path` through a temporary file beside it, fsync'ed, renamed; removed on failure. */
static int write_map(const char *path, const struct buf *b)
{
	char *tmp = xasprintf("%s.tmp-%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666), ret;

	ret = fd < 0 ? -errno : fsutil_write_all(fd, b->p, b->len);
	if (fd >= 0)
		ret = fsutil_close_rename(fd, ret, tmp, path);
	if (ret)
		log_error("cannot write the block map '%s': %s; check that its directory exists "
			  "and is writable", path, strerror(-ret));
	free(tmp);
	return ret ? -MKI_E_IMAGE : 0;
}

int bmap_write(const char *image, const char *bmap_path)
{
	struct buf head = { 0 }, body = { 0 };
	struct bmap_range *v = NULL;
	char hex[SHA256_HEX_LEN + 1];
	uint64_t size = 0, mapped = 0;
	size_t n = 0, pos;
	int fd = -1, ret;

	ret = open_image(image, &fd, &size);
	if (!ret)
		ret = bmap_ranges(fd, size, &v, &n);
	if (!ret)
		ret = add_ranges(&body, fd, size, v, n, &mapped);
	if (ret) {
		ret = ret == -MKI_E_IMAGE ? ret : map_error(ret, image);
		goto out;
	}
	pos = add_head(&head, size, mapped);
	if (body.len) /* no range at all: body.p is NULL */
		buf_add(&head, body.p, body.len);
	buf_adds(&head, "    </BlockMap>\n</bmap>\n");
	hash_sha256_hex(head.p, head.len, hex);
	memcpy(head.p + pos, hex, SHA256_HEX_LEN);
	ret = write_map(bmap_path, &head);
out:
	if (fd >= 0)
		close(fd);
	free(v);
	buf_release(&head);
	buf_release(&body);
	return ret;
}
