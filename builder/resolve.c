/*
 * Not built yet: fails loudly with "not yet supported" rather than faking a result.
 * The stage's real implementation replaces this whole file.
 */
#include <string.h>

#include "err.h"
#include "log.h"
#include "resolve.h"

int resolve_plan(struct plan *out, const struct recipe *r, const struct indexes *ix,
		 const struct settings *st)
{
	log_error("resolving packages is not yet supported in this version of mkimage");
	return -MKI_E_NOTYET;
}

int resolve_write_lock(const struct plan *p, const struct recipe *r, const struct indexes *ix,
		       const char *file)
{
	log_error("writing a lock file is not yet supported in this version of mkimage");
	return -MKI_E_NOTYET;
}
