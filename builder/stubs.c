/*
 * Stages that are not built yet. Each fails loudly with "not yet supported" rather than faking a
 * result; the stage's own file replaces its stub here when it lands.
 */
#include <string.h>

#include "err.h"
#include "fetch.h"
#include "hooks.h"
#include "image.h"
#include "indexes.h"
#include "log.h"
#include "resolve.h"
#include "sources.h"
#include "unpack.h"

static int notyet(const char *what)
{
	log_error("%s is not yet supported in this version of mkimage", what);
	return -MKI_E_NOTYET;
}

int sources_load(struct sources *out, const struct recipe *r, const struct settings *st)
{
	memset(out, 0, sizeof(*out));
	return notyet("reading apt sources");
}

void sources_release(struct sources *s)
{
}

int indexes_fetch(struct indexes *out, const struct sources *s, const struct recipe *r,
		  const struct settings *st)
{
	memset(out, 0, sizeof(*out));
	return notyet("fetching repository indexes");
}

void indexes_release(struct indexes *ix)
{
}

int resolve_plan(struct plan *out, const struct recipe *r, const struct indexes *ix,
		 const struct settings *st)
{
	return notyet("resolving packages");
}

int resolve_write_lock(const struct plan *p, const struct recipe *r, const struct indexes *ix,
		       const char *file)
{
	return notyet("writing a lock file");
}

int fetch_plan(struct plan *p, const struct settings *st, struct fetch_stats *stats)
{
	return notyet("downloading packages");
}

int unpack_plan(struct stage *out, const struct plan *p, const struct recipe *r,
		const struct settings *st)
{
	memset(out, 0, sizeof(*out));
	return notyet("unpacking packages");
}

void stage_release(struct stage *s)
{
}

int hooks_run(struct stage *s, const struct plan *p, const struct recipe *r,
	      const struct settings *st)
{
	return notyet("configuring packages and running hooks");
}

int image_write(const struct stage *s, const struct image_params *p)
{
	return notyet("writing the image");
}
