/* The layer cache: configured trees kept in the shared cache (layer.h). */
#include "layer.h"
#include "layer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layerfile.h"
#include "layerreg.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/runlimits.h"
#include "sandbox/sandbox.h"
#include "store/cache.h"
#include "store/cachegc.h"

/* The multiarch lint text is a few lines per package; far more is not ours. */
#define LINT_MAX (16u << 20)

struct layer {
	char key[SHA256_HEX_LEN + 1];
	char *path;           /* <cache>/layers/KEY; NULL: the cache is off */
	char *cache_dir;
	int restored;
	int claimed;          /* KEY is claimed: it may be stored */
	ino_t bad_ino;        /* the corrupt entry found at lookup, to be replaced; 0: none */
	const char *outcome;
	uint64_t max_entries; /* staging-entries: a larger tree is refused after the hooks */
	const struct dep5_texts *keep; /* the copyright texts stored with it (borrowed) */
	struct dep5_texts texts;       /* those restored with it, until taken */
	struct layerreg *reg;          /* the registry a miss is looked up in; NULL: none */
	int pulled;                    /* the layer came from the registry */
	uint64_t max_pull;             /* bytes a pulled layer may have */
};

static void key_plan(struct buf *out, const char *what, const struct plan *p)
{
	size_t i, j;

	for (i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->v[i];

		buf_addf(out, "%s %s:%s=%s %s %s", what, e->name, e->arch, e->version,
			 e->multi_arch ? e->multi_arch : "-", e->sha256);
		for (j = 0; j < e->n_depends; j++)
			buf_addf(out, "%s%zu", j == e->n_pre_depends ? " | " : " ", e->depends[j]);
		buf_addf(out, " %d\n", e->pre_depended);
	}
}

/* Which packages configure runs first (plan_essential_set: the Priority fields are the index's). */
static void key_essential(struct buf *out, const struct plan *p)
{
	unsigned char *in = xcalloc(p->n ? p->n : 1, 1);
	size_t i;

	plan_essential_set(p, in);
	buf_addf(out, "essential-set");
	for (i = 0; i < p->n; i++)
		if (in[i])
			buf_addf(out, " %zu", i);
	buf_addf(out, "\n");
	free(in);
}

static void key_list(struct buf *out, const char *what, const struct strv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		buf_addf(out, "%s %s\n", what, v->v[i]);
}

/*
 * What the configured tree depends on, field by field. In the key:
 *  - the layer format and mkimage's version (unpack, the database and configure are its code);
 *  - the plan: every package's name, arch, version, Multi-Arch and SHA-256 (the exact .debs; what
 *    the lock digest pins) in unpack and configure order, with the dependencies that order
 *    configuration, the essential set configured first (its Priority fields are the index's,
 *    which an archive may override: not pinned by the .debs), and the plan's architectures
 *    (dpkg's arch list, qemu registrations);
 *  - every recipe key marked as changing the tree in the recipe's key table (recipe_keys[],
 *    recipe_internal.h), by its normalized value (recipe_format_tree): today the architectures
 *    (unpack derives the arch list from them too), merged_usr (the /usr links), and the path
 *    filters (what unpack leaves out, and the dpkg.cfg.d fragment it writes). The others only
 *    choose the plan (sources, packages), come after the layer point (hooks, overlays, identity,
 *    image.*: configure_finish()) or bound the build (timeouts: a build within them configures
 *    the same tree, one beyond them fails and stores nothing);
 *  - native tools on or off, the programs --no-native-tools=PROGRAM,... left emulated, and the
 *    twins used (the proof says they change nothing; a layer from emulated scripts is still never
 *    served to a build that would use them, or the reverse);
 *  - the initramfs built once or twice (--no-initramfs-once, initramfs.h): the proof says the
 *    tree is the same, but the switch is the way back to dpkg's own way should it not be, so a
 *    build with it off never gets a layer made with it on;
 *  - SOURCE_DATE_EPOCH (every mtime mkimage writes, and the scripts' environment);
 *  - whether the sandbox has one id only (then the tree holds no owners).
 * Not in it: --limit, --jobs (bounds and speed), root or user build (layers are id-neutral,
 * layerfile.h).
 */
