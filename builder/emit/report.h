/* The build report: what a CI log reader wants to know, as JSON beside the image. */
#ifndef MKI_REPORT_H
#define MKI_REPORT_H

#include <stdint.h>

#include "debian/pathfilter.h"
#include "debian/plan.h"
#include "recipe/recipe.h"

#define REPORT_STAGES 7

struct bootexport;

struct report {
	const char *stage_names[REPORT_STAGES];
	double stage_secs[REPORT_STAGES]; /* wall time per stage; < 0: not run */
	double total_secs;
	uint64_t bytes_downloaded;
	unsigned files_downloaded, files_cached;
	struct pathfilter_count filtered; /* left out of the tree by the path filters */
	uint64_t image_bytes;   /* apparent size of the image file */
	char image_sha256[65];
	const char *image, *lock, *sbom;
	unsigned warnings;
	const char *overlays;                  /* from overlay_report_json(); NULL: none */
	const char *disk;                      /* the disk's member (image/disk.h); NULL: none */
	const char *update;                    /* the update bundle's member; NULL: none */
	const struct bootexport *boot;         /* image.export_boot; reported once committed */
	const char *layer_outcome, *layer_key; /* the layer cache (layer.h); NULL: not reached */

	/* what a farm reads besides (report_write's "build facts", mkimage(1) BUILD REPORT) */
	const char *version;                   /* mkimage's own */
	int64_t source_date_epoch;             /* the effective epoch every timestamp is */
	char fs_uuid[37];                      /* the image's file system; "": none (tar, disk) */
	const char *network;                   /* the "network" member (stage_fetch.c); NULL: none */
	const char *native_tools;              /* report_native_json()'s member; NULL: none */
	const char *indexes;                   /* suites built from their last verified indexes
						  or left out (a mirror mid-sync); NULL: none */
};

/* Which servers a build contacted and why (string literals): the report's "network". */
#define REPORT_NET_HOSTS 32
#define REPORT_NET_WHYS 4
struct report_net {
	struct {
		char host[256];
		const char *why[REPORT_NET_WHYS];
	} v[REPORT_NET_HOSTS];
	size_t n;
};

/**
 * Note that `host` (host[:port]) was contacted for `why` (a string literal, borrowed for good):
 * an info line the first time for each pair. Beyond REPORT_NET_HOSTS hosts or REPORT_NET_WHYS
 * purposes a host is not recorded.
 */
void report_net_note(struct report_net *n, const char *host, const char *why);
/** The "network" member into `out`: each server and what it was contacted for. */
void report_net_json(const struct report_net *n, struct buf *out);

/** How a build that did not succeed ended, for report_write_failure(). */
struct report_failure {
	const char *status;        /* "failed" or "interrupted" */
	const char *stage;         /* the step that failed (pipeline.c's names); NULL: not known */
	int exit_code;             /* the process's exit status */
	const struct strv *errors; /* the messages logged at error level (log_errors()) */
	const char *log;           /* the build log's path; NULL: none */
};

/**
 * Write the report of a build that failed or was interrupted to `file` atomically: status,
 * stage, exit code, the error messages, the stages' times so far from `rep`, the log's path.
 */
int report_write_failure(const struct report_failure *f, const struct report *rep,
			 const struct recipe *r, const char *file);

/**
 * The "native_tools" member into `out`: `enabled` (0 with --no-native-tools), where the twins
 * came from (`origin`: "host" for the host's apt sources, any other the recipe's; NULL when no
 * twin was used), their count, bytes and hosts from `twins`.
 */
void report_native_json(struct buf *out, int enabled, const struct plan *twins,
			const char *origin, const struct strv *python_emulated);

/** Write `rep` (with package counts per architecture from `p`) to `file` atomically. */
int report_write(const struct report *rep, const struct plan *p, const struct recipe *r,
		 const char *file);

#endif
