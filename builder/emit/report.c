#include "report.h"

#include <stdio.h>
#include <string.h>

#include "bootexport.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/url.h"

static void package_counts(struct buf *b, const struct plan *p)
{
	struct strv archs = { 0 };
	size_t i, j;

	for (i = 0; i < p->n; i++)
		if (!strv_contains(&archs, p->v[i].arch))
			strv_push(&archs, p->v[i].arch);
	buf_adds(b, "  \"packages\": { ");
	for (j = 0; j < archs.n; j++) {
		unsigned n = 0;

		for (i = 0; i < p->n; i++)
			n += !strcmp(p->v[i].arch, archs.v[j]);
		buf_adds(b, j ? ", " : "");
		json_key(b, archs.v[j]);
		buf_addf(b, "%u", n);
	}
	buf_addf(b, "%s\"total\": %zu },\n", archs.n ? ", " : "", p->n);
	strv_release(&archs);
}

/* ",\n  "worked_around": [ { "what": ..., "used_instead": ... } ]": log_warn_instead()'s. */
static void worked_around(struct buf *b)
{
	const struct log_workaround *w;
	size_t i, n = log_workarounds(&w);

	buf_adds(b, ",\n  \"worked_around\": [");
	for (i = 0; i < n; i++) {
		buf_adds(b, i ? ",\n    { \"what\": " : "\n    { \"what\": ");
		json_str(b, w[i].what);
		buf_adds(b, ", \"used_instead\": ");
		json_str(b, w[i].instead);
		buf_adds(b, " }");
	}
	buf_adds(b, n ? "\n  ]" : "]");
}

/*
 * What the build was, for a farm that reads the report alone: which mkimage, which epoch, which
 * architectures, the file system's UUID, the warnings' texts, the network and native tools.
 */
static void build_facts(struct buf *b, const struct report *rep, const struct plan *p)
{
	const char *const *warn;
	size_t i, n = log_warning_texts(&warn);

	buf_adds(b, ",\n  \"mkimage_version\": ");
	json_str(b, rep->version ? rep->version : "");
	buf_addf(b, ",\n  \"source_date_epoch\": %lld,\n  \"architectures\": [",
		 (long long)rep->source_date_epoch);
	for (i = 0; i < p->archs.n; i++) {
		buf_adds(b, i ? ", " : "");
		json_str(b, p->archs.v[i]);
	}
	buf_adds(b, "],\n  \"filesystem_uuid\": ");
	if (rep->fs_uuid[0])
		json_str(b, rep->fs_uuid);
	else
		buf_adds(b, "null");
	buf_adds(b, ",\n  \"warning_texts\": [");
	for (i = 0; i < n; i++) {
		buf_adds(b, i ? ",\n    " : "\n    ");
		json_str(b, warn[i]);
	}
	buf_adds(b, n ? "\n  ]" : "]");
	worked_around(b);
	if (rep->network)
		buf_addf(b, ",\n%s", rep->network);
	if (rep->native_tools)
		buf_addf(b, ",\n%s", rep->native_tools);
	if (rep->indexes)
		buf_addf(b, ",\n%s", rep->indexes);
}

/* ",\n  "stages": { "sources": 0.123, ... },\n": the stages that ran. */
static void stage_times(struct buf *b, const struct report *rep)
{
	int i, first = 1;

	buf_adds(b, ",\n  \"stages\": { ");
	for (i = 0; i < REPORT_STAGES; i++) {
		if (rep->stage_secs[i] < 0 || !rep->stage_names[i])
			continue;
		buf_adds(b, first ? "" : ", ");
		json_key(b, rep->stage_names[i]);
		buf_addf(b, "%.3f", rep->stage_secs[i]);
		first = 0;
	}
	buf_adds(b, " },\n");
}

int report_write_failure(const struct report_failure *f, const struct report *rep,
			 const struct recipe *r, const char *file)
{
	struct buf b = { 0 };
	size_t i;
	int ret;

	buf_adds(&b, "{\n  \"status\": ");
	json_str(&b, f->status);
	buf_adds(&b, ",\n  \"recipe\": ");
	json_str(&b, r->name);
	buf_adds(&b, ",\n  \"recipe_sha256\": ");
	json_str(&b, r->digest);
	if (rep->version) { /* which mkimage failed: a farm files the report with it */
		buf_adds(&b, ",\n  \"mkimage_version\": ");
		json_str(&b, rep->version);
	}
	buf_adds(&b, ",\n  \"stage\": ");
	if (f->stage)
		json_str(&b, f->stage);
	else
		buf_adds(&b, "null");
	buf_addf(&b, ",\n  \"exit_code\": %d,\n  \"errors\": [", f->exit_code);
	for (i = 0; f->errors && i < f->errors->n; i++) {
		buf_adds(&b, i ? ",\n    " : "\n    ");
		json_str(&b, f->errors->v[i]);
	}
	buf_adds(&b, f->errors && f->errors->n ? "\n  ]" : "]");
	stage_times(&b, rep);
	buf_addf(&b, "  \"total_seconds\": %.3f,\n  \"log\": ", rep->total_secs);
	if (f->log)
		json_str(&b, f->log);
	else
		buf_adds(&b, "null");
	buf_addf(&b, ",\n  \"warnings\": %u", rep->warnings);
	worked_around(&b);
	buf_adds(&b, "\n}\n");
	ret = fsutil_write_atomic(file, b.p, b.len);
	buf_release(&b);
	return ret;
}

