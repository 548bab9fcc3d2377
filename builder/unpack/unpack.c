/*
 * Unpack: worker threads decode .debs (decompression is the cost) a bounded window ahead of the
 * main thread, writing the contents of regular files into the spool (spool.h), and the main
 * thread applies them strictly in plan order, moving each spooled file into place with one
 * rename. Only the main thread touches the tree, the manifest and the log, so the result never
 * depends on thread timing.
 *
 * Paths are resolved in userspace with chroot semantics (symlinks followed as dpkg does, an
 * absolute link restarts at the staging root, a link climbing above the root is refused), then
 * the canonical directory is opened with beneath_open_canonical (openat2, no symlinks) so the
 * kernel guarantees that nothing outside the root is ever reached.
 */
#include "unpack.h"
#include "unpack_ctx.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "abilint.h"
#include "debian/arch.h"
#include "debian/deb.h"
#include "debian/overwrite.h"
#include "debian/pathfilter.h"
#include "debian/pkgpath.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/runlimits.h"
#include "lib/str.h"
#include "lib/workpool.h"
#include "pkg.h"
#include "sandbox/sandbox.h"
#include "tree/dpkgdb.h"
#include "tree/spool.h"

/* --- what unpack itself creates: merged-/usr, the dpkg database --------------------------- */

/* Debian's merged-/usr links (debootstrap's table), before any package is unpacked. */
static const char *extra_lib_dirs(const char *arch)
{
	static const struct { const char *arch, *dirs; } t[] = {
		{ "amd64", "lib32 lib64 libx32" }, { "i386", "lib64 libx32" },
		{ "mips", "lib32 lib64" }, { "mipsel", "lib32 lib64" },
		{ "mips64el", "lib32 lib64 libo32" }, { "powerpc", "lib64" },
		{ "ppc64", "lib32 lib64" }, { "ppc64el", "lib64" }, { "s390x", "lib32" },
		{ "sparc64", "lib32 lib64" }, { "x32", "lib32 lib64 libx32" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].arch, arch))
			return t[i].dirs;
	return "";
}

static int merged_link(struct unpack_ctx *c, const char *dir)
{
	char *usrdir = xasprintf("usr/%s", dir), *target = xasprintf("usr/%s", dir);
	struct stat st;
	int r = staging_mkdirs(&c->w, usrdir);

	if (!r && fstatat(c->w.rootfd, dir, &st, AT_SYMLINK_NOFOLLOW)) {
		if (symlinkat(target, c->w.rootfd, dir)) {
			r = -errno;
			log_error("cannot create merged-/usr link '/%s': %s", dir, strerror(errno));
		} else {
			staging_chown(&c->w, c->w.rootfd, dir, 0, 0);
			unpack_set_times(c->w.rootfd, dir, c->w.mtime);
			staging_own_entry(&c->w, dir, MF_SYMLINK, 0777)->target = xstrdup(target);
		}
	}
	free(usrdir);
	free(target);
	return r;
}

