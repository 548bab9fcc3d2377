/*
 * Not built yet: fails loudly with "not yet supported" rather than faking a result.
 * The stage's real implementation replaces this whole file.
 */
#include <string.h>

#include "err.h"
#include "log.h"
#include "indexes.h"

int indexes_fetch(struct indexes *out, const struct sources *s, const struct recipe *r,
		  const struct settings *st)
{
	memset(out, 0, sizeof(*out));
	log_error("fetching repository indexes is not yet supported in this version of mkimage");
	return -MKI_E_NOTYET;
}

void indexes_release(struct indexes *ix)
{
}
