/* The layer cache's remote side: pull and push through a registry (layerreg.h). */
#include "layerreg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layerfile.h"
#include "layersign.h"
#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "registry.h"
#include "store/cache.h"

struct layerreg {
	struct registry *g;
	struct layersign *keys;
	long grace;          /* seconds every pull or push gets, */
	uint64_t min_rate;   /* and one more per min_rate bytes of its blob */
	int failed;          /* the registry failed a pull (down, refusing, too slow): no push */
};

/* How long an operation on a blob of `size` bytes may take: the one rule of mkimage(7). */
static double bound(const struct layerreg *lr, uint64_t size)
{
	return (double)lr->grace + (double)size / (double)lr->min_rate;
}

/* "bytes/s" in the unit a person reads best. */
static void rate_text(uint64_t rate, struct buf *out)
{
	if (rate >= (1u << 30))
		buf_addf(out, "%.4g GiB/s", (double)rate / (1 << 30));
	else if (rate >= (1u << 20))
		buf_addf(out, "%.4g MiB/s", (double)rate / (1 << 20));
	else if (rate >= 1024)
		buf_addf(out, "%.4g KiB/s", (double)rate / 1024);
	else
		buf_addf(out, "%llu bytes/s", (unsigned long long)rate);
}

/* Why an operation was cut: "the pull was not over within its bound of 62 s (...): WHY". */
static void cut_text(const struct layerreg *lr, const char *what, const uint64_t *size,
		     const char *detail, struct buf *out)
{
	buf_addf(out, "the %s was not over within its bound of %.0f s (", what,
		 bound(lr, size ? *size : 0));
	if (size) {
		buf_addf(out, "%ld s, then %.1f MiB at ", lr->grace, (double)*size / (1 << 20));
		rate_text(lr->min_rate, out);
		buf_adds(out, "; MKIMAGE_REGISTRY_GRACE, MKIMAGE_REGISTRY_MIN_RATE");
	} else {
		buf_addf(out, "%ld s before a manifest gives a size; MKIMAGE_REGISTRY_GRACE",
			 lr->grace);
	}
	buf_addf(out, "): %s", detail);
}

struct layerreg *layerreg_open(const struct recipe *r, const struct settings *st)
{
	const char *url = st->layer_registry ? st->layer_registry : r->layers.registry;
	const char *sign = st->layer_sign_key ? st->layer_sign_key : r->layers.sign_key;
	struct registry_access access;
	struct layerreg *lr;
	struct buf why = { 0 };

	if (!url)
		return NULL;
	if (st->offline) {
		log_info("layer registry: --offline, '%s' is not contacted", url);
		return NULL;
	}
	lr = xcalloc(1, sizeof(*lr));
	lr->grace = st->registry_grace > 0 ? st->registry_grace : 60;
	lr->min_rate = st->registry_min_rate ? st->registry_min_rate : 1u << 20;
	access = (struct registry_access){ .auth = st->registry_auth,
					   .auth_files = &st->registry_auth_files,
					   .token_hosts = st->registry_token_hosts,
					   .stall = st->stall_timeout };
	if (registry_open(&lr->g, url, &access, &why) ||
	    layersign_load(&lr->keys, sign, &r->layers.trusted_keys)) {
		if (why.len)
			log_warn("layer registry: %s; the registry is not used", why.p);
		buf_release(&why);
		layerreg_free(lr);
		return NULL;
	}
	if (!layersign_n_trusted(lr->keys))
		log_info("layer registry: no trusted layer keys (recipe key 'layers.trusted_keys'): "
			 "nothing is pulled from '%s'", url);
	if (!layersign_can_sign(lr->keys))
		log_info("layer registry: no signing key (--layer-sign-key or 'layers.sign_key'): "
			 "nothing is pushed to '%s'", url);
	return lr;
}

void layerreg_free(struct layerreg *lr)
{
	if (!lr)
		return;
	registry_free(lr->g);
	layersign_free(lr->keys);
	free(lr);
}