static int merged_usr(struct unpack_ctx *c, const struct strv *archs)
{
	struct strv dirs = { 0 };
	size_t i;
	int r = 0;

	strv_push(&dirs, "bin");
	strv_push(&dirs, "sbin");
	strv_push(&dirs, "lib");
	for (i = 0; i < archs->n; i++) {
		char *list = xstrdup(extra_lib_dirs(archs->v[i])), *tok, *save = NULL;

		for (tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (!strv_contains(&dirs, tok))
				strv_push(&dirs, tok);
		free(list);
	}
	for (i = 0; i < dirs.n && !r; i++)
		r = merged_link(c, dirs.v[i]);
	strv_release(&dirs);
	return r;
}

/* Directories were made 0700 so an unprivileged unpack can fill them: now their real modes. */
static int finish_dirs(struct unpack_ctx *c)
{
	size_t i;

	manifest_sort(c->w.m);
	for (i = c->w.m->n; i-- > 0;) {
		const struct manifest_entry *me = c->w.m->v[i];
		const char *p = me->path;
		struct timespec ts[2] = { { .tv_sec = me->mtime }, { .tv_sec = me->mtime } };
		int fd;

		if (me->type != MF_DIR)
			continue;
		fd = unpack_open_beneath(c->w.rootfd, p, O_RDONLY);
		if (fd < 0 || fchmod(fd, me->mode) || futimens(fd, ts)) {
			int err = fd < 0 ? -fd : errno;

			log_error("cannot set the mode of '/%s': %s", me->path, strerror(err));
			if (fd >= 0)
				close(fd);
			return -err;
		}
		close(fd);
	}
	return 0;
}

/* --- multiarch lint ------------------------------------------------------------------------ */

static int has_component(const char *path, const char *comp)
{
	size_t n = strlen(comp);
	const char *p;

	for (p = strstr(path, comp); p; p = strstr(p + 1, comp))
		if ((p == path || p[-1] == '/') && (p[n] == '/' || !p[n]))
			return 1;
	return 0;
}

struct lint {
	struct buf out;
	const struct strv *archs;
	unsigned *count, shared;
};

static void lint_pkg(struct unpack_ctx *c, const struct pkg *k, struct lint *l)
{
	const struct arch *a = arch_find(k->pe->arch);
	size_t i, ai;

	if (!k->ma_same || !a)
		return;
	for (ai = 0; ai < l->archs->n && strcmp(l->archs->v[ai], a->name); ai++)
		;
	for (i = 0; i < k->n_list; i++) {
		const struct manifest_entry *me;

		if (!k->list[i].pkgpath || k->list[i].type == MF_DIR ||
		    has_component(k->list[i].treepath, a->triplet))
			continue;
		me = manifest_get(c->w.m, k->list[i].treepath);
		if (!me)
			continue;
		buf_addf(&l->out, "%s\t%s\t/%s\t%s\n", a->name, k->dpkg_name, k->list[i].treepath,
			 me->owners.n > 1 ? "shared" : "alone");
		l->count[ai < l->archs->n ? ai : l->archs->n]++;
		l->shared += me->owners.n > 1;
	}
}

/* Per arch, files of M-A same packages outside that arch's triplet directories. */
static int write_lint(struct unpack_ctx *c, const char *file, const struct strv *archs)
{
	struct lint l = { .archs = archs, .count = xcalloc(archs->n + 1, sizeof(unsigned)) };
	struct buf sum = { 0 };
	FILE *f;
	size_t i;
	int r = 0;

	buf_adds(&l.out, "# arch\tpackage\tpath outside the arch's triplet directories\tshared\n");
	for (i = 0; i < c->n_pkgs; i++)
		lint_pkg(c, &c->pkgs[i], &l);
	f = fopen(file, "we");
	if (!f || fwrite(l.out.p, 1, l.out.len, f) != l.out.len)
		r = -EIO;
	if (f && fclose(f))
		r = -EIO;
	if (r)
		log_error("cannot write the multiarch lint '%s': %s", file, strerror(errno));
	buf_adds(&sum, "");
	for (i = 0; i < archs->n; i++)
		buf_addf(&sum, "%s%s %u", i ? ", " : "", archs->v[i], l.count[i]);
	/* the work directory goes with the build: the list itself is in the build log */
	if (!r)
		log_info("multiarch lint: files of M-A same packages outside their triplet "
			 "directories: %s (%u shared by several archs; listed in the build log)",
			 sum.p, l.shared);
	if (!r)
		log_block(LOG_DEBUG, l.out.p, l.out.len, "multiarch lint:");
	buf_release(&sum);
	buf_release(&l.out);
	free(l.count);
	return r;
}

/* --- the stage ----------------------------------------------------------------------------- */

static void plan_archs(const struct plan *p, const struct recipe *r, struct strv *out)
{
	size_t i;

	if (p->archs.n) {
		for (i = 0; i < p->archs.n; i++)
			strv_push(out, p->archs.v[i]);
		return;
	}
	recipe_all_archs(r, out);
}

/*
 * A downloaded .deb refused for a limit leaves the cache (a local one is the user's file and
 * stays): the cache never keeps what was refused.
 */
static void evict(const struct pkg *k)
{
	if (!k->refused || !k->pe->url || !k->pe->path)
		return;
	if (!unlink(k->pe->path))
		log_info("removed the refused '%s' from the cache", k->pe->path);
	else if (errno != ENOENT)
		log_warn("cannot remove the refused '%s' from the cache: %s", k->pe->path,
			 strerror(errno));
}

static int apply_all(struct unpack_ctx *c, struct workpool *pool)
{
	struct progress prog;
	size_t i;
	int r = 0;

	log_progress_begin(&prog, "unpack", c->n_pkgs, 0);
	for (i = 0; i < c->n_pkgs && !r; i++) {
		struct pkg *k = &c->pkgs[i];

		workpool_wait(pool, i);
		if (err_interrupted())
			r = -MKI_E_INTERRUPTED;
		else if (k->err)
			log_error("%s", k->errmsg ? k->errmsg : "decoding failed");
		r = r ? r : k->err;
		if (!r)
			r = unpack_apply_pkg(c, k);
		if (r)
			evict(k);
		pkg_drop_files(k);
		workpool_done(pool, i);
		log_progress_add(&prog, 1);
	}
	log_progress_end(&prog);
	return r;
}

/* Worker thread: decode package `i`; what it holds counts against the decode-ahead budget. */
static uint64_t decode_job(void *arg, size_t i)
{
	struct unpack_ctx *c = arg;
	struct pkg *k = &c->pkgs[i];

	k->err = pkg_decode(k, c->stream_max);
	return k->mem + k->meta;
}

static int run_pool(struct unpack_ctx *c, const struct settings *st)
{
	struct workpool_spec spec = { .n = c->n_pkgs, .budget = DECODE_BUDGET,
				      .job = decode_job, .arg = c };
	struct workpool *pool;
	int r, started;

	spec.threads = workpool_threads(st->jobs, c->n_pkgs);
	spec.window = DECODE_AHEAD * spec.threads;
	started = workpool_start(&pool, &spec);
	if (started < 0) {
		log_error("cannot start unpack worker threads");
		return started;
	}
	log_debug("unpacking %zu packages with %d decoder thread%s", c->n_pkgs, started,
		  started == 1 ? "" : "s");
	r = apply_all(c, pool);
	workpool_finish(pool);
	return r;
}

static int setup_root(struct staging *out, struct unpack_ctx *c, const struct settings *st)
{
	c->w.rootfd = staging_init(out, st->work_dir);
	if (c->w.rootfd < 0)
		return c->w.rootfd;
	staging_chown(&c->w, c->w.rootfd, "", 0, 0);
	staging_own_entry(&c->w, "", MF_DIR, 0755);
	return spool_open(st->work_dir, &c->spool_fd);
}

static void init_pkgs(struct unpack_ctx *c, const struct plan *p)
{
	size_t i;

	c->n_pkgs = p->n;
	c->pkgs = xcalloc(p->n ? p->n : 1, sizeof(*c->pkgs));
	for (i = 0; i < p->n; i++) {
		c->pkgs[i].pe = &p->v[i];
		c->pkgs[i].lim = c->lim;
		c->pkgs[i].filter = &c->filter;
		c->pkgs[i].id = i;
		c->pkgs[i].spool_fd = c->spool_fd;
		c->pkgs[i].dpkg_name = plan_entry_dpkg_name(&p->v[i]);
		c->pkgs[i].ma_same = p->v[i].multi_arch && !strcmp(p->v[i].multi_arch, "same");
	}
}

static int check_plan(const struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!p->v[i].path) {
			log_error("package '%s:%s' has no local file to unpack (not fetched?)",
				  p->v[i].name, p->v[i].arch);
			return -MKI_E_PACKAGE;
		}
	return 0;
}

