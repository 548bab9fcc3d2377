/*
 * The defaults leave a wide margin over Debian bookworm (main, amd64, measured): the Packages file
 * is 48 MiB, its longest line 74 KiB and stanza 75 KiB (librust-winapi-dev), at most 29 fields
 * and 1 603 entries in one field (the same package's Provides); the largest .deb is 1.4 GiB
 * (qgis-api-doc), the largest unpacked 5.4 GiB (a -dbg kernel image). xz -9, the most any
 * Debian tool asks for, needs 65 MiB to decompress; dpkg-deb's default 9 MiB.
 */
#include "runlimits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "log.h"
#include "runlimits_internal.h"

#define KIB 1024ull
#define MIB (KIB << 10)
#define GIB (MIB << 10)
#define TIB (GIB << 10)
#define MAX_SIZE (1ull << 62)        /* 4 EiB: beyond any disk, far below overflow */
#define MAX_COUNT 1000000000ull

struct limit_def {
	const char *name;
	int is_size; /* bytes (K/M/G/T suffixes) rather than a count */
	uint64_t def;
	const char *what;
};

static const struct limit_def defs[LIMIT_N] = {
	[LIMIT_RELEASE_SIZE] = { "release-size", 1, 64 * MIB,
				 "InRelease, Release or Release.gpg as downloaded" },
	[LIMIT_INDEX_SIZE] = { "index-size", 1, 1 * GIB,
			       "one Packages file as its Release declares it (before download)" },
	[LIMIT_INDEX_UNPACKED] = { "index-unpacked", 1, 1 * GIB,
				   "one Packages file decompressed" },
	[LIMIT_LINE] = { "line", 1, 1 * MIB, "one line of a Packages, Release or control file" },
	[LIMIT_STANZA] = { "stanza", 1, 4 * MIB, "one stanza of such a file" },
	[LIMIT_FIELDS] = { "fields", 0, 256, "fields in one stanza" },
	[LIMIT_RELATIONS] = { "relations", 0, 10000,
			      "entries of one Depends, Provides, Conflicts... field" },
	[LIMIT_DEB_SIZE] = { "deb-size", 1, 8 * GIB,
			     "one .deb as its index declares it (before download)" },
	[LIMIT_DEB_CONTROL] = { "deb-control", 1, 64 * MIB, "control.tar of one .deb, unpacked" },
	[LIMIT_DEB_DATA] = { "deb-data", 1, 32 * GIB, "data.tar of one .deb, unpacked" },
	[LIMIT_DEB_ENTRIES] = { "deb-entries", 0, 500000, "files, directories... in one .deb" },
	[LIMIT_STAGING_SIZE] = { "staging-size", 1, 128 * GIB,
				 "bytes unpacked, then allocated in the tree after scripts" },
	[LIMIT_STAGING_ENTRIES] = { "staging-entries", 0, 4000000,
				    "entries unpacked, then in the tree after scripts" },
	[LIMIT_BOOT_SIZE] = { "boot-size", 1, 4 * GIB,
			      "boot files export_boot copies, holes included" },
	[LIMIT_XZ_MEMORY] = { "xz-memory", 1, 128 * MIB,
			      "memory of one xz or lzma decoder (xz -9 needs 65M)" },
	[LIMIT_PROCESSES] = { "processes", 0, 2048,
			      "processes and threads one maintainer script or hook step runs at once" },
	[LIMIT_MEMORY] = { "memory", 1, 4 * GIB,
			   "memory one build step holds: processes, /tmp, /run, /dev/shm, IPC" },
	[LIMIT_DISK_SIZE] = { "disk-size", 1, 64 * GIB,
			      "a whole disk (the recipe's disk section), holes included" },
	[LIMIT_LOG_SIZE] = { "log-size", 1, 256 * MIB,
			     "the build log NAME.log (scripts' output included)" },
};

void runlimits_init(struct limits *l)
{
	int i;

	for (i = 0; i < LIMIT_N; i++)
		l->v[i] = defs[i].def;
}

uint64_t runlimits_get(const struct limits *l, enum limit_id id)
{
	return l && l->v[id] ? l->v[id] : defs[id].def;
}

const char *runlimits_name(enum limit_id id)
{
	return defs[id].name;
}

int runlimits_find(const char *name)
{
	int i;

	for (i = 0; i < LIMIT_N; i++)
		if (!strcmp(name, defs[i].name))
			return i;
	return -1;
}