/* The manifest of `key`, checked for this layer and verified: 0, -ENOENT, or refused (said). */
static int get_verified(struct layerreg *lr, const char *key, const char *tag, uint64_t max,
			struct registry_layer *l, struct buf *why)
{
	int ret = registry_get_manifest(lr->g, tag, l, why);

	if (ret)
		return ret;
	if (strcmp(l->key, key)) {
		buf_addf(why, "the manifest tagged '%s' names layer %.12s, not this one", tag, l->key);
		return -EBADMSG;
	}
	ret = layersign_verify(lr->keys, key, l->digest, l->size, l->signature, l->signer);
	if (ret == -ENOKEY)
		buf_addf(why, "it is %s%s, no key the recipe trusts", l->signer ? "signed by key "
			 : "unsigned", l->signer ? l->signer : "");
	else if (ret)
		buf_addf(why, "its signature by key %s does not verify", l->signer);
	if (!ret && l->size > max) {
		buf_addf(why, "its blob has %llu bytes, more than %llu (the 'staging-size' limit "
			 "and 256 MiB of records)", (unsigned long long)l->size,
			 (unsigned long long)max);
		ret = -MKI_E_LIMIT;
	}
	return ret;
}

/* Download into a temp file beside `path` and check it before it gets the layer's name. */
static int fetch(struct layerreg *lr, const struct registry_layer *l, const char *path,
		 struct buf *why)
{
	char *tmp = NULL, *name = xasprintf("%s@%s", registry_url(lr->g), l->digest);
	int fd, ret;

	cache_sweep_tmp(path);
	fd = ret = cache_tmp_open(path, &tmp);
	if (fd < 0) {
		buf_addf(why, "cannot create a temp file for '%s': %s", path, err_text(fd));
		goto out;
	}
	ret = registry_get_blob(lr->g, l, fd, why);
	if (!ret)
		ret = layerfile_check(fd, name); /* warns itself, naming the blob: said */
	if (close(fd) && !ret)
		ret = -errno;
	ret = ret ? ret : cache_publish(tmp, path);
	if (ret && tmp)
		unlink(tmp);
out:
	free(tmp);
	free(name);
	return ret;
}

/* What a pull that did not give a layer says: one line, at info level for a plain miss. */
static void say_not_pulled(const struct layerreg *lr, const char *key, int ret,
			   const struct registry_layer *l, const struct buf *why)
{
	struct buf text = { 0 };

	if (ret == -ENOENT) {
		log_info("layer registry: no layer %.12s in '%s'", key, registry_url(lr->g));
		return;
	}
	if ((ret == -EBADMSG || ret == -EPROTO) && !why->len) {
		log_info("layer registry: layer %.12s from '%s' not used: unpacking and "
			 "configuring instead", key, registry_url(lr->g));
		return;
	}
	if (ret == -ETIMEDOUT)
		cut_text(lr, "pull", l->key ? &l->size : NULL, why->p, &text);
	else
		buf_adds(&text, why->len ? why->p : err_text(ret));
	log_warn_instead("a tree unpacked and configured here (the same image)",
			 "layer registry: layer %.12s from '%s' not used: %s", key,
			 registry_url(lr->g), text.p);
	buf_release(&text);
}

/* The registry is down, refuses us or is too slow: this build pushes nothing to it. */
static int registry_failed(int ret)
{
	return ret == -ETIMEDOUT || ret == -EACCES || ret == -MKI_E_NETWORK;
}

/*
 * The manifest within `grace` seconds, then all of it within the bound its blob's size gives
 * (mkimage(7)): every request, the token's too, is cut at that deadline.
 */
