/*
 * Not built yet: fails loudly with "not yet supported" rather than faking a result.
 * The stage's real implementation replaces this whole file.
 */
#include <string.h>

#include "err.h"
#include "log.h"
#include "hooks.h"

int hooks_run(struct stage *s, const struct plan *p, const struct recipe *r,
	      const struct settings *st)
{
	log_error("configuring packages and running hooks is not yet supported in this version of mkimage");
	return -MKI_E_NOTYET;
}
