/* mkimage: wires the stages together; the only place that parses argv and calls exit(). */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "fetch.h"
#include "hooks.h"
#include "image.h"
#include "indexes.h"
#include "log.h"
#include "plan.h"
#include "recipe.h"
#include "resolve.h"
#include "sandbox.h"
#include "settings.h"
#include "sources.h"
#include "unpack.h"

enum stage_id { ST_SOURCES, ST_INDEXES, ST_RESOLVE, ST_FETCH, ST_UNPACK, ST_HOOKS, ST_IMAGE };
static const char *const stage_names[] = { "sources", "indexes", "resolve", "fetch", "unpack",
	"hooks", "image", NULL };

struct options {
	struct settings st;
	const char *recipe;
	char *output;
	int check, plan, lock_only;
	enum stage_id until;
};

static void usage(FILE *f)
{
	fputs("usage: mkimage [OPTIONS] RECIPE\n"
	      "Build an ext4 (or tar) root filesystem image for one or more Debian architectures,\n"
	      "as described by RECIPE, without root.\n\n"
	      "  -o, --output FILE       write the image to FILE (default: recipe's image.output,\n"
	      "                          else images/NAME.ext4)\n"
	      "      --cache-dir DIR     shared download cache (default: $XDG_CACHE_HOME/mkimage)\n"
	      "  -j, --jobs N            parallel downloads and unpack workers (default: 8)\n"
	      "      --source 'URI SUITE COMPONENT... [signed-by=KEYRING]'\n"
	      "                          use this repository instead of the recipe's sources\n"
	      "                          (repeatable)\n"
	      "      --offline           use only the cache; fail if anything is missing\n"
	      "      --ignore-valid-until  accept expired Release files (old snapshots)\n"
	      "      --lock[=FILE]       resolve only and write the lock file (default images/NAME.lock)\n"
	      "      --locked[=FILE]     build exactly what the lock file says\n"
	      "      --plan              resolve and print the plan, then stop\n"
	      "      --until STAGE       stop after STAGE: sources, indexes, resolve, fetch, unpack, hooks\n"
	      "      --keep-staging      keep the staging tree and print where it is\n"
	      "      --single-id         without subordinate ids, build with one id anyway\n"
	      "      --check             validate RECIPE and print it normalized, then stop\n"
	      "  -v, --verbose           more output (repeat for debug)\n"
	      "  -q, --quiet             errors only\n"
	      "  -h, --help              this text\n"
	      "  -V, --version           print the version\n\n"
	      "Exit status: 0 ok, 1 build failed, 2 usage or recipe error, 3 repository or signature\n"
	      "error, 4 resolver or lock error, 5 download or checksum error, 6 bad package or file\n"
	      "conflict, 7 sandbox, maintainer script or hook failure, 8 image error,\n"
	      "130 interrupted.\n",
	      f);
}

static void on_signal(int sig)
{
	mki_set_interrupted(sig);
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

static int parse_until(const char *s, enum stage_id *out)
{
	int i;

	for (i = 0; stage_names[i]; i++)
		if (!strcmp(s, stage_names[i])) {
			*out = (enum stage_id)i;
			return 0;
		}
	return -1;
}

static char *default_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return xasprintf("%s/mkimage", xdg);
	if (home && home[0] == '/')
		return xasprintf("%s/.cache/mkimage", home);
	return xasprintf("/var/tmp/mkimage-cache-%d", (int)getuid());
}

