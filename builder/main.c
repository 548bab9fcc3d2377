/*
 * mkimage: the command line (options, --help), then the build's table of stages (pipeline.h);
 * the only place that parses argv and calls exit().
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/bootcfg.h"
#include "configure/overlay.h"
#include "emit/lockdiff.h"
#include "image/format.h"
#include "layer/registry.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/runlimits.h"
#include "pipeline/pipeline.h"
#include "pipeline/sdk.h"
#include "recipe/recipe.h"
#include "store/cachegc.h"

/* What the recipe asks of later families: its overlays read and its image format known. */
static const struct recipe_checks recipe_checks = { overlay_check, format_recipe_check };

enum { O_CACHE = 256, O_SOURCE, O_OFFLINE, O_IGNORE_VU, O_ROLLBACK, O_LOCK, O_LOCKED, O_PLAN,
       O_UNTIL, O_KEEP, O_CHECK, O_SINGLE, O_VERIFY, O_NO_NATIVE, O_LIMIT, O_DIFF, O_CACHE_GC,
       O_NO_HOST_TWINS, O_NO_LAYER, O_LAYER_REGISTRY, O_LAYER_SIGN_KEY, O_JSON, O_NO_INITRAMFS_ONCE,
       O_ALLOW_STALE, O_SDK, O_SDK_DIR };

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
	{ "allow-stale", O_ALLOW_STALE, required_argument, "SUITE,...",
	  "\nwhen the mirror of SUITE is mid-sync, build with its last\n"
	  "verified indexes while valid (\"updates\": each updates or\n"
	  "security suite, left out if none was kept)" },
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
	{ "no-native-tools", O_NO_NATIVE, optional_argument, "PROGRAM,...",
	  "\nemulate every target program while configuring, even\n"
	  "those the host has in the very same version; with\n"
	  "names, only the programs of those names" },
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
	{ "sdk", O_SDK, optional_argument, "LOCK",
	  "build the image's cross-building SDK, NAME-sdk.tar.zst,\n"
	  "at the versions of the image's lock (default: beside\nthe image)" },
	{ "sdk-dir", O_SDK_DIR, required_argument, "DIR",
	  "with --sdk: the SDK unpacked as DIR too (DIR must not exist)" },
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
		     "Build a bootable disk (GPT or MBR; ext4, FAT and squashfs partitions, "
		     "dm-verity)\nor a root filesystem image (ext4, squashfs or tar) of one or more "
		     "Debian\narchitectures, as described by RECIPE, without root.\n\n");
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

/* --cache-dir's default (mkimage(1)): $XDG_CACHE_HOME/mkimage, else ~/.cache/mkimage. */
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
	int ret = registry_open(&g, url, &(struct registry_access){ 0 }, &why);

	if (ret)
		log_error("--layer-registry: %s", why.p);
	registry_free(g);
	buf_release(&why);
	return ret ? -1 : 0;
}

/*
 * --no-native-tools=PROGRAM,...: program names (the basename of a target program, as the
 * exec profile shows it) into `out`; -1 (logged) for an empty or path-like name.
 */
static int parse_emulated_tools(const char *list, struct strv *out)
{
	for (const char *p = list;; p++) {
		size_t n = strcspn(p, ",");
		char *name = xstrndup(p, n);

		if (!n || memchr(p, '/', n) || !strcmp(name, ".") || !strcmp(name, "..")) {
			log_error("--no-native-tools takes program names separated by commas, such as "
				  "'dracut-install' or 'cp,dracut-install'; not '%s'", list);
			free(name);
			return -1;
		}
		strv_push_take(out, name);
		p += n;
		if (!*p)
			return 0;
	}
}

