/*
 * Twins from the host's apt sources. They go through the same stages as the recipe's indexes
 * (sources_load_twins, indexes_fetch_twins: gpgv with each source's own key, Valid-Until,
 * rollback, checksums) and accel_select's same-source-version rule, so a twin is as trusted as
 * any package. Their messages are logged at info level at most: only the one line saying that
 * the host's sources could not be used is a warning.
 */
#include "twinsrc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/x.h"
#include "sources.h"

static int has_native_files(const struct indexes *ix)
{
	for (size_t i = 0; i < ix->n_files; i++)
		if (ix->files[i].native_tools)
			return 1;
	return 0;
}

/* `pick` over the files of `ix` marked for native tools, in their order. */
static int pick_from(const struct indexes *ix, const struct plan *p, struct plan *twins,
		     const char *from, twinsrc_pick_fn *pick)
{
	struct pkgindex *v = xcalloc(ix->n_files + 1, sizeof(*v));
	size_t i, n = 0;
	int ret;

	for (i = 0; i < ix->n_files; i++) {
		if (!ix->files[i].native_tools)
			continue;
		v[n].path = ix->files[i].path;
		v[n++].base = ix->releases[ix->files[i].release].src->uri;
	}
	ret = pick(v, n, p, twins, from);
	free(v);
	return ret;
}

/* The host's sources' indexes for `arch`; 1 when the apt root offers none (not a failure). */
static int load_host(struct sources *s, struct indexes *hix, const struct recipe *r,
		     const struct settings *st, fetch_items_fn *download, const char *arch)
{
	enum log_level old = log_cap_severity(LOG_INFO);
	int ret = sources_load_twins(s, r, st, arch);

	if (!ret && !s->n)
		ret = 1;
	if (!ret)
		ret = indexes_fetch_twins(hix, s, st, download);
	log_cap_severity(old);
	return ret;
}

static int from_host(struct plan *twins, const struct plan *p, const struct recipe *r,
		     const struct settings *st, fetch_items_fn *download, twinsrc_pick_fn *pick,
		     const char *arch)
{
	struct sources s = { 0 };
	struct indexes hix = { 0 };
	int ret = load_host(&s, &hix, r, st, download, arch);

	if (!ret)
		ret = pick_from(&hix, p, twins, "the host's apt sources", pick);
	if (ret == 1)
		log_info("native tools: the recipe's repositories lack '%s' and the host's apt sources "
			 "in '%s' offer none; every target program is emulated", arch, st->apt_root);
	else if (ret == -MKI_E_OFFLINE)
		log_info("native tools: offline, and the '%s' indexes of the host's apt sources are "
			 "not in the cache; every target program is emulated", arch);
	else if (ret && ret != -MKI_E_INTERRUPTED)
		log_warn("native tools: the host's apt sources in '%s' cannot be used for '%s' twins "
			 "(%s); every target program is emulated", st->apt_root, arch,
			 err_text(ret));
	else if (!ret && !twins->n)
		log_warn("native tools: the host's apt sources in '%s' have no '%s' build of the "
			 "plan's versions; every target program is emulated", st->apt_root, arch);
	indexes_release(&hix);
	sources_release(&s);
	return ret == -MKI_E_INTERRUPTED ? ret : 0;
}

int twinsrc_select(struct plan *twins, const struct indexes *ix, const struct plan *p,
		   const struct recipe *r, const struct settings *st, fetch_items_fn *download,
		   twinsrc_pick_fn *pick)
{
	const char *arch = indexes_native_arch(r, st);

	memset(twins, 0, sizeof(*twins));
	if (!arch || has_native_files(ix))
		return pick_from(ix, p, twins, "the recipe's repositories", pick);
	if (st->no_host_twins || !r->host_twins) {
		log_info("native tools: the recipe's repositories lack '%s' and %s leaves the "
			 "host's apt sources out; every target program is emulated", arch,
			 st->no_host_twins ? "--no-host-twins" : "'host_twins = false'");
		return 0;
	}
	return from_host(twins, p, r, st, download, pick, arch);
}

const char *twinsrc_origin(const struct indexes *ix)
{
	return has_native_files(ix) ? "recipe" : "host";
}