static int parse_args(struct options *o, int argc, char **argv)
{
	enum { O_CACHE = 256, O_SOURCE, O_OFFLINE, O_IGNORE_VU, O_LOCK, O_LOCKED, O_PLAN, O_UNTIL,
	       O_KEEP, O_CHECK, O_SINGLE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "cache-dir", required_argument, NULL, O_CACHE },
		{ "jobs", required_argument, NULL, 'j' },
		{ "source", required_argument, NULL, O_SOURCE },
		{ "offline", no_argument, NULL, O_OFFLINE },
		{ "ignore-valid-until", no_argument, NULL, O_IGNORE_VU },
		{ "lock", optional_argument, NULL, O_LOCK },
		{ "locked", optional_argument, NULL, O_LOCKED },
		{ "plan", no_argument, NULL, O_PLAN },
		{ "until", required_argument, NULL, O_UNTIL },
		{ "keep-staging", no_argument, NULL, O_KEEP },
		{ "check", no_argument, NULL, O_CHECK },
		{ "single-id", no_argument, NULL, O_SINGLE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, verbosity = 0;

	o->st.jobs = 8;
	o->until = ST_IMAGE;
	while ((c = getopt_long(argc, argv, "o:j:vqhV", longopts, NULL)) != -1) {
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
		case O_PLAN: o->plan = 1; break;
		case O_UNTIL:
			if (parse_until(optarg, &o->until)) {
				log_error("--until takes one of sources, indexes, resolve, fetch, unpack, "
					  "hooks, image; not '%s'", optarg);
				return -MKI_E_USAGE;
			}
			break;
		case O_KEEP: o->st.keep_staging = 1; break;
		case O_CHECK: o->check = 1; break;
		case O_SINGLE: o->st.single_id = 1; break;
		case 'v': verbosity++; break;
		case 'q': verbosity = -10; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("mkimage %s\n", MKI_VERSION); exit(0);
		default: usage(stderr); return -MKI_E_USAGE;
		}
	}
	log_set_level(verbosity < 0 ? LOG_ERROR : verbosity > 0 ? LOG_DEBUG : LOG_INFO);
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

static int make_dirs(const char *path)
{
	char *p = xstrdup(path), *s;
	int ret = 0;

	for (s = p + 1; *s && !ret; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) && errno != EEXIST)
			ret = -errno;
		*s = '/';
	}
	if (!ret && mkdir(p, 0755) && errno != EEXIST)
		ret = -errno;
	free(p);
	return ret;
}

static int setup_settings(struct options *o, const struct recipe *r)
{
	const char *tmp = getenv("TMPDIR");
	char *tmpl, *abs;

	if (!o->st.cache_dir)
		o->st.cache_dir = default_cache_dir();
	if (make_dirs(o->st.cache_dir) || !(abs = realpath(o->st.cache_dir, NULL))) {
		log_error("cannot create cache directory '%s': %s (choose another with --cache-dir)",
			  o->st.cache_dir, strerror(errno));
		return -MKI_E_USAGE;
	}
	free(o->st.cache_dir);
	o->st.cache_dir = abs;
	if (!o->st.lock_file)
		o->st.lock_file = xasprintf("images/%s.lock", r->name);
	if (!o->output)
		o->output = r->image.output ? xstrdup(r->image.output)
					    : xasprintf("images/%s.%s", r->name,
							r->image.format == IMAGE_TAR ? "tar" : "ext4");
	tmpl = xasprintf("%s/mkimage.XXXXXX", tmp && *tmp ? tmp : "/var/tmp");
	if (!mkdtemp(tmpl)) {
		log_error("cannot create a work directory '%s': %s (set TMPDIR)", tmpl, strerror(errno));
		free(tmpl);
		return -MKI_E_USAGE;
	}
	o->st.work_dir = tmpl;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_DP || flag == FTW_D)
		chmod(path, 0700);
	return remove(path) && errno != ENOENT ? -1 : 0;
}

static void cleanup_work_dir(struct options *o)
{
	if (!o->st.work_dir)
		return;
	if (o->st.keep_staging) {
		log_info("staging kept in '%s'", o->st.work_dir);
		return;
	}
	nftw(o->st.work_dir, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
}

static void print_plan(const struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->v[i];

		printf("%s:%s=%s %llu %s\n", e->name, e->arch, e->version, (unsigned long long)e->size,
		       e->sha256);
	}
}

