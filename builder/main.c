/* mkimage: wires the stages together; the only place that parses argv and calls exit(). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "configure/accel.h"
#include "configure/bootcfg.h"
#include "configure/configure.h"
#include "configure/overlay.h"
#include "debian/plan.h"
#include "image/disk.h"
#include "image/format.h"
#include "image/image.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/runlimits.h"
#include "lib/settings.h"
#include "lib/url.h"
#include "emit/bmap.h"
#include "emit/bootexport.h"
#include "emit/compress.h"
#include "emit/lockdiff.h"
#include "emit/report.h"
#include "emit/sbom.h"
#include "emit/verify.h"
#include "recipe/fstype.h"
#include "recipe/recipe.h"
#include "repo/indexes.h"
#include "repo/locksrc.h"
#include "repo/sources.h"
#include "repo/twinsrc.h"
#include "resolve/resolve.h"
#include "sandbox/sandbox.h"
#include "sandbox/workroot.h"
#include "store/cachegc.h"
#include "store/fetch.h"
#include "store/layer.h"
#include "store/registry.h"
#include "unpack/unpack.h"

/* The stages: what --until names and the report times, in order (stages[] below). */
enum stage_id { ST_SOURCES, ST_INDEXES, ST_RESOLVE, ST_FETCH, ST_UNPACK, ST_CONFIGURE, ST_IMAGE };
/* What the recipe asks of later families: its overlays read and its image format known. */
static const struct recipe_checks recipe_checks = { overlay_check, format_recipe_check };

struct options {
	struct settings st;
	const char *recipe;
	char *output;
	char *sbom_file, *report_file; /* beside the output */
	char *log_file;                /* beside the output: NAME.log (log.h) */
	int output_default;            /* the output is the default images/NAME.FORMAT */
	int log_open;                  /* the log is being written: a report follows any outcome */
	double started;
	char *tmp_dir;    /* where work directories live (TMPDIR, else /var/tmp) */
	int work_lock;    /* held while the work directory is ours (fsutil.h) */
	int check, plan, lock_only, verify;
	int json; /* --json: --plan and --check print JSON (mkimage(1)) */
	const char *diff_old; /* --diff OLD.lock: RECIPE is then the new lock file */
	int cachegc_run;         /* --cache-gc[=SIZE]: expire the cache down to gc_limit, then stop */
	uint64_t gc_limit;
	enum stage_id until;
};

enum { O_CACHE = 256, O_SOURCE, O_OFFLINE, O_IGNORE_VU, O_ROLLBACK, O_LOCK, O_LOCKED, O_PLAN,
       O_UNTIL, O_KEEP, O_CHECK, O_SINGLE, O_VERIFY, O_NO_NATIVE, O_LIMIT, O_DIFF, O_CACHE_GC,
       O_NO_HOST_TWINS, O_NO_LAYER, O_LAYER_REGISTRY, O_LAYER_SIGN_KEY, O_JSON, O_NO_INITRAMFS_ONCE };

/*
 * The options, in --help's order: getopt's tables and --help are made from this one, and
 * tests/integration/05-man.sh checks mkimage(1)'s OPTIONS against --help. `help` lines after the
 * first are indented under it; a help starting with '\n' starts below a long option.
 */
static const struct opt {
	const char *name; /* the long name */
	int id;           /* the short letter, or O_* for a long option only */
	int has_arg;      /* getopt's no_argument, required_argument or optional_argument */
	const char *arg;  /* the argument as --help shows it */
	const char *help;
} opts[] = {
	{ "output", 'o', required_argument, "FILE",
	  "write the image to FILE (default: recipe's image.output,\nelse images/NAME.ext4)" },
	{ "cache-dir", O_CACHE, required_argument, "DIR",
	  "shared download cache (default: $XDG_CACHE_HOME/mkimage)" },
	{ "cache-gc", O_CACHE_GC, optional_argument, "SIZE",
	  "remove the least recently used cache objects until the\n"
	  "cache fits SIZE (512M, 20G; default 0: every object no\nrunning build uses), then stop" },
	{ "jobs", 'j', required_argument, "N", "parallel downloads and unpack workers (default: 8)" },
	{ "source", O_SOURCE, required_argument, "'URI SUITE COMPONENT... [signed-by=KEYRING]'",
	  "\nuse this repository instead of the recipe's sources\n(repeatable)" },
	{ "offline", O_OFFLINE, no_argument, NULL, "use only the cache; fail if anything is missing" },
	{ "ignore-valid-until", O_IGNORE_VU, no_argument, NULL,
	  "accept expired Release files (old snapshots)" },
	{ "allow-release-rollback", O_ROLLBACK, no_argument, NULL,
	  "accept a Release older than the last one verified" },
	{ "lock", O_LOCK, optional_argument, "FILE",
	  "resolve only and write the lock file (default: beside the\nimage, e.g. images/NAME.lock)" },
	{ "locked", O_LOCKED, optional_argument, "FILE", "build exactly what the lock file says" },
	{ "diff", O_DIFF, required_argument, "OLD.lock",
	  "print the packages added, removed or changed from OLD.lock\n"
	  "to the lock file given instead of RECIPE, then stop" },
	{ "plan", O_PLAN, no_argument, NULL, "resolve and print the plan, then stop" },
	{ "json", O_JSON, no_argument, NULL,
	  "with --plan or --check: print JSON instead of text\n(the forms are in mkimage(1))" },
	{ "until", O_UNTIL, required_argument, "STAGE",
	  "stop after STAGE: sources, indexes, resolve, fetch,\nunpack, configure or image" },
	{ "keep-staging", O_KEEP, no_argument, NULL, "keep the staging tree and print where it is" },
	{ "single-id", O_SINGLE, no_argument, NULL, "without subordinate ids, build with one id anyway" },
	{ "no-native-tools", O_NO_NATIVE, no_argument, NULL,
	  "emulate every target program while configuring, even\n"
	  "those the host has in the very same version" },
	{ "no-initramfs-once", O_NO_INITRAMFS_ONCE, no_argument, NULL,
	  "build a kernel's initramfs twice, as dpkg does: in its\n"
	  "postinst and again in initramfs-tools' trigger" },
	{ "no-host-twins", O_NO_HOST_TWINS, no_argument, NULL,
	  "when the recipe's repositories lack the host's\n"
	  "architecture, emulate rather than take native tools\nfrom the host's own apt sources" },
	{ "no-layer-cache", O_NO_LAYER, no_argument, NULL,
	  "neither reuse nor store the configured tree in the cache" },
	{ "layer-registry", O_LAYER_REGISTRY, required_argument, "URL",
	  "share configured trees through the OCI registry\n"
	  "repository http(s)://HOST[:PORT]/REPO (recipe: layers)" },
	{ "layer-sign-key", O_LAYER_SIGN_KEY, required_argument, "FILE",
	  "sign the layers pushed with this Ed25519 key (PEM)" },
	{ "verify-reproducible", O_VERIFY, no_argument, NULL,
	  "build a second time from the same plan and fail,\n"
	  "naming the first difference, unless the images are identical" },
	{ "check", O_CHECK, no_argument, NULL, "validate RECIPE and print it normalized, then stop" },
	{ "verbose", 'v', no_argument, NULL, "more output (repeat for debug)" },
	{ "quiet", 'q', no_argument, NULL, "errors only" },
	{ "help", 'h', no_argument, NULL, "this text" },
	{ "version", 'V', no_argument, NULL, "print the version" },
	{ "limit", O_LIMIT, required_argument, "NAME=VALUE",
	  "change a safety limit (repeatable); VALUE is a size\n"
	  "(512M, 4G) or a count; the limits and their defaults:" },
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))
#define HELP_COLUMN 26