int layerreg_pull(struct layerreg *lr, const char *cache_dir, const char *key, const char *path,
		  uint64_t max)
{
	struct registry_layer l = { 0 };
	char tag[REGISTRY_TAG_LEN + 1];
	struct buf why = { 0 };
	double t0 = log_now();
	struct stat sb;
	int lock, ret;

	if (!lr || !layersign_n_trusted(lr->keys))
		return 0;
	lock = cache_lock(cache_dir, key, 0);
	if (lock < 0)
		return 0; /* another build is writing this layer: this one configures */
	registry_tag(key, tag);
	registry_set_deadline(lr->g, t0 + bound(lr, 0));
	ret = !stat(path, &sb) ? 1 : get_verified(lr, key, tag, max, &l, &why);
	if (!ret) {
		registry_set_deadline(lr->g, t0 + bound(lr, l.size));
		ret = fetch(lr, &l, path, &why);
	}
	registry_set_deadline(lr->g, 0);
	cache_unlock(lock);
	if (ret < 0 && ret != -MKI_E_INTERRUPTED)
		say_not_pulled(lr, key, ret, &l, &why);
	else if (!ret)
		log_info("layer registry: layer %.12s pulled from '%s' (%.1f MiB) in %.2f s", key,
			 registry_url(lr->g), (double)l.size / (1 << 20), log_now() - t0);
	lr->failed |= registry_failed(ret);
	registry_layer_release(&l);
	buf_release(&why);
	if (ret == -MKI_E_INTERRUPTED)
		return ret;
	return ret >= 0;
}

/* The layer file `path` of `key`, `size` bytes, as a signed registry layer in `l`. */
static int describe(const struct layerreg *lr, const char *key, const char *path, uint64_t size,
		    struct registry_layer *l)
{
	char hex[SHA256_HEX_LEN + 1], signer[LAYERSIGN_FPR_LEN + 1];
	struct buf sig = { 0 };
	int ret = hash_file_hex(path, HASH_SHA256, hex);

	if (!ret) {
		snprintf(l->digest, sizeof(l->digest), "sha256:%s", hex);
		l->size = size;
		l->key = xstrdup(key);
		ret = layersign_sign(lr->keys, key, l->digest, l->size, &sig, signer);
	}
	if (!ret) {
		l->signature = buf_detach(&sig);
		l->signer = xstrdup(signer);
	}
	buf_release(&sig);
	return ret;
}

/* The HEAD, the hash and the upload all within the bound the layer's size gives (mkimage(7)). */
void layerreg_push(struct layerreg *lr, const char *key, const char *path, int if_missing)
{
	struct registry_layer l = { 0 };
	char tag[REGISTRY_TAG_LEN + 1];
	struct buf why = { 0 }, text = { 0 };
	double t0 = log_now();
	struct stat sb;
	int fd, ret;

	if (!lr || !layersign_can_sign(lr->keys))
		return;
	if (lr->failed) {
		log_info("layer registry: layer %.12s not pushed to '%s': its pull failed (above)",
			 key, registry_url(lr->g));
		return;
	}
	registry_tag(key, tag);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ret = fd < 0 ? -errno : fstat(fd, &sb) ? -errno : 0;
	if (!ret)
		registry_set_deadline(lr->g, t0 + bound(lr, (uint64_t)sb.st_size));
	if (!ret && if_missing && (ret = registry_has_manifest(lr->g, tag, &why)) > 0) {
		/* another machine seeded it first: the same key, so the same configured tree */
		log_info("layer registry: layer %.12s already in '%s': not pushed again", key,
			 registry_url(lr->g));
		goto out;
	}
	if (!ret)
		ret = describe(lr, key, path, (uint64_t)sb.st_size, &l);
	if (!ret)
		ret = registry_push(lr->g, tag, fd, &l, &why);
	if (ret == -ETIMEDOUT)
		cut_text(lr, "push", &(uint64_t){ (uint64_t)sb.st_size }, why.p, &text);
	else if (ret)
		buf_adds(&text, why.len ? why.p : err_text(ret));
	if (ret)
		log_warn("layer registry: layer %.12s not pushed to '%s': %s", key,
			 registry_url(lr->g), text.p);
	else
		log_info("layer registry: layer %.12s pushed to '%s' as '%s' in %.2f s", key,
			 registry_url(lr->g), tag, log_now() - t0);
out:
	registry_set_deadline(lr->g, 0);
	if (fd >= 0)
		close(fd);
	registry_layer_release(&l);
	buf_release(&why);
	buf_release(&text);
}
