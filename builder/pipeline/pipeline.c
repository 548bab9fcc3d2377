/* The build as a table of stages, run in one loop (pipeline.h). */
#include "pipeline.h"
#include "stage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/x.h"
#include "repo/locksrc.h"
#include "sandbox/workroot.h"
#include "store/cachegc.h"

/* images/x.ext4 -> images/x.lock, images/x.spdx.json, images/x.report.json */
static void derive_outputs(struct build_opts *o, struct build *b)
{
	int stem = build_output_stem(o->output);

	if (!o->st.lock_file)
		o->st.lock_file = xasprintf("%.*s.lock", stem, o->output);
	b->sbom_file = xasprintf("%.*s.spdx.json", stem, o->output);
	b->report_file = xasprintf("%.*s.report.json", stem, o->output);
	b->log_file = xasprintf("%.*s.log", stem, o->output);
}

/*
 * The output's directory, before any work (issue: a build that ran to its end and then could
 * not create its image): the default images/ is created; a directory the user named (-o,
 * image.output, disk.output) must exist, and be a directory mkimage can write into.
 */
static int check_output_dir(const struct build_opts *o, const struct build *b)
{
	char *dir = build_parent_dir(o->output);
	struct stat st;
	int ret = 0;

	if (stat(dir, &st) < 0 && errno == ENOENT && b->output_default) {
		if ((ret = fsutil_mkdirs(dir)) < 0)
			log_error("cannot create the output directory '%s': %s (choose an output with "
				  "-o)", dir, strerror(-ret));
		else
			log_info("created the output directory '%s'", dir);
	} else if (stat(dir, &st) < 0) {
		ret = log_errno(-errno, "the output directory '%s' of '%s' cannot be used: %m "
				"(create it, or choose another output with -o)", dir, o->output);
	} else if (!S_ISDIR(st.st_mode)) {
		ret = log_errno(-ENOTDIR, "the output directory '%s' of '%s' is not a directory "
				"(choose another output with -o)", dir, o->output);
	} else if (access(dir, W_OK | X_OK) < 0) {
		ret = log_errno(-errno, "cannot write into the output directory '%s': %m (choose "
				"another output with -o)", dir);
	}
	free(dir);
	return ret ? -MKI_E_IMAGE : 0;
}

/*
 * The image's path and its companions', its directory checked (created when it is the default)
 * and the build log opened beside it: from here on a failure has a report and a log.
 */
static int setup_outputs(struct build_opts *o, const struct recipe *r, struct build *b)
{
	int ret;

	b->output_default = !o->output && !(r->disk.set ? r->disk.output : r->image.output);
	if (!o->output && r->disk.set)
		o->output = r->disk.output ? xstrdup(r->disk.output)
					   : xasprintf("images/%s.img", r->name);
	if (!o->output)
		o->output = r->image.output ? xstrdup(r->image.output)
					    : xasprintf("images/%s.%s", r->name, r->image.format);
	derive_outputs(o, b);
	if (o->plan || o->lock_only || o->until < ST_IMAGE)
		return 0; /* no image: nothing is written beside it (--until, --plan, --lock) */
	ret = check_output_dir(o, b);
	if (ret)
		return ret;
	ret = log_file_open(b->log_file, runlimits_get(&o->st.limits, LIMIT_LOG_SIZE));
	if (ret < 0) {
		log_error("cannot create the build log '%s': %s", b->log_file, strerror(-ret));
		return -MKI_E_IMAGE;
	}
	b->log_open = 1;
	return 0;
}

/* TMPDIR, else /var/tmp; elsewhere when 32-bit guests could not list directories there. */
static int choose_work_root(struct build *b, const struct recipe *r, const char *tmp)
{
	static const char *const fallbacks[] = { "/dev/shm", NULL };
	struct strv archs = { 0 };
	int ret;

	recipe_all_archs(r, &archs);
	ret = workroot_choose(tmp && *tmp ? tmp : "/var/tmp", tmp && *tmp,
			      (const char *const *)archs.v, archs.n, fallbacks, &b->tmp_dir);
	strv_release(&archs);
	return ret;
}

