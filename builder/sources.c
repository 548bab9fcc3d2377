/*
 * Not built yet: fails loudly with "not yet supported" rather than faking a result.
 * The stage's real implementation replaces this whole file.
 */
#include <string.h>

#include "err.h"
#include "log.h"
#include "sources.h"

int sources_load(struct sources *out, const struct recipe *r, const struct settings *st)
{
	memset(out, 0, sizeof(*out));
	log_error("reading apt sources is not yet supported in this version of mkimage");
	return -MKI_E_NOTYET;
}

void sources_release(struct sources *s)
{
}
