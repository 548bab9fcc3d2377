#include "format.h"

#include <errno.h>
#include <string.h>

#include "ext4w.h"
#include "lib/err.h"
#include "squashfs.h"
#include "tarout.h"

/* The first is the default: what a recipe without image.format gets. */
static const struct format formats[] = {
	{ "ext4", "image", 1, ext4w_estimate, ext4w_write },
	{ "tar", "archive", 0, tarout_estimate, tarout_write },
	{ "squashfs", "image", 0, squashfs_estimate, squashfs_write },
};

/* How messages list the formats; the table above in words. */
#define FORMAT_NAMES "\"ext4\", \"tar\" or \"squashfs\""

const struct format *format_find(const char *name)
{
	size_t i;

	if (!name)
		return &formats[0];
	for (i = 0; i < sizeof(formats) / sizeof(*formats); i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

int format_recipe_check(const char *name, const char **known)
{
	const struct format *f = format_find(name);

	*known = FORMAT_NAMES;
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