void layer_key_text(const struct plan *p, const struct plan *twins, const struct recipe *r,
		    const struct settings *st, int single_id, struct buf *out)
{
	buf_addf(out, "mkimage-layer %d\nmkimage %s\n", LAYERFILE_VERSION, MKI_VERSION);
	recipe_format_tree(r, out);
	key_list(out, "plan-arch", &p->archs);
	key_plan(out, "package", p);
	key_essential(out, p);
	buf_addf(out, "native-tools %s\n", st->no_native_tools ? "off" : "on");
	if (!st->no_native_tools && st->emulated_tools.n)
		key_list(out, "native-tools-emulated", &st->emulated_tools);
	if (!st->no_native_tools && twins)
		key_plan(out, "twin", twins);
	buf_addf(out, "initramfs-once %s\n", st->no_initramfs_once ? "off" : "on");
	buf_addf(out, "source-date-epoch %lld\nsingle-id %d\n", (long long)st->source_date_epoch,
		 single_id);
}

static void compute_key(struct layer *l, const struct plan *p, const struct plan *twins,
			const struct recipe *r, const struct settings *st)
{
	const struct sandbox_info *si = sandbox_get();
	struct buf text = { 0 };

	layer_key_text(p, twins, r, st, si && si->ids == SANDBOX_IDS_SINGLE, &text);
	hash_sha256_hex(text.p, text.len, l->key);
	log_block(LOG_DEBUG, text.p, text.len, "layer key %s from:", l->key);
	buf_release(&text);
}

/*
 * Fill `s` from the layer `fd` as unpack_plan() would have, and l->texts with the copyright
 * texts of `p`'s packages. 0 or a negative code (logged).
 */
static int restore(struct layer *l, int fd, struct staging *s, const struct plan *p,
		   const struct settings *st)
{
	struct buf lint = { 0 };
	int rootfd = -1, ret;

	memset(s, 0, sizeof(*s));
	manifest_init(&s->manifest);
	rootfd = ret = staging_init(s, st->work_dir);
	if (rootfd < 0)
		goto out;
	ret = layerfile_restore(fd, l->path, rootfd, s, &lint, &l->texts);
	/* the key names the plan, so only a corrupt layer holds another count */
	if (!ret && l->texts.n != p->n) {
		log_warn("the layer '%s' holds %zu copyright files for %zu packages: corrupt",
			 l->path, l->texts.n, p->n);
		ret = -EBADMSG;
	}
	if (!ret)
		ret = fsutil_write_atomic(s->lint_file, lint.p ? lint.p : "", lint.len);
	if (!ret)
		ret = manifest_save(&s->manifest, s->manifest_file);
out:
	if (rootfd >= 0)
		close(rootfd);
	if (ret)
		dep5_texts_release(&l->texts);
	buf_release(&lint);
	return ret;
}