static int parse_args(struct build_opts *o, int argc, char **argv)
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
		case O_ALLOW_STALE: strv_push(&o->st.allow_stale, optarg); break;
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
			if (pipeline_parse_until(optarg, &o->until)) {
				log_error("--until takes one of sources, indexes, resolve, fetch, unpack, "
					  "configure, image; not '%s'", optarg);
				return -MKI_E_USAGE;
			}
			break;
		case O_KEEP: o->st.keep_staging = 1; break;
		case O_SDK: o->sdk = 1; o->sdk_lock = optarg; break;
		case O_SDK_DIR: o->sdk_dir = optarg; break;
		case O_CHECK: o->check = 1; break;
		case O_SINGLE: o->st.single_id = 1; break;
		case O_NO_NATIVE:
			if (!optarg)
				o->st.no_native_tools = 1;
			else if (parse_emulated_tools(optarg, &o->st.emulated_tools))
				return -MKI_E_USAGE;
			break;
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
	if (o->sdk_dir && !o->sdk) {
		log_error("--sdk-dir names where the SDK is unpacked: give --sdk too");
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

/*
 * --sdk: where the image would be (as the pipeline names it), its lock beside it unless
 * --sdk=LOCK names it, and the SDK's archive beside the image (NAME-sdk.tar.zst) unless -o
 * names it; then the SDK's recipe (sdk.h). `o->output` becomes the tar that is compressed.
 */
static int sdk_start(struct build_opts *o, const struct recipe *r, struct sdk *s)
{
	char *image = r->disk.set ? (r->disk.output ? xstrdup(r->disk.output)
						    : xasprintf("images/%s.img", r->name))
				  : (r->image.output ? xstrdup(r->image.output)
						     : xasprintf("images/%s.%s", r->name,
								 r->image.format));
	int stem = build_output_stem(image), ret;
	char *lock = o->sdk_lock ? xstrdup(o->sdk_lock) : xasprintf("%.*s.lock", stem, image);
	char *tar;

	if (o->sdk_dir && !access(o->sdk_dir, F_OK)) {
		log_error("--sdk-dir '%s' exists: name a directory to create", o->sdk_dir);
		free(image);
		free(lock);
		return -MKI_E_USAGE;
	}
	if (o->output && !str_ends_with(o->output, ".tar.zst")) {
		log_error("with --sdk, -o names the SDK's archive, which ends in .tar.zst (not "
			  "'%s')", o->output);
		free(image);
		free(lock);
		return -MKI_E_USAGE;
	}
	tar = o->output ? xstrndup(o->output, strlen(o->output) - 4)
			: xasprintf("%.*s-sdk.tar", stem, image);
	free(o->output);
	o->output = tar;
	ret = sdk_prepare(s, r, lock, tar, &recipe_checks);
	free(image);
	free(lock);
	return ret;
}

static void options_release(struct build_opts *o)
{
	free(o->output);
	free(o->st.cache_dir);
	free(o->st.work_dir);
	free(o->st.lock_file);
	free(o->st.layer_registry);
	free(o->st.layer_sign_key);
	strv_release(&o->st.sources);
	strv_release(&o->st.allow_stale);
	strv_release(&o->st.emulated_tools);
	cachegc_user_close(o->st.cache_user);
	settings_release_env(&o->st);
}

int main(int argc, char **argv)
{
	struct build_opts o = { 0 };
	struct build b = { .work_lock = -1 };
	struct recipe r = { 0 };
	struct sdk sdk = { 0 };
	const struct recipe *build_r = &r; /* what the stages build: the recipe, or the SDK's */
	/*
	 * No SA_RESTART: a signal sets a flag and ends the system call mkimage was blocked in with
	 * EINTR, so no wait (a pipe, a child, a lock, an open) outlives SIGINT or SIGTERM; every wait
	 * loop checks err_interrupted(), and whatever failed with EINTR becomes "interrupted"
	 * (pipeline_finish).
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
	if (!ret && !o.st.cache_dir)
		o.st.cache_dir = default_cache_dir();
	if (!ret && o.cachegc_run) {
		ret = cachegc_expire(o.st.cache_dir, o.gc_limit);
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
	if (!ret && o.sdk && (ret = sdk_start(&o, &r, &sdk)) == 0) {
		build_r = &sdk.recipe;
		b.sdk = &sdk;
		o.st.native_only = 1; /* the SDK's own packages are the host's: nothing emulated */
	}
	if (!ret)
		ret = pipeline_setup(&o, build_r, &b);
	if (!ret)
		ret = pipeline_run(&o, build_r, &b);
	ret = pipeline_finish(&o, build_r, &b, ret);
out:
	ret = log_fail_on_errors(ret, o.check ? "check" : "setup");
	pipeline_release(&o, &b);
	sdk_release(&sdk);
	if (loaded)
		recipe_release(&r);
	options_release(&o);
	return err_exit_code(ret);
}
