#include "plan.h"

#include <stdlib.h>
#include <string.h>

static void entry_release(struct plan_entry *e)
{
	free(e->name);
	free(e->arch);
	free(e->version);
	free(e->multi_arch);
	free(e->priority);
	free(e->section);
	free(e->maintainer);
	free(e->installed_size);
	free(e->source);
	free(e->source_version);
	free(e->url);
	free(e->path);
	free(e->depends);
}

void plan_release(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		entry_release(&p->v[i]);
	free(p->v);
	free(p->primary);
	strv_release(&p->archs);
	memset(p, 0, sizeof(*p));
}

char *plan_entry_dpkg_name(const struct plan_entry *e)
{
	if (e->multi_arch && !strcmp(e->multi_arch, "same"))
		return xasprintf("%s:%s", e->name, e->arch);
	return xstrdup(e->name);
}