int pipeline_setup(struct build_opts *o, const struct recipe *r, struct build *b)
{
	const char *tmp = getenv("TMPDIR");
	char *abs;
	int ret;

	settings_read_env(&o->st);
	ret = setup_outputs(o, r, b);
	if (ret)
		return ret;
	if (fsutil_mkdirs(o->st.cache_dir) || !(abs = realpath(o->st.cache_dir, NULL))) {
		log_error("cannot create cache directory '%s': %s (choose another with --cache-dir)",
			  o->st.cache_dir, strerror(errno));
		return -MKI_E_USAGE;
	}
	free(o->st.cache_dir);
	o->st.cache_dir = abs;
	ret = cachegc_user_open(o->st.cache_dir, &o->st.cache_user);
	if (ret)
		return ret;
	/* A lock rebuilds alone: its recorded sources, unless --source overrides them. */
	if (o->st.locked && !o->st.sources.n &&
	    (ret = locksrc_specs(o->st.lock_file, r, o->st.apt_root, &o->st.sources)))
		return ret;
	ret = choose_work_root(b, r, tmp);
	if (ret)
		return ret;
	ret = fsutil_workdir_create(b->tmp_dir, &o->st.work_dir, &b->work_lock);
	if (ret) {
		log_error("cannot create a work directory in '%s': %s (set TMPDIR)", b->tmp_dir,
			  strerror(-ret));
		return -MKI_E_USAGE;
	}
	return 0;
}

/*
 * The build: one row a step, run in order by pipeline_run() until one fails or ends the build.
 * `name` is what the report's "stage" says when the step fails. A row with a `stage` is one of
 * enum stage_id: its wall time since the previous stage ended (the steps between included) is
 * the report's "stages" member of that name, and --until names it; after each but the image,
 * the last, the build stops for --until or a signal (--until image, the default, is the whole
 * build: the image and what lands beside it).
 */
static const struct stage {
	const char *name;
	int stage;    /* enum stage_id, or -1: a step timed with the next stage */
	stage_fn *run;
} stages[] = {
	/* name        stage          run                    takes -> gives */
	{ "sources",   ST_SOURCES,    stage_sources },       /* recipe -> sources */
	{ "indexes",   ST_INDEXES,    stage_indexes },       /* sources -> verified indexes */
	{ "resolve",   -1,            stage_sdk_request },   /* --sdk: indexes -> the -dev set */
	{ "resolve",   ST_RESOLVE,    stage_resolve },       /* indexes -> plan (--plan, --lock) */
	{ "resolve",   -1,            stage_room },          /* plan -> room for the image */
	{ "sandbox",   -1,            stage_sandbox_check }, /* -> subordinate ids */
	{ "fetch",     ST_FETCH,      stage_fetch },         /* plan -> .debs, native twins */
	{ "sandbox",   -1,            stage_sandbox },       /* -> in the user namespace */
	{ "unpack",    ST_UNPACK,     stage_unpack },        /* plan -> staging tree, layer */
	{ "unpack",    -1,            stage_unpacked },      /* staging -> checked, licences */
	{ "configure", ST_CONFIGURE,  stage_configure },     /* staging -> configured tree */
	{ "image",     -1,            stage_sdk_files },     /* --sdk: wrappers, toolchain files */
	{ "image",     -1,            stage_image_setup },   /* plan -> image parameters */
	{ "image",     ST_IMAGE,      stage_image },         /* configured tree -> image */
	{ "image",     -1,            stage_image_extras },  /* image -> root hash, boot, bmap */
	{ "outputs",   -1,            stage_outputs },       /* image -> lock, SBOM, report */
};
#define N_STAGES (sizeof(stages) / sizeof(stages[0]))

static const char *stage_name(enum stage_id id)
{
	size_t i;

	for (i = 0; i < N_STAGES; i++)
		if (stages[i].stage == (int)id)
			return stages[i].name;
	return NULL;
}

int pipeline_parse_until(const char *s, enum stage_id *out)
{
	size_t i;

	if (!strcmp(s, "hooks"))
		s = "configure";
	for (i = 0; i < N_STAGES; i++)
		if (stages[i].stage >= 0 && !strcmp(s, stages[i].name)) {
			*out = (enum stage_id)stages[i].stage;
			return 0;
		}
	return -1;
}