/* One option's --help entry: "  -o, --output FILE" and its help text from HELP_COLUMN on. */
static void usage_opt(struct buf *b, const struct opt *op)
{
	const char *line = op->help, *nl;
	size_t start = b->len;
	int len;

	if (op->id < 256)
		buf_addf(b, "  -%c, --%s", op->id, op->name);
	else
		buf_addf(b, "      --%s", op->name);
	if (op->arg)
		buf_addf(b, op->has_arg == optional_argument ? "[=%s]" : " %s", op->arg);
	for (;;) {
		int width = (int)(b->len - start);

		nl = strchr(line, '\n');
		len = nl ? (int)(nl - line) : (int)strlen(line);
		if (len)
			buf_addf(b, "%*s%.*s", width < HELP_COLUMN - 2 ? HELP_COLUMN - width : 2, "",
				 len, line);
		if (!nl)
			break;
		buf_adds(b, "\n");
		start = b->len;
		line = nl + 1;
	}
	buf_adds(b, "\n");
}

static void usage(FILE *f)
{
	struct buf b = { 0 };
	size_t i;

	buf_adds(&b, "usage: mkimage [OPTIONS] RECIPE\n"
		     "       mkimage --diff OLD.lock NEW.lock\n"
		     "       mkimage --cache-gc[=SIZE] [--cache-dir DIR]\n"
		     "Build an ext4 (or tar) root filesystem image for one or more Debian "
		     "architectures,\nas described by RECIPE, without root.\n\n");
	for (i = 0; i < N_OPTS; i++)
		usage_opt(&b, &opts[i]);
	runlimits_help(&b);
	buf_adds(&b, "\nExit status:\n");
	err_exit_help(&b);
	fputs(b.p, f);
	buf_release(&b);
}

/* getopt_long's tables from opts[]: `longopts` has N_OPTS + 1 rows, `shortopts` 3 * N_OPTS + 1. */
static void getopt_tables(struct option *longopts, char *shortopts)
{
	size_t i;

	for (i = 0; i < N_OPTS; i++) {
		longopts[i] = (struct option){ opts[i].name, opts[i].has_arg, NULL, opts[i].id };
		if (opts[i].id >= 256)
			continue;
		*shortopts++ = (char)opts[i].id;
		if (opts[i].has_arg != no_argument)
			*shortopts++ = ':';
		if (opts[i].has_arg == optional_argument)
			*shortopts++ = ':';
	}
	longopts[N_OPTS] = (struct option){ 0 };
	*shortopts = '\0';
}

static void on_signal(int sig)
{
	err_set_interrupted(sig);
}

static int parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v > max || s[0] == '-')
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_until(const char *s, enum stage_id *out);

static char *default_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return xasprintf("%s/mkimage", xdg);
	if (home && home[0] == '/')
		return xasprintf("%s/.cache/mkimage", home);
	return xasprintf("/var/tmp/mkimage-cache-%d", (int)getuid());
}

/* --layer-registry's URL has the shape the registry module takes; -1 (logged) if not. */
static int check_registry(const char *url)
{
	struct registry *g = NULL;
	struct buf why = { 0 };
	int ret = registry_open(&g, url, NULL, NULL, 0, &why);

	if (ret)
		log_error("--layer-registry: %s", why.p);
	registry_free(g);
	buf_release(&why);
	return ret ? -1 : 0;
}