/* Stop between stages when a signal arrived or --until says so. */
static int stop_after(const struct options *o, enum stage_id id, int ret)
{
	if (!ret && mki_interrupted())
		return -MKI_E_INTERRUPTED;
	if (!ret && o->until == id) {
		log_info("stopped after stage '%s' (--until)", stage_names[id]);
		return 1;
	}
	return ret;
}

struct build {
	struct sources sources;
	struct indexes indexes;
	struct plan plan;
	struct stage stage;
	struct fetch_stats fetch;
};

static int build_image(struct options *o, const struct recipe *r, struct build *b)
{
	struct image_params ip = { 0 };
	int ret;

	ret = stop_after(o, ST_SOURCES, sources_load(&b->sources, r, &o->st));
	if (!ret)
		ret = stop_after(o, ST_INDEXES, indexes_fetch(&b->indexes, &b->sources, r, &o->st));
	if (!ret)
		ret = resolve_plan(&b->plan, r, &b->indexes, &o->st);
	if (!ret && o->plan) {
		print_plan(&b->plan);
		return 1;
	}
	if (!ret && o->lock_only) {
		ret = resolve_write_lock(&b->plan, r, &b->indexes, o->st.lock_file);
		if (!ret)
			log_info("lock written to '%s'", o->st.lock_file);
		return ret ? ret : 1;
	}
	ret = stop_after(o, ST_RESOLVE, ret);
	if (!ret && o->until >= ST_UNPACK) {
		struct sandbox_opts so = { .allow_single_id = o->st.single_id };

		ret = sandbox_check(&so); /* before downloading: no subordinate ids is said up front */
	}
	if (!ret)
		ret = stop_after(o, ST_FETCH, fetch_plan(&b->plan, &o->st, &b->fetch));
	/* Unpack, hooks and the image writer run in one user namespace (DESIGN.md section 4). */
	if (!ret) {
		struct sandbox_opts so = { .allow_single_id = o->st.single_id };

		ret = sandbox_enter(&so);
	}
	if (!ret)
		ret = stop_after(o, ST_UNPACK, unpack_plan(&b->stage, &b->plan, r, &o->st));
	if (!ret)
		ret = stop_after(o, ST_HOOKS, hooks_run(&b->stage, &b->plan, r, &o->st));
	if (ret)
		return ret;
	ip.im = &r->image;
	ip.output = o->output;
	ip.source_date_epoch = o->st.source_date_epoch;
	memcpy(ip.seed, r->digest, sizeof(ip.seed));
	ret = image_write(&b->stage, &ip);
	if (!ret)
		log_info("image written to '%s'", o->output);
	return ret;
}

static void build_release(struct build *b)
{
	stage_release(&b->stage);
	plan_release(&b->plan);
	indexes_release(&b->indexes);
	sources_release(&b->sources);
}

static void options_release(struct options *o)
{
	free(o->output);
	free(o->st.cache_dir);
	free(o->st.work_dir);
	free(o->st.lock_file);
	strv_release(&o->st.sources);
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct build b = { 0 };
	struct recipe r = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	int ret, loaded = 0;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = parse_args(&o, argc, argv);
	if (!ret)
		ret = recipe_load(&r, o.recipe);
	loaded = !ret;
	if (!ret && o.check) {
		struct buf out = { 0 };

		recipe_format(&r, &out);
		fputs(out.p, stdout);
		buf_release(&out);
		goto out;
	}
	if (!ret && (o.st.source_date_epoch = read_sde()) == -2)
		ret = -MKI_E_USAGE;
	if (!ret)
		ret = setup_settings(&o, &r);
	if (!ret)
		ret = build_image(&o, &r, &b);
	if (ret == 1)
		ret = 0;
	if (mki_interrupted())
		ret = -MKI_E_INTERRUPTED;
	if (ret == -MKI_E_INTERRUPTED)
		log_error("interrupted by signal %d; cleaned up, nothing was written", mki_interrupted());
out:
	build_release(&b);
	cleanup_work_dir(&o);
	if (loaded)
		recipe_release(&r);
	options_release(&o);
	return mki_exit_code(ret);
}
