/*
 * The image writer: the stage in the recipe's format (format.h) into a temporary file beside
 * the output, published by rename when complete, removed otherwise.
 */
#include "image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/sparsehash.h"
#include "sink.h"

/* The temporary's digests, as image_write_digests() says; -MKI_E_INTERRUPTED or logged. */
static int hash_image(struct sink *k, struct sparsehash *digests)
{
	struct stat st;
	int ret = fstat(k->fd, &st) < 0 ? -errno : 0;

	if (!ret)
		ret = sparsehash_file(k->fd, (uint64_t)st.st_size, digests);
	if (ret && ret != -MKI_E_INTERRUPTED)
		ret = log_errno(-MKI_E_IMAGE, "cannot read back '%s' to hash it: %s", k->tmp,
				ret == -ESTALE ? "it changed while being read" : strerror(-ret));
	return ret;
}

int image_write_digests(const struct staging *s, const struct image_params *p,
			struct sparsehash *digests)
{
	const struct format *f = format_find(p->im->format);
	double t0 = log_now();
	struct sink k;
	int ret;

	if (!f) {
		log_error("image format '%s' is not known", p->im->format);
		return -MKI_E_IMAGE;
	}
	sink_init_file(&k, p->output);
	ret = format_write(f, s, p, &k);
	if (!ret && digests && (digests->want_whole || digests->want_map))
		ret = hash_image(&k, digests);
	if (!ret && sink_commit(&k))
		ret = -MKI_E_IMAGE; /* logged */
	log_debug("image: committed (%.2fs)", log_now() - t0);
	if (ret == -MKI_E_INTERRUPTED && k.fd >= 0)
		log_error("interrupted: the unfinished %s '%s' is removed", f->noun, k.name);
	sink_release(&k);
	return ret;
}

int image_write(const struct staging *s, const struct image_params *p)
{
	return image_write_digests(s, p, NULL);
}

static unsigned le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (unsigned)p[3] << 24;
}

/* The superblock's UUID (ext2/3/4) or the boot sector's volume id (FAT), as blkid prints them. */
static int fs_uuid_of(const unsigned char *b, char out[37])
{
	const unsigned char *u = b + 1024 + 104;

	if (b[1024 + 56] == 0x53 && b[1024 + 57] == 0xef) {
		snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
			 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
			 u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
		return 0;
	}
	if (b[510] != 0x55 || b[511] != 0xaa)
		return -1;
	if (!memcmp(b + 82, "FAT32", 5) && b[66] == 0x29)
		u = b + 67;
	else if (!memcmp(b + 54, "FAT", 3) && b[38] == 0x29)
		u = b + 39;
	else
		return -1;
	snprintf(out, 37, "%04X-%04X", le32(u) >> 16, le32(u) & 0xffff);
	return 0;
}

int image_fs_uuid(const char *file, uint64_t offset, char out[37])
{
	unsigned char b[2048] = { 0 };
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : pread(fd, b, sizeof(b), (off_t)offset);

	if (fd >= 0)
		close(fd);
	out[0] = 0;
	return n < 512 ? -1 : fs_uuid_of(b, out);
}
