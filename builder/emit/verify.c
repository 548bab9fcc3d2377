#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"

/* The first field in which two entries differ, or NULL. */
static const char *entry_diff(const struct manifest_entry *x, const struct manifest_entry *y)
{
	size_t i;

	if (x->type != y->type)
		return "type";
	if (x->mode != y->mode)
		return "mode";
	if (x->uid != y->uid || x->gid != y->gid)
		return "owner";
	if (x->mtime != y->mtime)
		return "mtime";
	if (x->size != y->size)
		return "size";
	if (x->major != y->major || x->minor != y->minor)
		return "device number";
	if ((x->target || y->target) && (!x->target || !y->target || strcmp(x->target, y->target)))
		return "link target";
	if (x->n_xattrs != y->n_xattrs)
		return "xattrs";
	for (i = 0; i < x->n_xattrs; i++)
		if (strcmp(x->xattrs[i].name, y->xattrs[i].name) || x->xattrs[i].len != y->xattrs[i].len ||
		    memcmp(x->xattrs[i].value, y->xattrs[i].value, x->xattrs[i].len))
			return "xattrs";
	return NULL;
}

static int same_contents(const char *root_a, const char *root_b, const char *path)
{
	char ha[65] = "", hb[65] = "";
	char *pa = xasprintf("%s/%s", root_a, path), *pb = xasprintf("%s/%s", root_b, path);
	int same = !hash_file_hex(pa, HASH_SHA256, ha) && !hash_file_hex(pb, HASH_SHA256, hb) &&
		   !strcmp(ha, hb);

	free(pa);
	free(pb);
	return same;
}

/* Walk both sorted manifests in step; log the first difference. 1 if one was found. */
static int first_tree_diff(const struct staging *a, const struct staging *b)
{
	size_t i = 0, j = 0;
	const char *field;
	int c;

	while (i < a->manifest.n || j < b->manifest.n) {
		const struct manifest_entry *x = i < a->manifest.n ? a->manifest.v[i] : NULL;
		const struct manifest_entry *y = j < b->manifest.n ? b->manifest.v[j] : NULL;

		c = !x ? 1 : !y ? -1 : strcmp(x->path, y->path);
		if (c) {
			log_error("not reproducible: '/%s' exists only in the %s build",
				  c < 0 ? x->path : y->path, c < 0 ? "first" : "second");
			return 1;
		}
		field = entry_diff(x, y);
		if (!field && x->type == MF_REG && !same_contents(a->root, b->root, x->path))
			field = "contents";
		if (field) {
			log_error("not reproducible: '/%s' differs in its %s", x->path, field);
			return 1;
		}
		i++;
		j++;
	}
	return 0;
}

static int64_t first_byte_diff(const char *fa, const char *fb)
{
	char *ba = xmalloc(1 << 16), *bb = xmalloc(1 << 16);
	int a = open(fa, O_RDONLY | O_CLOEXEC), b = open(fb, O_RDONLY | O_CLOEXEC);
	int64_t off = 0, found = -1;
	ssize_t na, nb, k;

	while (a >= 0 && b >= 0 && found < 0) {
		na = read(a, ba, 1 << 16);
		nb = read(b, bb, 1 << 16);
		if (na <= 0 && nb <= 0)
			break;
		for (k = 0; k < (na < nb ? na : nb) && ba[k] == bb[k]; k++)
			;
		if (k < na || k < nb)
			found = off + k;
		off += na;
	}
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	free(ba);
	free(bb);
	return found;
}

int verify_builds(const struct staging *a, const char *image_a, const struct staging *b,
		  const char *image_b)
{
	int64_t off = first_byte_diff(image_a, image_b);

	if (off < 0) {
		log_info("reproducible: a second build gave a byte-identical image");
		return 0;
	}
	if (!first_tree_diff(a, b))
		log_error("not reproducible: the trees agree but the images differ from byte %" PRId64
			  " (block %" PRId64 " of 4 KiB): the image writer is at fault",
			  off, off / 4096);
	return -MKI_E_IMAGE;
}