/* 1: restored into `s`; 0: no usable layer (said why); or -MKI_E_INTERRUPTED. */
static int lookup(struct layer *l, struct staging *s, const struct plan *p,
		  const struct settings *st)
{
	double t0 = log_now();
	struct stat sb;
	int fd, ret;

	fd = open(l->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT && l->reg) {
		ret = layerreg_pull(l->reg, l->cache_dir, l->key, l->path, l->max_pull);
		if (ret < 0)
			return ret;
		l->pulled = ret;
		fd = ret ? open(l->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
		errno = ret ? errno : ENOENT;
	}
	if (fd < 0) {
		if (errno != ENOENT)
			log_warn("cannot open the layer '%s': %s", l->path, strerror(errno));
		else
			log_info("layer cache: no configured tree for this package set yet "
				 "(layer %.12s)", l->key);
		return 0;
	}
	ret = restore(l, fd, s, p, st);
	if (ret) {
		if (s->root)
			fsutil_remove_tree(s->root);
		staging_release(s);
	}
	/* Warned about in layerfile.c; this build's own tree will replace it. */
	if (ret && ret != -MKI_E_INTERRUPTED && !fstat(fd, &sb)) {
		l->bad_ino = sb.st_ino;
		log_info("layer cache: unpacking and configuring instead; the layer is replaced");
	}
	close(fd);
	if (ret)
		return ret == -MKI_E_INTERRUPTED ? ret : 0;
	log_info("layer cache: configured tree restored from layer %.12s (%zu paths) in %.2f s; "
		 "unpacking and configuration skipped", l->key, s->manifest.n, log_now() - t0);
	return 1;
}

int layer_unpack(struct staging *s, struct layer **lp, const struct plan *p,
		 const struct plan *twins, const struct recipe *r, const struct settings *st,
		 layer_unpack_fn *unpack)
{
	struct layer *l = xcalloc(1, sizeof(*l));
	int ret = 0;

	compute_key(l, p, twins, r, st);
	l->max_entries = runlimits_get(&st->limits, LIMIT_STAGING_ENTRIES);
	l->outcome = "off";
	if (!st->no_layer_cache) {
		l->outcome = "not stored";
		l->cache_dir = xstrdup(st->cache_dir);
		l->path = cache_layer_path(st->cache_dir, l->key);
		l->reg = layerreg_open(r, st);
		/* the tree is bounded by staging-size; the records by far less than 256 MiB */
		l->max_pull = runlimits_get(&st->limits, LIMIT_STAGING_SIZE) + (256ull << 20);
		/* Claimed before it is looked up: a collection cannot remove it under us. */
		l->claimed = !cachegc_claim(st->cache_user, l->key);
		ret = l->claimed ? lookup(l, s, p, st) : 0;
	}
	if (ret == 1) {
		l->restored = 1;
		l->outcome = l->pulled ? "pulled" : "reused";
		ret = 0;
	} else if (!ret) {
		ret = unpack(s, p, r, st);
	}
	*lp = l;
	return ret;
}

int layer_restored(const struct layer *l)
{
	return l && l->restored;
}

int layer_shipped(struct layer *l, struct dep5_texts *out, const struct plan *p, const char *root,
		  layer_capture_fn *capture)
{
	int ret;

	if (layer_restored(l)) {
		*out = l->texts;
		memset(&l->texts, 0, sizeof(l->texts));
		return 0;
	}
	ret = capture(out, p, root);
	if (!ret && l)
		l->keep = out;
	return ret;
}

/* Under KEY's writer lock: another build may have stored it since we looked. */
static int already_stored(const struct layer *l)
{
	struct stat sb;

	return !stat(l->path, &sb) && sb.st_ino != l->bad_ino;
}

static int store(struct layer *l, const struct staging *s, int rootfd)
{
	struct buf lint = { 0 };
	char *tmp = NULL;
	int fd, ret;

	ret = readfile_read(s->lint_file, LINT_MAX, &lint, NULL);
	if (ret && ret != -ENOENT) {
		log_warn("cannot read '%s': %s", s->lint_file, err_text(ret));
		goto out;
	}
	cache_sweep_tmp(l->path);
	fd = ret = cache_tmp_open(l->path, &tmp);
	if (fd >= 0)
		ret = layerfile_write(fd, rootfd, s, lint.p, l->keep, l->max_entries);
	/*
	 * No fsync: a layer torn by a crash fails its digest and is replaced, and syncing some
	 * hundred MiB would cost a full build more than the layer saves.
	 */
	if (fd >= 0 && close(fd) && !ret)
		ret = -errno;
	if (!ret)
		ret = cache_publish(tmp, l->path);
	else if (tmp)
		unlink(tmp);
out:
	buf_release(&lint);
	free(tmp);
	return ret;
}

void layer_save(struct layer *l, const struct staging *s, int rootfd)
{
	double t0 = log_now();
	struct stat sb;
	int lock, ret;

	/* a layer this machine had before it shared them seeds the registry */
	if (l && l->restored && !l->pulled)
		layerreg_push(l->reg, l->key, l->path, 1);
	if (!l || l->restored || !l->path || !l->claimed)
		return;
	lock = cache_lock(l->cache_dir, l->key, 0);
	if (lock == -EWOULDBLOCK) {
		log_info("layer cache: another build is storing layer %.12s", l->key);
		return;
	}
	if (lock < 0) {
		log_warn("layer cache: cannot lock layer %.12s in '%s': %s", l->key, l->cache_dir,
			 err_text(lock));
		return;
	}
	if (already_stored(l)) {
		l->outcome = "present";
		cache_unlock(lock);
		return;
	}
	ret = store(l, s, rootfd);
	cache_unlock(lock);
	if (ret == -EOPNOTSUPP || ret == -MKI_E_INTERRUPTED)
		return;
	if (ret) {
		log_warn("layer cache: cannot store the configured tree in '%s': %s", l->path,
			 err_text(ret));
		return;
	}
	l->outcome = "stored";
	log_info("layer cache: configured tree stored as layer %.12s (%.1f MiB) in %.2f s",
		 l->key, stat(l->path, &sb) ? 0.0 : (double)sb.st_size / (1 << 20),
		 log_now() - t0);
	layerreg_push(l->reg, l->key, l->path, 0);
}

const char *layer_outcome(const struct layer *l)
{
	return l ? l->outcome : NULL;
}

const char *layer_key(const struct layer *l)
{
	return l ? l->key : NULL;
}

void layer_free(struct layer *l)
{
	if (!l)
		return;
	dep5_texts_release(&l->texts);
	layerreg_free(l->reg);
	free(l->path);
	free(l->cache_dir);
	free(l);
}