static int parse_args(struct options *o, int argc, char **argv)
{
	struct option longopts[N_OPTS + 1];
	char shortopts[3 * N_OPTS + 1];
	int c, verbosity = 0;

	o->st.jobs = 8;
	o->until = ST_IMAGE;
	runlimits_init(&o->st.limits);
	getopt_tables(longopts, shortopts);
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'o': free(o->output); o->output = xstrdup(optarg); break;
		case O_CACHE: free(o->st.cache_dir); o->st.cache_dir = xstrdup(optarg); break;
		case 'j':
			if (parse_uint(optarg, 64, &o->st.jobs) || !o->st.jobs) {
				log_error("--jobs takes a number from 1 to 64, not '%s'", optarg);
				return -MKI_E_USAGE;
			}
			break;
		case O_SOURCE: strv_push(&o->st.sources, optarg); break;
		case O_OFFLINE: o->st.offline = 1; break;
		case O_IGNORE_VU: o->st.ignore_valid_until = 1; break;
		case O_ROLLBACK: o->st.allow_rollback = 1; break;
		case O_LOCK:
			o->lock_only = 1;
			if (optarg)
				o->st.lock_file = xstrdup(optarg);
			break;
		case O_LOCKED:
			o->st.locked = 1;
			if (optarg)
				o->st.lock_file = xstrdup(optarg);
			break;
		case O_DIFF: o->diff_old = optarg; break;
		case O_CACHE_GC:
			o->cachegc_run = 1;
			if (optarg && recipe_parse_size(optarg, &o->gc_limit)) {
				log_error("--cache-gc takes a size such as 512M or 20G, not '%s'", optarg);
				return -MKI_E_USAGE;
			}
			break;
		case O_PLAN: o->plan = 1; break;
		case O_JSON: o->json = 1; break;
		case O_UNTIL:
			if (parse_until(optarg, &o->until)) {
				log_error("--until takes one of sources, indexes, resolve, fetch, unpack, "
					  "configure, image; not '%s'", optarg);
				return -MKI_E_USAGE;
			}
			break;
		case O_KEEP: o->st.keep_staging = 1; break;
		case O_CHECK: o->check = 1; break;
		case O_SINGLE: o->st.single_id = 1; break;
		case O_NO_NATIVE: o->st.no_native_tools = 1; break;
		case O_NO_HOST_TWINS: o->st.no_host_twins = 1; break;
		case O_NO_INITRAMFS_ONCE: o->st.no_initramfs_once = 1; break;
		case O_NO_LAYER: o->st.no_layer_cache = 1; break;
		case O_LAYER_REGISTRY:
			free(o->st.layer_registry);
			o->st.layer_registry = xstrdup(optarg);
			break;
		case O_LAYER_SIGN_KEY:
			free(o->st.layer_sign_key);
			o->st.layer_sign_key = xstrdup(optarg);
			break;
		case O_VERIFY: o->verify = 1; break;
		case O_LIMIT:
			if (runlimits_set(&o->st.limits, optarg))
				return -MKI_E_USAGE;
			break;
		case 'v': verbosity++; break;
		case 'q': verbosity = -10; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("mkimage %s\n", MKI_VERSION); exit(0);
		default: usage(stderr); return -MKI_E_USAGE;
		}
	}
	log_set_level(verbosity < 0 ? LOG_ERROR : verbosity > 0 ? LOG_DEBUG : LOG_INFO);
	if (o->st.layer_registry && check_registry(o->st.layer_registry))
		return -MKI_E_USAGE;
	if (o->cachegc_run && optind < argc) {
		log_error("--cache-gc works on the cache alone and takes no recipe (got '%s')",
			  argv[optind]);
		return -MKI_E_USAGE;
	}
	if (o->json && !o->plan && !o->check) {
		log_error("--json changes what --plan and --check print: give one of them too");
		return -MKI_E_USAGE;
	}
	if (o->cachegc_run)
		return 0;
	if (optind != argc - 1) {
		log_error(optind >= argc ? "no recipe given (try 'mkimage --help')"
					 : "exactly one recipe, please (got '%s' too)",
			  optind < argc - 1 ? argv[optind + 1] : "");
		return -MKI_E_USAGE;
	}
	o->recipe = argv[optind];
	return 0;
}

/*
 * Which servers the build contacted and why: an info line the first time a server is contacted
 * for a purpose, and the report's "network". The download functions main.c hands the stages
 * take no context, so this record is the one piece of state main.c keeps of its own.
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

static int64_t read_sde(void)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0) {
		log_error("SOURCE_DATE_EPOCH must be a non-negative number of seconds, not '%s'", s);
		return -2;
	}
	return v;
}

/* The stem of the image's path: images/x.ext4 -> images/x. */
static int output_stem(const char *output)
{
	const char *slash = strrchr(output, '/'), *dot = strrchr(output, '.');

	return (int)(dot && (!slash || dot > slash + 1) ? dot - output : (long)strlen(output));
}

/* images/x.ext4 -> images/x.lock, images/x.spdx.json, images/x.report.json */
static void derive_outputs(struct options *o)
{
	int stem = output_stem(o->output);

	if (!o->st.lock_file)
		o->st.lock_file = xasprintf("%.*s.lock", stem, o->output);
	o->sbom_file = xasprintf("%.*s.spdx.json", stem, o->output);
	o->report_file = xasprintf("%.*s.report.json", stem, o->output);
	o->log_file = xasprintf("%.*s.log", stem, o->output);
}

/* The directory `path` is in: "images" for "images/x.ext4", "." for "x.ext4". */
static char *parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	return slash == path ? xstrdup("/") : xasprintf("%.*s", (int)(slash - path), path);
}

