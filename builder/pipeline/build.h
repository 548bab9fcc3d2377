/*
 * A build: what the command line asks (struct build_opts, filled by main.c) and what the stages
 * give each other (struct build). The pipeline family sits above every other family: it is the
 * one place besides main.c that may include them all, so it wires what a family needs from one
 * it may not include (builder/README.md).
 */
#ifndef MKI_BUILD_H
#define MKI_BUILD_H

#include <stdint.h>
#include <sys/types.h>

#include "debian/dep5.h"
#include "debian/plan.h"
#include "emit/bootexport.h"
#include "emit/report.h"
#include "image/params.h"
#include "image/rauc.h"
#include "layer/layer.h"
#include "lib/buf.h"
#include "lib/settings.h"
#include "lib/sparsehash.h"
#include "repo/indexes.h"
#include "repo/sources.h"
#include "store/fetch.h"
#include "tree/staging.h"

/* The stages --until names and the report times, in order (pipeline.c's table). */
enum stage_id { ST_SOURCES, ST_INDEXES, ST_RESOLVE, ST_FETCH, ST_UNPACK, ST_CONFIGURE, ST_IMAGE };

/*
 * A stage's positive result, beside 0 and the negative error codes: the build is complete before
 * the image (--until, --plan, --lock); pipeline_finish() turns it into success.
 */
enum { BUILD_DONE = 1 };

/* What the command line asks (mkimage(1)); main.c fills it, the pipeline completes `st`. */
struct build_opts {
	struct settings st;
	const char *recipe;
	char *output;       /* -o; else the recipe's, else images/NAME.FORMAT (pipeline_setup) */
	double started;
	int check, plan, lock_only, verify;
	int json; /* --json: --plan and --check print JSON (mkimage(1)) */
	const char *diff_old; /* --diff OLD.lock: RECIPE is then the new lock file */
	int cachegc_run;         /* --cache-gc[=SIZE]: expire the cache down to gc_limit, then stop */
	uint64_t gc_limit;
	enum stage_id until;
	int sdk;             /* --sdk: the image's cross-building SDK instead of the image (sdk.h) */
	const char *sdk_lock;/* --sdk=LOCK: the image's lock; NULL: beside the image */
	const char *sdk_dir; /* --sdk-dir: the SDK unpacked there too; NULL: the archive only */
};

struct overlay_report;
struct sdk;

/* What the stages give each other: each row of the table adds its own (pipeline.c). */
struct build {
	struct sources sources;
	struct indexes indexes;
	struct plan plan;
	struct plan twins; /* host-arch builds of the plan's tools (accel.h) */
	struct strv python_emulated; /* packages whose byte code python compiled emulated */
	int configured_here;         /* the scripts ran in this build (not a layer's tree) */
	struct staging staging;
	struct layer *layer;             /* the layer cache's view of the staging tree (layer.h) */
	struct overlay_report *overlays; /* what the recipe's overlays wrote (overlay.h); or NULL */
	struct fetch_stats fetch;
	struct report rep;
	struct bootexport boot; /* image.export_boot */
	struct dep5_texts shipped; /* copyright files before any script ran (dep5.h) */
	struct buf disk;           /* the report's "disk" member (disk.h); empty without a disk */
	char *root_image, *bmap, *compressed; /* a disk's other outputs, or NULL */
	char root_hash[65];        /* the root's dm-verity root hash (disk.h), or "" */
	char *update_dir;          /* update: the bundle's contents in the work directory, or NULL */
	char *bundle;              /* update: NAME.raucb beside the disk, or NULL */
	char *bundle_manifest;     /* update.sign = "offline": NAME.raucb.manifest, or NULL */
	struct rauc_bundle bundle_info; /* what the bundle is, once written (rauc.h) */
	struct sparsehash digests; /* the image's or disk's whole sha256 and block map, or empty */
	struct image_params ip;    /* what the image is written with */
	struct sdk *sdk;           /* --sdk: the SDK whose recipe the stages build (sdk.h); or NULL */
	double t0;
	const char *at;            /* the step running: the report's "stage" when it fails */
	/* Set up before the stages (pipeline_setup): */
	char *sbom_file, *report_file; /* beside the output */
	char *log_file;                /* beside the output: NAME.log (log.h) */
	int output_default;            /* the output is the default images/NAME.FORMAT */
	int log_open;                  /* the log is being written: a report follows any outcome */
	char *tmp_dir;    /* where work directories live (TMPDIR, else /var/tmp) */
	int work_lock;    /* held while the work directory is ours (fsutil.h); -1: none */
};

/** The length of the image path's stem: images/x.ext4 -> images/x. */
int build_output_stem(const char *output);

/** The directory `path` is in: "images" for "images/x.ext4", "." for "x.ext4". Caller frees. */
char *build_parent_dir(const char *path);

/** Free what the stages gave (not what pipeline_setup() set up: pipeline_release()). */
void build_release(struct build *b);

#endif