/* The report's stages, none run yet. */
static void report_stages(struct build *b)
{
	size_t i;

	for (i = 0; i < N_STAGES; i++)
		if (stages[i].stage >= 0) {
			b->rep.stage_names[stages[i].stage] = stages[i].name;
			b->rep.stage_secs[stages[i].stage] = -1;
		}
}

/* Record a stage's wall time (since b->t0) and pass its result through. */
static int timed(struct build *b, enum stage_id id, int ret)
{
	double now = log_now();

	b->rep.stage_secs[id] = now - b->t0;
	b->t0 = now;
	return ret;
}

/* Stop between stages when a signal arrived or --until says so. */
static int stop_after(const struct build_opts *o, enum stage_id id, int ret)
{
	if (!ret && err_interrupted())
		return -MKI_E_INTERRUPTED;
	if (!ret && o->until == id) {
		log_info("stopped after stage '%s' (--until)", stage_name(id));
		return BUILD_DONE;
	}
	return ret;
}

int pipeline_run(struct build_opts *o, const struct recipe *r, struct build *b)
{
	const struct stage *st;
	int ret = 0;

	report_stages(b);
	b->t0 = log_now();
	for (st = stages; !ret && st < stages + N_STAGES; st++) {
		b->at = st->name;
		ret = st->run(o, r, b);
		ret = log_fail_on_errors(ret, st->name); /* an error line fails the build */
		if (st->stage >= 0)
			ret = timed(b, st->stage, ret);
		if (st->stage >= 0 && st->stage != ST_IMAGE)
			ret = stop_after(o, st->stage, ret);
	}
	return ret;
}

/*
 * A build that did not succeed still leaves NAME.report.json (status, the failing stage, exit
 * code, the error messages) beside where the image would have been, and its log.
 */
static void write_failure(struct build_opts *o, const struct recipe *r, struct build *b, int ret)
{
	struct report_failure f = { ret == -MKI_E_INTERRUPTED ? "interrupted" : "failed",
				    b->at ? b->at : "setup", err_exit_code(ret), log_errors(),
				    b->log_file };

	if (!b->rep.stage_names[0])
		report_stages(b);
	b->rep.total_secs = log_now() - o->started;
	b->rep.warnings = log_warning_count();
	b->rep.version = MKI_VERSION;
	if (report_write_failure(&f, &b->rep, r, b->report_file) == 0)
		log_info("the build report is '%s' and its whole log '%s'", b->report_file,
			 b->log_file);
	else
		log_warn("cannot write the build report '%s'", b->report_file);
}

int pipeline_finish(struct build_opts *o, const struct recipe *r, struct build *b, int ret)
{
	if (ret == BUILD_DONE)
		ret = 0;
	if (err_interrupted())
		ret = -MKI_E_INTERRUPTED;
	if (ret == -MKI_E_INTERRUPTED)
		log_error("interrupted by signal %d; cleaned up, nothing was written%s",
			  err_interrupted(), b->log_open ? " but the report and the log" : "");
	if (ret < 0 && b->log_open)
		write_failure(o, r, b, ret);
	return ret;
}

static void cleanup_work_dir(struct build_opts *o, struct build *b)
{
	if (!o->st.work_dir)
		return;
	if (o->st.keep_staging) {
		fsutil_workdir_keep(o->st.work_dir, b->work_lock);
		log_info("staging kept in '%s'", o->st.work_dir);
		return;
	}
	fsutil_remove_tree(o->st.work_dir);
	if (b->work_lock >= 0)
		close(b->work_lock);
}

/* The log's temp file renamed to NAME.log (it has every line up to here). */
static void finish_log(struct build *b)
{
	int lr;

	if (!b->log_open) {
		log_file_discard();
		return;
	}
	lr = log_file_commit();
	if (lr)
		log_warn("cannot write the build log '%s': %s", b->log_file, strerror(-lr));
}

void pipeline_release(struct build_opts *o, struct build *b)
{
	build_release(b);
	cleanup_work_dir(o, b);
	finish_log(b);
	free(b->sbom_file);
	free(b->report_file);
	free(b->log_file);
	free(b->tmp_dir);
}