/* The dpkg database's view of each package, in plan order; lists[i] is info/PKG.list. */
static void db_views(struct unpack_ctx *c, struct dpkgdb_pkg *v, struct buf *lists)
{
	size_t i, j;

	for (i = 0; i < c->n_pkgs; i++) {
		const struct pkg *k = &c->pkgs[i];

		buf_adds(&lists[i], "");
		for (j = 0; j < k->n_list; j++)
			if (k->list[j].pkgpath)
				buf_addf(&lists[i], "%s\n", k->list[j].pkgpath);
		v[i] = (struct dpkgdb_pkg){ .control = &k->ctl, .dpkg_name = k->dpkg_name,
					    .conffiles = &k->conffiles, .conffile_md5s = &k->md5s,
					    .deb = k->deb, .list = &lists[i], .md5sums = &k->md5sums };
	}
}

/* The image's own dpkg goes on leaving out what the recipe's path filters left out. */
static int write_filter_cfg(struct unpack_ctx *c)
{
	struct buf b = { 0 };
	int r;

	if (!c->filter.n)
		return 0;
	pathfilter_format_dpkg_cfg(&c->filter, &b);
	r = staging_mkdirs(&c->w, "etc/dpkg/dpkg.cfg.d");
	if (!r)
		r = staging_write_file(&c->w, PATHFILTER_DPKG_CFG, b.p, b.len, 0644);
	buf_release(&b);
	return r;
}

