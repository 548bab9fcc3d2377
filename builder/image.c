/*
 * Not built yet: fails loudly with "not yet supported" rather than faking a result.
 * The stage's real implementation replaces this whole file.
 */
#include <string.h>

#include "err.h"
#include "log.h"
#include "image.h"

int image_write(const struct stage *s, const struct image_params *p)
{
	log_error("writing the image is not yet supported in this version of mkimage");
	return -MKI_E_NOTYET;
}
