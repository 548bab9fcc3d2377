#include "format.h"

#include <errno.h>
#include <string.h>

#include "ext4w.h"
#include "fat.h"
#include "lib/err.h"
#include "recipe/fstype.h"
#include "squashfs.h"
#include "tarout.h"

#define N_FORMATS (sizeof(formats) / sizeof(*formats))

/* The first is the default: what a recipe without image.format gets. */
static const struct format formats[] = {
	{ "ext4", "image", 1, ext4w_estimate, ext4w_write, .image = 1, .partition = 1,
	  .fills = 1, .too_small = "its tree: raise its size", .size_back = ext4w_size_back },
	{ "tar", "archive", 0, tarout_estimate, tarout_write, .image = 1 },
	{ "squashfs", "image", 0, squashfs_estimate, squashfs_write, .image = 1, .partition = 1,
	  .too_small = "its squashfs: raise its size, or choose a stronger compression",
	  .size_back = squashfs_size_back },
	{ "vfat", "image", 1, fat_format_estimate, fat_format_write, .partition = 1,
	  .sized_first = 1, .fills = 1 },
};

const struct format *format_find(const char *name)
{
	size_t i;

	if (!name)
		return &formats[0];
	for (i = 0; i < N_FORMATS; i++)
		if (formats[i].image && !strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

const struct format *format_partition(enum partition_format f)
{
	size_t i;

	for (i = 0; i < N_FORMATS; i++)
		if (formats[i].partition && !strcmp(formats[i].name, fstype_get(f)->name))
			return &formats[i];
	return NULL;
}

int format_recipe_check(const char *name, struct buf *known)
{
	const struct format *f = format_find(name);
	size_t i, n = 0, k = 0;

	for (i = 0; i < N_FORMATS; i++)
		n += formats[i].image;
	for (i = 0; !f && i < N_FORMATS; i++)
		if (formats[i].image)
			buf_addf(known, "%s\"%s\"", !k++ ? "" : k == n ? " or " : ", ",
				 formats[i].name);
	return f ? f->labelled : -ENOENT;
}

/* An errno from a writer (already logged) is still an image failure to the caller: exit 8. */
static int image_code(int ret)
{
	return ret > -MKI_E_BASE && ret < 0 ? -MKI_E_IMAGE : ret;
}

int format_estimate(const struct format *f, const struct staging *s, const struct image_params *p,
		    uint64_t *bytes)
{
	struct imgtree t;
	int ret = imgtree_build(&t, s, p);

	if (ret)
		return image_code(ret);
	ret = f->estimate(&t, p, bytes);
	imgtree_release(&t);
	return image_code(ret);
}

int format_write(const struct format *f, const struct staging *s, const struct image_params *p,
		 struct sink *k)
{
	struct imgtree t;
	int ret = imgtree_build(&t, s, p);

	if (ret)
		return image_code(ret);
	ret = f->write(&t, p, k);
	imgtree_release(&t);
	return image_code(ret);
}
