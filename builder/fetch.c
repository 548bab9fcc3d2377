/*
 * Not built yet: fails loudly with "not yet supported" rather than faking a result.
 * The stage's real implementation replaces this whole file.
 */
#include <string.h>

#include "err.h"
#include "log.h"
#include "fetch.h"

int fetch_plan(struct plan *p, const struct settings *st, struct fetch_stats *stats)
{
	log_error("downloading packages is not yet supported in this version of mkimage");
	return -MKI_E_NOTYET;
}
