/*
 * The stages before the sandbox (stage.h): sources, indexes, the plan, room for the image, the
 * packages. Every download goes through here, so the record of which servers were contacted and
 * why (the report's "network") is kept here too.
 */
#include "stage.h"
#include "stage_ctx.h"
#include "sdk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "configure/accel.h"
#include "configure/bootcfg.h"
#include "image/raucsign.h"
#include "lib/err.h"
#include "lib/log.h"
#include "repo/twinsrc.h"
#include "resolve/resolve.h"

/*
 * Which servers the build contacted and why: an info line the first time a server is contacted
 * for a purpose, and the report's "network". The download functions handed to the repo family
 * take no context, so this record is the one piece of state the pipeline keeps of its own.
 */
static struct report_net net_use;

static void net_note(const struct fetch_stats *fs, const char *why)
{
	unsigned i;

	for (i = 0; i < fs->n_hosts; i++)
		report_net_note(&net_use, fs->hosts[i], why);
	if (fs->hosts_left_out)
		log_info("network: %u more servers contacted for %s", fs->hosts_left_out, why);
}

void stage_network_json(struct buf *out)
{
	report_net_json(&net_use, out);
}

/* fetch_items() for one purpose: the servers it contacted noted as contacted for `why`. */
static int fetch_noted(struct fetch_item *items, size_t n, const struct settings *st,
		       const char *step, struct fetch_stats *stats, const char *why)
{
	struct fetch_stats own = { 0 };
	int ret = fetch_items(items, n, st, step, &own);

	net_note(&own, why);
	if (stats) {
		stats->bytes_downloaded += own.bytes_downloaded;
		stats->files_downloaded += own.files_downloaded;
		stats->files_cached += own.files_cached;
	}
	return ret;
}

#define WHY_TWINS_HOST "native tools (the host's apt sources)"

static int fetch_indexes(struct fetch_item *items, size_t n, const struct settings *st,
			 const char *step, struct fetch_stats *stats)
{
	return fetch_noted(items, n, st, step, stats, "indexes");
}

static int fetch_twin_indexes(struct fetch_item *items, size_t n, const struct settings *st,
			      const char *step, struct fetch_stats *stats)
{
	return fetch_noted(items, n, st, step, stats, WHY_TWINS_HOST);
}

int stage_sources(struct build_opts *o, const struct recipe *r, struct build *b)
{
	return sources_load(&b->sources, r, &o->st);
}

int stage_indexes(struct build_opts *o, const struct recipe *r, struct build *b)
{
	return indexes_fetch(&b->indexes, &b->sources, r, &o->st, fetch_indexes);
}

/*
 * Without SOURCE_DATE_EPOCH every timestamp comes from the newest signed Release Date, so the
 * same indexes (the same lock) give the same image, whenever it is built.
 */
static void default_sde(struct build_opts *o, const struct indexes *ix)
{
	if (o->st.source_date_epoch >= 0)
		return;
	o->st.source_date_epoch = indexes_newest_date(ix);
	log_debug("SOURCE_DATE_EPOCH not set: using %lld from the newest Release date",
		  (long long)o->st.source_date_epoch);
}

int stage_resolve(struct build_opts *o, const struct recipe *r, struct build *b)
{
	int ret;

	default_sde(o, &b->indexes);
	ret = resolve_plan(&b->plan, r, &b->indexes, &o->st);
	if (ret == -MKI_E_RESOLVE && b->sdk)
		sdk_explain_unresolved();

	if (!ret && o->plan) {
		struct buf out = { 0 };

		plan_format(&b->plan, o->json, &out);
		fputs(out.len ? out.p : "", stdout);
		buf_release(&out);
		return BUILD_DONE;
	}
	if (!ret && o->lock_only) {
		ret = resolve_write_lock(&b->plan, r, &b->indexes, NULL, NULL, o->st.lock_file);
		if (!ret)
			log_info("lock written to '%s'", o->st.lock_file);
		return ret ? ret : BUILD_DONE;
	}
	if (!ret && o->until > ST_RESOLVE)
		ret = bootcfg_check_plan(&b->plan, r); /* before anything is downloaded */
	return ret;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

/*
 * Free space for the image on the output's filesystem, before anything is downloaded: about the
 * packages' Installed-Size plus a tenth (what the image's files take; a fixed size is written
 * sparse). Not a promise, a guard against the hour-long build that cannot write its image.
 */
static int check_space(const struct build_opts *o, const struct plan *p)
{
	char *dir = build_parent_dir(o->output);
	uint64_t need = plan_installed_bytes(p), avail;
	struct statvfs vfs;
	int ret = 0;

	need += need / 10;
	if (statvfs(dir, &vfs) == 0) {
		avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		if (avail < need)
			ret = log_errno(-MKI_E_NOSPACE, "not enough free space for the image in '%s': "
					"about %.1f MiB needed (the packages' Installed-Size plus a "
					"tenth), %.1f MiB free; free some space or choose another "
					"output with -o", dir, mib(need), mib(avail));
		else
			log_debug("free space in '%s': %.1f MiB, about %.1f MiB needed", dir,
				  mib(avail), mib(need));
	}
	free(dir);
	return ret;
}

/* Before anything is downloaded: room for the image, when there will be one. */
/* The update's keys, which OpenSSL reads: a wrong one fails here, not after the whole build. */
static int check_update_keys(const struct recipe *r)
{
	struct raucsign_keys k = { r->update.cert, r->update.key, r->update.keyring };

	return r->update.set ? raucsign_check(&k) : 0;
}

int stage_room(struct build_opts *o, const struct recipe *r, struct build *b)
{
	int ret = o->until >= ST_IMAGE ? check_update_keys(r) : 0;

	return !ret && o->until >= ST_IMAGE ? check_space(o, &b->plan) : ret;
}

/*
 * The plan's packages, then their host-arch twins for the native tools. The twins only make
 * configuring faster: when they cannot be had, the build goes on emulating everything, saying so.
 */
int stage_fetch(struct build_opts *o, const struct recipe *r, struct build *b)
{
	struct fetch_stats ts = { 0 };
	int ret = fetch_plan(&b->plan, &o->st, &b->fetch);

	net_note(&b->fetch, "packages");
	if (ret || o->until < ST_CONFIGURE || o->st.no_native_tools)
		return ret;
	ret = twinsrc_select(&b->twins, &b->indexes, &b->plan, r, &o->st, fetch_twin_indexes,
			     accel_select);
	if (!ret && b->twins.n) {
		enum log_level old = log_cap_severity(LOG_INFO); /* one warning below says it all */

		ret = fetch_plan(&b->twins, &o->st, &ts);
		log_cap_severity(old);
		net_note(&ts, strcmp(twinsrc_origin(&b->indexes), "host") ? "native tools"
									   : WHY_TWINS_HOST);
	}
	b->fetch.bytes_downloaded += ts.bytes_downloaded;
	b->fetch.files_downloaded += ts.files_downloaded;
	b->fetch.files_cached += ts.files_cached;
	if (ret == -MKI_E_INTERRUPTED)
		return ret;
	if (ret)
		log_warn_instead("emulation for every target program (the same image, slower)",
				 "native tools: the host-architecture packages are not available "
				 "(%s)", err_text(ret));
	return 0;
}