int report_write(const struct report *rep, const struct plan *p, const struct recipe *r,
		 const char *file)
{
	struct buf b = { 0 };
	int ret;

	buf_adds(&b, "{\n  \"status\": \"ok\",\n  \"recipe\": ");
	json_str(&b, r->name);
	buf_adds(&b, ",\n  \"recipe_sha256\": ");
	json_str(&b, r->digest);
	stage_times(&b, rep);
	buf_addf(&b, "  \"total_seconds\": %.3f,\n", rep->total_secs);
	buf_addf(&b, "  \"download\": { \"bytes\": %llu, \"files\": %u, \"cached\": %u },\n",
		 (unsigned long long)rep->bytes_downloaded, rep->files_downloaded, rep->files_cached);
	package_counts(&b, p);
	buf_addf(&b, "  \"left_out\": { \"files\": %llu, \"directories\": %llu, \"bytes\": %llu },\n",
		 (unsigned long long)rep->filtered.files, (unsigned long long)rep->filtered.dirs,
		 (unsigned long long)rep->filtered.bytes);
	buf_adds(&b, "  \"image\": { \"path\": ");
	json_str(&b, rep->image);
	buf_addf(&b, ", \"bytes\": %llu, \"sha256\": ", (unsigned long long)rep->image_bytes);
	json_str(&b, rep->image_sha256);
	buf_adds(&b, " },\n");
	if (rep->overlays)
		buf_adds(&b, rep->overlays);
	if (rep->disk)
		buf_adds(&b, rep->disk);
	if (rep->update)
		buf_adds(&b, rep->update);
	if (rep->layer_outcome) {
		buf_adds(&b, "  \"layer_cache\": { \"outcome\": ");
		json_str(&b, rep->layer_outcome);
		buf_adds(&b, ", \"key\": ");
		json_str(&b, rep->layer_key);
		buf_adds(&b, " },\n");
	}
	if (rep->boot)
		bootexport_json(rep->boot, &b);
	buf_adds(&b, "  \"lock\": ");
	json_str(&b, rep->lock);
	buf_adds(&b, ",\n  \"sbom\": ");
	json_str(&b, rep->sbom);
	buf_addf(&b, ",\n  \"warnings\": %u", rep->warnings);
	build_facts(&b, rep, p);
	buf_adds(&b, "\n}\n");
	ret = fsutil_write_atomic(file, b.p, b.len);
	buf_release(&b);
	return ret;
}

void report_native_json(struct buf *out, int enabled, const struct plan *twins,
			const char *origin, const struct strv *python_emulated)
{
	struct strv hosts = { 0 };
	uint64_t bytes = 0;
	char host[256];
	size_t i;

	for (i = 0; i < twins->n; i++) {
		const struct plan_entry *e = &twins->v[i];

		bytes += e->size;
		if (e->url && !url_host(e->url, host, sizeof(host)) && !strv_contains(&hosts, host))
			strv_push(&hosts, host);
	}
	buf_addf(out, "  \"native_tools\": { \"enabled\": %s, \"twins_from\": ",
		 enabled ? "true" : "false");
	if (origin)
		json_str(out, !strcmp(origin, "host") ? "host apt sources" : "recipe");
	else
		buf_adds(out, "null");
	buf_addf(out, ", \"twin_packages\": %zu, \"twin_bytes\": %llu, \"hosts\": [", twins->n,
		 (unsigned long long)bytes);
	for (i = 0; i < hosts.n; i++) {
		buf_adds(out, i ? ", " : "");
		json_str(out, hosts.v[i]);
	}
	buf_adds(out, "], \"python_emulated\": ");
	if (python_emulated) {
		buf_adds(out, "[");
		for (i = 0; i < python_emulated->n; i++) {
			buf_adds(out, i ? ", " : "");
			json_str(out, python_emulated->v[i]);
		}
		buf_adds(out, "]");
	} else
		buf_adds(out, "null");
	buf_adds(out, " }");
	strv_release(&hosts);
}

void report_net_note(struct report_net *n, const char *host, const char *why)
{
	size_t i, u = n->n;

	for (i = 0; i < n->n && u == n->n; i++)
		u = !strcmp(n->v[i].host, host) ? i : n->n;
	if (u == n->n && n->n == REPORT_NET_HOSTS)
		return;
	if (u == n->n)
		snprintf(n->v[n->n++].host, sizeof(n->v[0].host), "%s", host);
	for (i = 0; i < REPORT_NET_WHYS && n->v[u].why[i]; i++)
		if (!strcmp(n->v[u].why[i], why))
			return;
	if (i < REPORT_NET_WHYS)
		n->v[u].why[i] = why;
	log_info("network: '%s' contacted for %s", host, why);
}

void report_net_json(const struct report_net *n, struct buf *out)
{
	size_t i, k;

	buf_adds(out, "  \"network\": [");
	for (i = 0; i < n->n; i++) {
		buf_adds(out, i ? ",\n    { \"host\": " : "\n    { \"host\": ");
		json_str(out, n->v[i].host);
		buf_adds(out, ", \"for\": [");
		for (k = 0; k < REPORT_NET_WHYS && n->v[i].why[k]; k++) {
			buf_adds(out, k ? ", " : "");
			json_str(out, n->v[i].why[k]);
		}
		buf_adds(out, "] }");
	}
	buf_adds(out, n->n ? "\n  ]" : "]");
}