static int write_db(struct unpack_ctx *c, const struct strv *archs)
{
	struct dpkgdb_pkg *v = xcalloc(c->n_pkgs ? c->n_pkgs : 1, sizeof(*v));
	struct buf *lists = xcalloc(c->n_pkgs ? c->n_pkgs : 1, sizeof(*lists));
	size_t i;
	int r;

	db_views(c, v, lists);
	r = dpkgdb_write(&c->w, v, c->n_pkgs, archs);
	if (!r)
		r = write_filter_cfg(c);
	for (i = 0; i < c->n_pkgs; i++)
		buf_release(&lists[i]);
	free(lists);
	free(v);
	return r;
}

static int finish(struct unpack_ctx *c, struct staging *out, const struct strv *archs)
{
	int r = write_db(c, archs);

	if (!r)
		r = finish_dirs(c);
	if (!r)
		r = write_lint(c, out->lint_file, archs);
	if (!r && (r = manifest_save(c->w.m, out->manifest_file)))
		log_error("cannot save the manifest '%s': %s", out->manifest_file, strerror(-r));
	if (!r && c->nodes_skipped)
		log_info("%u device node%s recorded in the manifest only (mknod needs privilege)",
			 c->nodes_skipped, c->nodes_skipped == 1 ? "" : "s");
	return r;
}

int unpack_plan(struct staging *out, const struct plan *p, const struct recipe *r,
		const struct settings *st)
{
	struct unpack_ctx c = { .w = { .rootfd = -1, .can_chown = 1 }, .cache_fd = -1, .lim = &st->limits,
			 .spool_fd = -1 };
	struct strv archs = { 0 };
	double t0 = log_now();
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	manifest_init(&out->manifest);
	c.w.m = &out->manifest;
	c.w.mtime = st->source_date_epoch >= 0 ? st->source_date_epoch : 0;
	c.stream_max = st->stream_over;
	plan_archs(p, r, &archs);
	pathfilter_build(&c.filter, r->minimize, &r->locales, &r->path_exclude, &r->path_include);
	ret = check_plan(p);
	if (!ret)
		ret = setup_root(out, &c, st);
	if (!ret && r->merged_usr)
		ret = merged_usr(&c, &archs);
	init_pkgs(&c, p);
	if (!ret && p->n)
		ret = run_pool(&c, st);
	unpack_cache_drop(&c);
	if (!ret)
		ret = finish(&c, out, &archs);
	if (!ret)
		abilint_warn(p, c.pkgs, c.n_pkgs);
	if (!ret)
		log_info("unpacked %zu packages (%zu paths) in %.2f s", p->n, out->manifest.n,
			 log_now() - t0);
	out->filtered = c.filtered;
	pathfilter_release(&c.filter);
	for (i = 0; i < c.n_pkgs; i++)
		pkg_release(&c.pkgs[i]);
	free(c.pkgs);
	spool_close(st->work_dir, c.spool_fd);
	if (c.w.rootfd >= 0)
		close(c.w.rootfd);
	strv_release(&archs);
	return ret;
}
