/*
 * The image writer: the stage in the recipe's format (format.h) into a temporary file beside
 * the output, published by rename when complete, removed otherwise.
 */
#include "image.h"

#include "format.h"
#include "lib/err.h"
#include "lib/log.h"
#include "sink.h"

int image_write(const struct stage *s, const struct image_params *p)
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
	if (!ret && sink_commit(&k))
		ret = -MKI_E_IMAGE; /* logged */
	log_debug("image: committed (%.2fs)", log_now() - t0);
	if (ret == -MKI_E_INTERRUPTED && k.fd >= 0)
		log_error("interrupted: the unfinished %s '%s' is removed", f->noun, k.name);
	sink_release(&k);
	return ret;
}
