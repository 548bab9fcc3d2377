/*
 * Not built yet: fails loudly with "not yet supported" rather than faking a result.
 * The stage's real implementation replaces this whole file.
 */
#include <string.h>

#include "err.h"
#include "log.h"
#include "unpack.h"

int unpack_plan(struct stage *out, const struct plan *p, const struct recipe *r,
		const struct settings *st)
{
	memset(out, 0, sizeof(*out));
	log_error("unpacking packages is not yet supported in this version of mkimage");
	return -MKI_E_NOTYET;
}

void stage_release(struct stage *s)
{
}