/*
 * The output's directory, before any work (issue: a build that ran to its end and then could
 * not create its image): the default images/ is created; a directory the user named (-o,
 * image.output, disk.output) must exist, and be a directory mkimage can write into.
 */
static int check_output_dir(const struct options *o)
{
	char *dir = parent_dir(o->output);
	struct stat st;
	int ret = 0;

	if (stat(dir, &st) < 0 && errno == ENOENT && o->output_default) {
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

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

static int run_cache_gc(struct options *o)
{
	if (!o->st.cache_dir)
		o->st.cache_dir = default_cache_dir();
	return cachegc_expire(o->st.cache_dir, o->gc_limit);
}

/*
 * The image's path and its companions', its directory checked (created when it is the default)
 * and the build log opened beside it: from here on a failure has a report and a log.
 */
static int setup_outputs(struct options *o, const struct recipe *r)
{
	int ret;

	o->output_default = !o->output && !(r->disk.set ? r->disk.output : r->image.output);
	if (!o->output && r->disk.set)
		o->output = r->disk.output ? xstrdup(r->disk.output)
					   : xasprintf("images/%s.img", r->name);
	if (!o->output)
		o->output = r->image.output ? xstrdup(r->image.output)
					    : xasprintf("images/%s.%s", r->name, r->image.format);
	derive_outputs(o);
	if (o->plan || o->lock_only || o->until < ST_IMAGE)
		return 0; /* no image: nothing is written beside it (--until, --plan, --lock) */
	ret = check_output_dir(o);
	if (ret)
		return ret;
	ret = log_file_open(o->log_file, runlimits_get(&o->st.limits, LIMIT_LOG_SIZE));
	if (ret < 0) {
		log_error("cannot create the build log '%s': %s", o->log_file, strerror(-ret));
		return -MKI_E_IMAGE;
	}
	o->log_open = 1;
	return 0;
}

/* TMPDIR, else /var/tmp; elsewhere when 32-bit guests could not list directories there. */
static int choose_work_root(struct options *o, const struct recipe *r, const char *tmp)
{
	static const char *const fallbacks[] = { "/dev/shm", NULL };
	struct strv archs = { 0 };
	int ret;

	recipe_all_archs(r, &archs);
	ret = workroot_choose(tmp && *tmp ? tmp : "/var/tmp", tmp && *tmp,
			      (const char *const *)archs.v, archs.n, fallbacks, &o->tmp_dir);
	strv_release(&archs);
	return ret;
}

static int setup_settings(struct options *o, const struct recipe *r)
{
	const char *tmp = getenv("TMPDIR");
	char *abs;
	int ret;

	settings_read_env(&o->st);
	ret = setup_outputs(o, r);
	if (ret)
		return ret;
	if (!o->st.cache_dir)
		o->st.cache_dir = default_cache_dir();
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
	ret = choose_work_root(o, r, tmp);
	if (ret)
		return ret;
	ret = fsutil_workdir_create(o->tmp_dir, &o->st.work_dir, &o->work_lock);
	if (ret) {
		log_error("cannot create a work directory in '%s': %s (set TMPDIR)", o->tmp_dir,
			  strerror(-ret));
		return -MKI_E_USAGE;
	}
	return 0;
}

static void cleanup_work_dir(struct options *o)
{
	if (!o->st.work_dir)
		return;
	if (o->st.keep_staging) {
		fsutil_workdir_keep(o->st.work_dir, o->work_lock);
		log_info("staging kept in '%s'", o->st.work_dir);
		return;
	}
	fsutil_remove_tree(o->st.work_dir);
	if (o->work_lock >= 0)
		close(o->work_lock);
}

/*
 * A stage's positive result, beside 0 and the negative error codes: the build is complete before
 * the image (--until, --plan, --lock); main() turns it into success.
 */
enum { BUILD_DONE = 1 };

static const char *stage_name(enum stage_id id);

/* Stop between stages when a signal arrived or --until says so. */
static int stop_after(const struct options *o, enum stage_id id, int ret)
{
	if (!ret && err_interrupted())
		return -MKI_E_INTERRUPTED;
	if (!ret && o->until == id) {
		log_info("stopped after stage '%s' (--until)", stage_name(id));
		return BUILD_DONE;
	}
	return ret;
}

struct build {
	struct sources sources;
	struct indexes indexes;
	struct plan plan;
	struct plan twins; /* host-arch builds of the plan's tools (accel.h) */
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
	struct sparsehash digests; /* a disk's whole sha256 and block map (disk.h), or empty */
	struct image_params ip;    /* what the image is written with */
	double t0;
	const char *at;            /* the step running: the report's "stage" when it fails */
};

/* Record a stage's wall time (since b->t0) and pass its result through. */
static int timed(struct build *b, enum stage_id id, int ret)
{
	double now = log_now();

	b->rep.stage_secs[id] = now - b->t0;
	b->t0 = now;
	return ret;
}

/*
 * Without SOURCE_DATE_EPOCH every timestamp comes from the newest signed Release Date, so the
 * same indexes (the same lock) give the same image, whenever it is built.
 */
static void default_sde(struct options *o, const struct indexes *ix)
{
	if (o->st.source_date_epoch >= 0)
		return;
	o->st.source_date_epoch = indexes_newest_date(ix);
	log_debug("SOURCE_DATE_EPOCH not set: using %lld from the newest Release date",
		  (long long)o->st.source_date_epoch);
}

static int resolve_stage(struct options *o, const struct recipe *r, struct build *b)
{
	int ret;

	default_sde(o, &b->indexes);
	ret = resolve_plan(&b->plan, r, &b->indexes, &o->st);

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

/* The image's companions: lock, SBOM and build report beside it. */
static int write_outputs(struct options *o, const struct recipe *r, struct build *b)
{
	struct buf overlays = { 0 }, net = { 0 }, native = { 0 };
	struct stat st;
	const char *base;
	int ret = b->digests.whole[0] ? 0 : hash_file_hex(o->output, HASH_SHA256, b->digests.whole);

	memcpy(b->rep.image_sha256, b->digests.whole, sizeof(b->digests.whole));

	if (!ret && stat(o->output, &st) == 0)
		b->rep.image_bytes = (uint64_t)st.st_size;
	if (!ret && !o->st.locked)
		ret = resolve_write_lock(&b->plan, r, &b->indexes, &b->twins,
					 twinsrc_origin(&b->indexes), o->st.lock_file);
	base = strrchr(o->output, '/');
	if (!ret)
		ret = sbom_write(&b->plan, r, b->shipped.v ? &b->shipped : NULL, b->staging.root,
				 base ? base + 1 : o->output, b->rep.image_sha256,
				 o->st.source_date_epoch, o->sbom_file);
	if (ret) {
		log_error("cannot write the lock or SBOM beside '%s': %s", o->output,
			  err_text(ret));
		return ret;
	}
	b->rep.image = o->output;
	b->rep.lock = o->st.lock_file;
	b->rep.sbom = o->sbom_file;
	b->rep.bytes_downloaded = b->fetch.bytes_downloaded;
	b->rep.files_downloaded = b->fetch.files_downloaded;
	b->rep.files_cached = b->fetch.files_cached;
	b->rep.filtered = b->staging.filtered;
	b->rep.warnings = log_warning_count();
	if (b->overlays)
		overlay_report_json(b->overlays, &overlays);
	b->rep.overlays = overlays.p;
	b->rep.boot = &b->boot;
	b->rep.disk = b->disk.p;
	b->rep.layer_outcome = layer_outcome(b->layer);
	b->rep.layer_key = layer_key(b->layer);
	b->rep.version = MKI_VERSION;
	b->rep.source_date_epoch = o->st.source_date_epoch;
	if (!r->disk.set)
		image_fs_uuid(o->output, 0, b->rep.fs_uuid);
	report_net_json(&net_use, &net);
	report_native_json(&native, !o->st.no_native_tools, &b->twins,
			   b->twins.n ? twinsrc_origin(&b->indexes) : NULL);
	b->rep.network = net.p;
	b->rep.native_tools = native.p;
	b->rep.total_secs = log_now() - o->started;
	ret = report_write(&b->rep, &b->plan, r, o->report_file);
	b->rep.overlays = b->rep.network = b->rep.native_tools = NULL;
	buf_release(&overlays);
	buf_release(&net);
	buf_release(&native);
	if (ret)
		log_error("cannot write the build report '%s': %s", o->report_file, err_text(ret));
	return ret;
}

/* What the disk writer calls back with a verified root's hash (disk.h, bootcfg.h). */
struct entry_ctx {
	struct staging *s;
	const struct recipe *r;
	const struct settings *st;
};

static int write_entry(void *ctx, const char *roothash)
{
	struct entry_ctx *e = ctx;
	int rootfd = open(e->s->root, O_PATH | O_DIRECTORY | O_CLOEXEC), ret;

	if (rootfd < 0)
		return log_errno(-MKI_E_IMAGE, "cannot open the staging tree '%s': %m", e->s->root);
	ret = bootcfg_write_roothash(e->s, e->r, rootfd, e->st, roothash);
	close(rootfd);
	return ret;
}

/*
 * The image, or with a disk section the whole disk at `output` (its root partition also at
 * b->root_image when asked, and the report's "disk" member into `report` when not NULL).
 */
static int write_image(const struct options *o, const struct recipe *r, struct build *b,
		       struct staging *s, const struct image_params *ip, const char *output,
		       struct buf *report)
{
	struct buf none = { 0 };
	struct entry_ctx e = { s, r, &o->st };
	struct disk_params dp = { r, ip, output, report ? b->root_image : NULL, b->bmap,
				  b->compressed, &o->st.limits, report ? b->root_hash : NULL,
				  bootcfg_entry_path(r), write_entry, &e,
				  report ? &b->digests : NULL };
	int ret;

	if (!r->disk.set)
		return image_write(s, ip);
	ret = disk_write(s, &dp, report ? report : &none);
	buf_release(&none);
	return ret;
}

/*
 * The tree `s` configured: by dpkg up to the layer point, where it is stored as the layer `l`,
 * or, when `l` restored it, as it is; then what the recipe adds (configure.h). `l` may be NULL.
 */
static int configure_staging(struct staging *s, struct layer *l, const struct plan *p,
			     const struct plan *twins, const struct recipe *r,
			     const struct settings *st, struct overlay_report **overlays)
{
	struct configure c;
	int ret = configure_init(&c, s, p, r, st);

	if (!ret && layer_restored(l))
		configure_adopt(&c);
	else if (!ret)
		ret = configure_tree(&c, twins);
	if (!ret)
		layer_save(l, s, c.rootfd);
	if (!ret)
		ret = configure_finish(&c, overlays);
	configure_release(&c);
	return ret;
}

/*
 * --verify-reproducible: unpack, configure and write the image a second time from the same plan
 * in a separate work directory, then compare. Same namespace, same cache: what differs can only
 * come from the build itself.
 */
static int verify_again(struct options *o, const struct recipe *r, struct build *b,
			const struct image_params *first)
{
	struct settings st2 = o->st;
	struct image_params ip = *first;
	struct staging again = { 0 };
	struct overlay_report *overlays = NULL;
	char *out2 = xasprintf("%s.verify", o->output);
	int ret;

	st2.work_dir = xasprintf("%s/verify", o->st.work_dir);
	ip.output = out2;
	ret = fsutil_mkdirs(st2.work_dir);
	fsutil_spread(st2.work_dir); /* as the work directory is (fsutil.h) */
	if (!ret)
		ret = unpack_plan(&again, &b->plan, r, &st2);
	if (!ret)
		ret = configure_staging(&again, NULL, &b->plan, &b->twins, r, &st2, &overlays);
	if (!ret)
		ret = write_image(o, r, b, &again, &ip, out2, NULL);
	if (!ret) {
		manifest_sort(&b->staging.manifest);
		manifest_sort(&again.manifest);
		ret = verify_builds(&b->staging, o->output, &again, out2);
	}
	unlink(out2);
	staging_release(&again);
	overlay_report_free(overlays);
	free(st2.work_dir);
	free(out2);
	return ret;
}

/*
 * The plan's packages, then their host-arch twins for the native tools. The twins only make
 * configuring faster: when they cannot be had, the build goes on emulating everything, saying so.
 */
static int fetch_stage(struct options *o, const struct recipe *r, struct build *b)
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
		log_warn("native tools: the host-architecture packages are not available (%s); "
			 "every target program will be emulated", err_text(ret));
	return 0;
}

/*
 * Work directories of builds that were killed (SIGKILL cannot be cleaned up after). Inside the
 * namespace, so trees owned by subordinate ids can be removed as well.
 */
static void sweep_work_dirs(struct options *o)
{
	unsigned n = fsutil_workdir_sweep(o->tmp_dir, o->st.work_dir);

	if (n)
		log_info("removed %u work director%s in '%s' left by killed builds", n,
			 n == 1 ? "y" : "ies", o->tmp_dir);
}

static enum compress_kind disk_compression(const struct recipe *r)
{
	return r->disk.compress == DISK_COMPRESS_ZSTD ? COMPRESS_ZSTD
	     : r->disk.compress == DISK_COMPRESS_XZ ? COMPRESS_XZ : COMPRESS_NONE;
}

/*
 * NAME.roothash beside the disk (systemd's name for it): the root hash of the root's dm-verity
 * tree, hex and a newline, written atomically; only when the disk has one.
 */
static int write_root_hash(const struct options *o, const struct build *b)
{
	char *path, text[66];
	int ret;

	if (!b->root_hash[0])
		return 0;
	path = xasprintf("%.*s.roothash", output_stem(o->output), o->output);
	snprintf(text, sizeof(text), "%s\n", b->root_hash);
	ret = fsutil_write_atomic(path, text, 65);
	if (ret)
		log_error("cannot write the root hash to '%s': %s", path, strerror(-ret));
	else
		log_info("dm-verity root hash %s written to '%s'", b->root_hash, path);
	free(path);
	return ret;
}

/*
 * A disk's other outputs: OUTPUT.bmap, OUTPUT.zst or .xz, the root partition at image.output
 * (default: beside the disk, its stem and .ext4).
 */
static void disk_outputs(const struct options *o, const struct recipe *r, struct build *b)
{
	enum compress_kind k = disk_compression(r);

	if (r->disk.bmap)
		b->bmap = xasprintf("%s.bmap", o->output);
	if (k != COMPRESS_NONE)
		b->compressed = xasprintf("%s%s", o->output, compress_suffix(k));
	if (r->disk.root_image && r->image.output) {
		b->root_image = xstrdup(r->image.output);
	} else if (r->disk.root_image) { /* beside the disk, as the lock: images/x.img -> x.ext4 */
		const char *ext = "ext4";
		size_t i;

		for (i = 0; i < r->disk.n_partitions; i++)
			if (r->disk.partitions[i].contents == PART_ROOT) /* x.squashfs: as image.format */
				ext = fstype_get(r->disk.partitions[i].format)->name;
		b->root_image = xasprintf("%.*s.%s", output_stem(o->output), o->output, ext);
	}
}

/*
 * The one line a build prints on stdout, last, for a farm to parse (mkimage(1), "SUMMARY LINE"):
 * the file that stays (the compressed one when asked), its sha256 and size, the package count and
 * the wall time. Everything else goes to stderr.
 */
static int print_summary(const struct options *o, const struct build *b)
{
	const char *path = b->compressed ? b->compressed : o->output;
	char sha[65];
	struct stat st;
	int ret = 0;

	if (b->compressed)
		ret = hash_file_hex(path, HASH_SHA256, sha);
	else
		memcpy(sha, b->rep.image_sha256, sizeof(sha));
	if (!ret && stat(path, &st))
		ret = -errno;
	if (ret)
		return log_errno(-MKI_E_IMAGE, "cannot read '%s' back for the summary line: %s",
				 path, strerror(-ret));
	printf("mkimage: ok %s sha256=%s size=%llu packages=%zu seconds=%.1f\n", path, sha,
	       (unsigned long long)st.st_size, b->plan.n, log_now() - o->started);
	return fflush(stdout) ? log_errno(-MKI_E_IMAGE, "cannot write the summary line: %m") : 0;
}

/*
 * Free space for the image on the output's filesystem, before anything is downloaded: about the
 * packages' Installed-Size plus a tenth (what the image's files take; a fixed size is written
 * sparse). Not a promise, a guard against the hour-long build that cannot write its image.
 */
static int check_space(const struct options *o, const struct plan *p)
{
	char *dir = parent_dir(o->output);
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

/* stages[]'s functions: each takes what the rows above it gave in `b` and adds its own. */
typedef int stage_fn(struct options *o, const struct recipe *r, struct build *b);

static int sources_stage(struct options *o, const struct recipe *r, struct build *b)
{
	return sources_load(&b->sources, r, &o->st);
}

static int indexes_stage(struct options *o, const struct recipe *r, struct build *b)
{
	return indexes_fetch(&b->indexes, &b->sources, r, &o->st, fetch_indexes);
}

/* Before anything is downloaded: room for the image, when there will be one. */
static int room_stage(struct options *o, const struct recipe *r, struct build *b)
{
	return o->until >= ST_IMAGE ? check_space(o, &b->plan) : 0;
}

/* Before downloading too: a machine without subordinate ids is said up front. */
static int sandbox_check_stage(struct options *o, const struct recipe *r, struct build *b)
{
	struct sandbox_opts so = { .allow_single_id = o->st.single_id };

	return o->until >= ST_UNPACK ? sandbox_check(&so) : 0;
}

/* Unpack, configure and the image writer run in one user namespace (sandbox.h). */
static int sandbox_stage(struct options *o, const struct recipe *r, struct build *b)
{
	struct sandbox_opts so = { .allow_single_id = o->st.single_id };
	int ret = sandbox_enter(&so);

	if (!ret)
		sweep_work_dirs(o);
	return ret;
}

static int unpack_stage(struct options *o, const struct recipe *r, struct build *b)
{
	o->st.no_layer_cache |= o->until < ST_CONFIGURE; /* --until unpack: the unconfigured tree */
	return layer_unpack(&b->staging, &b->layer, &b->plan, &b->twins, r, &o->st, unpack_plan);
}

/*
 * What configuring needs of the unpacked tree, before it takes minutes: a disk's raw files, the
 * kernels a disk boots; and the licences as shipped, since a maintainer script may rewrite any
 * copyright file (a restored tree is the configured one: its layer kept them).
 */
static int unpacked_stage(struct options *o, const struct recipe *r, struct build *b)
{
	int ret = r->disk.set ? disk_check_files(&b->staging, r) : 0;

	if (!ret)
		ret = bootcfg_check_kernels(&b->staging, r);
	return ret ? ret : layer_shipped(b->layer, &b->shipped, &b->plan, b->staging.root,
					 sbom_capture);
}

static int configure_stage(struct options *o, const struct recipe *r, struct build *b)
{
	return configure_staging(&b->staging, b->layer, &b->plan, &b->twins, r, &o->st,
				 &b->overlays);
}

/* What the image is written with; a disk's other outputs named; the boot files' export begun. */
static int image_setup_stage(struct options *o, const struct recipe *r, struct build *b)
{
	if (r->disk.set)
		disk_outputs(o, r, b);
	b->ip.im = &r->image;
	b->ip.output = o->output;
	b->ip.source_date_epoch = o->st.source_date_epoch;
	plan_seed(&b->plan, r->digest, b->ip.seed); /* the UUID and hash seed: what the lock pins */
	if (!r->image.export_boot)
		return 0;
	return bootexport_prepare(&b->boot, &b->staging, r, o->output, o->st.source_date_epoch,
				  &o->st.limits);
}

static int image_stage(struct options *o, const struct recipe *r, struct build *b)
{
	return write_image(o, r, b, &b->staging, &b->ip, o->output, &b->disk);
}

/* The image checked and completed: built again, its root hash, boot files, block map, copy. */
static int image_extras_stage(struct options *o, const struct recipe *r, struct build *b)
{
	int ret = o->verify ? verify_again(o, r, b, &b->ip) : 0;

	if (!ret)
		ret = write_root_hash(o, b);
	if (!ret && r->image.export_boot)
		ret = bootexport_commit(&b->boot);
	if (!ret && b->bmap)
		ret = bmap_write(o->output, b->bmap, &b->digests);
	if (!ret && b->compressed)
		ret = compress_file(o->output, b->compressed, disk_compression(r));
	return ret;
}

/* Lock, SBOM and report beside the image; the summary line. */
static int outputs_stage(struct options *o, const struct recipe *r, struct build *b)
{
	int ret = write_outputs(o, r, b);

	if (!ret && b->compressed && unlink(o->output))
		ret = log_errno(-errno, "cannot remove '%s' after compressing it: %m", o->output);
	if (!ret)
		log_info("%s written to '%s' (lock, SBOM and report beside it)",
			 r->disk.set ? "disk" : "image", b->compressed ? b->compressed : o->output);
	return ret ? ret : print_summary(o, b);
}

/*
 * The build: one row a step, run in order by run_stages() until one fails or ends the build.
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
	{ "sources",   ST_SOURCES,    sources_stage },       /* recipe -> sources */
	{ "indexes",   ST_INDEXES,    indexes_stage },       /* sources -> verified indexes */
	{ "resolve",   ST_RESOLVE,    resolve_stage },       /* indexes -> plan (--plan, --lock) */
	{ "resolve",   -1,            room_stage },          /* plan -> room for the image */
	{ "sandbox",   -1,            sandbox_check_stage }, /* -> subordinate ids */
	{ "fetch",     ST_FETCH,      fetch_stage },         /* plan -> .debs, native twins */
	{ "sandbox",   -1,            sandbox_stage },       /* -> in the user namespace */
	{ "unpack",    ST_UNPACK,     unpack_stage },        /* plan -> staging tree, layer */
	{ "unpack",    -1,            unpacked_stage },      /* staging -> checked, licences */
	{ "configure", ST_CONFIGURE,  configure_stage },     /* staging -> configured tree */
	{ "image",     -1,            image_setup_stage },   /* plan -> image parameters */
	{ "image",     ST_IMAGE,      image_stage },         /* configured tree -> image */
	{ "image",     -1,            image_extras_stage },  /* image -> root hash, boot, bmap */
	{ "outputs",   -1,            outputs_stage },       /* image -> lock, SBOM, report */
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

/* --until's STAGE; "hooks" is the configure stage's old name (mkimage(1)). */
static int parse_until(const char *s, enum stage_id *out)
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

static int run_stages(struct options *o, const struct recipe *r, struct build *b)
{
	const struct stage *st;
	int ret = 0;

	report_stages(b);
	b->t0 = log_now();
	for (st = stages; !ret && st < stages + N_STAGES; st++) {
		b->at = st->name;
		ret = st->run(o, r, b);
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
static void write_failure(struct options *o, const struct recipe *r, struct build *b, int ret)
{
	struct report_failure f = { ret == -MKI_E_INTERRUPTED ? "interrupted" : "failed",
				    b->at ? b->at : "setup", err_exit_code(ret), log_errors(),
				    o->log_file };

	if (!b->rep.stage_names[0])
		report_stages(b);
	b->rep.total_secs = log_now() - o->started;
	b->rep.warnings = log_warning_count();
	b->rep.version = MKI_VERSION;
	if (report_write_failure(&f, &b->rep, r, o->report_file) == 0)
		log_info("the build report is '%s' and its whole log '%s'", o->report_file,
			 o->log_file);
	else
		log_warn("cannot write the build report '%s'", o->report_file);
}

/* The log's temp file renamed to NAME.log (it has every line up to here). */
static void finish_log(struct options *o)
{
	int lr;

	if (!o->log_open) {
		log_file_discard();
		return;
	}
	lr = log_file_commit();
	if (lr)
		log_warn("cannot write the build log '%s': %s", o->log_file, strerror(-lr));
}

static void build_release(struct build *b)
{
	buf_release(&b->disk);
	sparsehash_release(&b->digests);
	free(b->root_image);
	free(b->bmap);
	free(b->compressed);
	bootexport_release(&b->boot);
	staging_release(&b->staging);
	overlay_report_free(b->overlays);
	layer_free(b->layer);
	dep5_texts_release(&b->shipped);
	plan_release(&b->plan);
	plan_release(&b->twins);
	indexes_release(&b->indexes);
	sources_release(&b->sources);
}

static void options_release(struct options *o)
{
	free(o->output);
	free(o->sbom_file);
	free(o->report_file);
	free(o->log_file);
	free(o->st.cache_dir);
	free(o->st.work_dir);
	free(o->tmp_dir);
	free(o->st.lock_file);
	free(o->st.layer_registry);
	free(o->st.layer_sign_key);
	strv_release(&o->st.sources);
	cachegc_user_close(o->st.cache_user);
	settings_release_env(&o->st);
}

int main(int argc, char **argv)
{
	struct options o = { .work_lock = -1 };
	struct build b = { 0 };
	struct recipe r = { 0 };
	/*
	 * No SA_RESTART: a signal sets a flag and ends the system call mkimage was blocked in with
	 * EINTR, so no wait (a pipe, a child, a lock, an open) outlives SIGINT or SIGTERM; every wait
	 * loop checks err_interrupted(), and whatever failed with EINTR becomes "interrupted" below.
	 */
	struct sigaction sa = { .sa_handler = on_signal };
	int ret, loaded = 0;

	o.started = log_now();
	/* The caller's umask must not leak into the tree, the scripts or the outputs. */
	umask(022);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	log_file_start(); /* NAME.log has every line from the start, once NAME is known */
	ret = parse_args(&o, argc, argv);
	if (!ret && o.cachegc_run) {
		ret = run_cache_gc(&o);
		goto out;
	}
	if (!ret && o.diff_old) {
		ret = lockdiff_print(o.diff_old, o.recipe, stdout);
		goto out;
	}
	if (!ret)
		ret = recipe_load(&r, o.recipe, &recipe_checks);
	loaded = !ret;
	if (!ret && o.check) {
		struct buf out = { 0 };

		if (o.json)
			ret = recipe_format_json(&r, &out);
		else
			recipe_format(&r, &out);
		if (!ret)
			fputs(out.p, stdout);
		buf_release(&out);
		goto out;
	}
	if (!ret)
		bootcfg_mark_legacy_boot(&r); /* before the disk's layout is computed */
	if (!ret && (o.st.source_date_epoch = read_sde()) == -2)
		ret = -MKI_E_USAGE;
	if (!ret)
		ret = setup_settings(&o, &r);
	if (!ret)
		ret = run_stages(&o, &r, &b);
	if (ret == BUILD_DONE)
		ret = 0;
	if (err_interrupted())
		ret = -MKI_E_INTERRUPTED;
	if (ret == -MKI_E_INTERRUPTED)
		log_error("interrupted by signal %d; cleaned up, nothing was written%s",
			  err_interrupted(), o.log_open ? " but the report and the log" : "");
	if (ret < 0 && o.log_open)
		write_failure(&o, &r, &b, ret);
out:
	build_release(&b);
	cleanup_work_dir(&o);
	finish_log(&o);
	if (loaded)
		recipe_release(&r);
	options_release(&o);
	return err_exit_code(ret);
}