/* "K", "KB", "KiB" (any case) -> 1024, and so on for M, G, T; "" -> 1; anything else -> 0. */
static uint64_t unit_of(const char *s)
{
	uint64_t mult;

	switch (s[0]) {
	case 0: return 1;
	case 'k': case 'K': mult = KIB; break;
	case 'm': case 'M': mult = MIB; break;
	case 'g': case 'G': mult = GIB; break;
	case 't': case 'T': mult = TIB; break;
	default: return 0;
	}
	return !s[1] || !strcasecmp(s + 1, "B") || !strcasecmp(s + 1, "iB") ? mult : 0;
}

/* A number >= 1 with a unit suffix for sizes (unit_of) or none for counts, at most `max`. */
static int parse_number(const char *s, int is_size, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	uint64_t mult;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -MKI_E_USAGE; /* also refuses "-1", " 1" and "" */
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -MKI_E_USAGE;
	mult = is_size ? unit_of(end) : !*end;
	if (!mult || !v || v > max / mult)
		return -MKI_E_USAGE;
	*out = (uint64_t)v * mult;
	return 0;
}

int runlimits_parse_value(enum limit_id id, const char *s, uint64_t *out)
{
	return parse_number(s, defs[id].is_size, defs[id].is_size ? MAX_SIZE : MAX_COUNT, out);
}

int runlimits_parse_size(const char *s, uint64_t *out)
{
	return parse_number(s, 1, MAX_SIZE, out);
}

/* A limit spelt within 3 edits of `name`, else one containing it ("entries"), or NULL. */
static const char *closest(const char *name)
{
	unsigned best = 4, d;
	const char *near = NULL;
	int i;

	for (i = 0; i < LIMIT_N; i++)
		if ((d = str_distance(name, defs[i].name)) < best) {
			best = d;
			near = defs[i].name;
		}
	for (i = 0; i < LIMIT_N && !near && strlen(name) >= 3; i++)
		if (strstr(defs[i].name, name))
			near = defs[i].name;
	return near;
}

static int unknown_limit(const char *name)
{
	const char *near = closest(name);
	struct buf all = { 0 };
	int i;

	for (i = 0; i < LIMIT_N; i++)
		buf_addf(&all, "%s%s", i ? ", " : "", defs[i].name);
	if (near)
		log_error("--limit: unknown limit '%s' (did you mean '%s'?)", name, near);
	else
		log_error("--limit: unknown limit '%s' (known: %s)", name, all.p);
	buf_release(&all);
	return -MKI_E_USAGE;
}

static int bad_value(enum limit_id id, const char *value)
{
	if (defs[id].is_size)
		log_error("--limit %s: '%s' is not a size (a number of bytes >= 1, or with K, M, G "
			  "or T: 512M, 4G)", defs[id].name, value);
	else
		log_error("--limit %s: '%s' is not a count (a whole number >= 1)", defs[id].name,
			  value);
	return -MKI_E_USAGE;
}

int runlimits_set(struct limits *l, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char *name;
	uint64_t v;
	int id;

	if (!eq) {
		log_error("--limit takes NAME=VALUE (e.g. --limit deb-data=64G), not '%s'", spec);
		return -MKI_E_USAGE;
	}
	name = xstrndup(spec, (size_t)(eq - spec));
	id = runlimits_find(name);
	if (id < 0) {
		unknown_limit(name);
		free(name);
		return -MKI_E_USAGE;
	}
	free(name);
	if (runlimits_parse_value((enum limit_id)id, eq + 1, &v))
		return bad_value((enum limit_id)id, eq + 1);
	l->v[id] = v;
	return 0;
}

struct limit_text runlimits_format(enum limit_id id, uint64_t v)
{
	static const char units[] = "KMGT";
	struct limit_text t;
	int u = -1;

	while (defs[id].is_size && v >= KIB && !(v % KIB) && u < 3) {
		v /= KIB;
		u++;
	}
	if (u < 0)
		snprintf(t.s, sizeof(t.s), "%llu", (unsigned long long)v);
	else
		snprintf(t.s, sizeof(t.s), "%llu%c", (unsigned long long)v, units[u]);
	return t;
}

struct limit_text runlimits_hint(const struct limits *l, enum limit_id id)
{
	struct limit_text t;

	snprintf(t.s, sizeof(t.s), "limit '%s' is %.32s; raise it with --limit %s=%s if the source "
		 "is trusted", defs[id].name, runlimits_format(id, runlimits_get(l, id)).s, defs[id].name,
		 defs[id].is_size ? "SIZE" : "COUNT");
	return t;
}

void runlimits_help(struct buf *out)
{
	int i;

	for (i = 0; i < LIMIT_N; i++)
		buf_addf(out, "      %-16s %7s  %s\n", defs[i].name,
			 runlimits_format((enum limit_id)i, defs[i].def).s, defs[i].what);
}
