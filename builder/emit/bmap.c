#include "bmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bmap_internal.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/sparsehash.h"
#include "lib/x.h"

#define BS ((uint64_t)BMAP_BLOCK_SIZE)
#define ZERO_SUM "0000000000000000000000000000000000000000000000000000000000000000"

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

/* The <Range> lines of the map into `b`; the mapped block count into *mapped. */
static void add_ranges(struct buf *b, const struct sparsehash *sh, uint64_t *mapped)
{
	const struct sparsehash_range *r;
	size_t i;

	*mapped = 0;
	for (i = 0; i < sh->n_map; i++) {
		r = &sh->map[i];
		*mapped += r->last - r->first + 1;
		if (r->first == r->last)
			buf_addf(b, "        <Range chksum=\"%s\"> %" PRIu64 " </Range>\n",
				 r->sha256, r->first);
		else
			buf_addf(b, "        <Range chksum=\"%s\"> %" PRIu64 "-%" PRIu64
				 " </Range>\n", r->sha256, r->first, r->last);
	}
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

/* The map of `image` as `known` gave it when it is the map of a file that size, else hashed now. */
static int image_map(const char *image, const struct sparsehash *known, struct sparsehash *own,
		     const struct sparsehash **sh)
{
	uint64_t size = 0;
	int fd = -1, ret = open_image(image, &fd, &size);

	*sh = known;
	if (!ret && known && known->want_map && known->size != size)
		ret = map_error(-ESTALE, image);
	if (!ret && !(known && known->want_map)) {
		own->want_map = 1;
		ret = sparsehash_file(fd, size, own);
		ret = ret ? map_error(ret, image) : 0;
		*sh = own;
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

int bmap_write(const char *image, const char *bmap_path, const struct sparsehash *known)
{
	struct buf head = { 0 }, body = { 0 };
	struct sparsehash own = { 0 };
	const struct sparsehash *sh = NULL;
	char hex[SHA256_HEX_LEN + 1];
	uint64_t mapped = 0;
	size_t pos;
	int ret = image_map(image, known, &own, &sh);

	if (ret)
		goto out;
	add_ranges(&body, sh, &mapped);
	pos = add_head(&head, sh->size, mapped);
	if (body.len) /* no range at all: body.p is NULL */
		buf_add(&head, body.p, body.len);
	buf_adds(&head, "    </BlockMap>\n</bmap>\n");
	hash_sha256_hex(head.p, head.len, hex);
	memcpy(head.p + pos, hex, SHA256_HEX_LEN);
	ret = write_map(bmap_path, &head);
out:
	sparsehash_release(&own);
	buf_release(&head);
	buf_release(&body);
	return ret;
}
