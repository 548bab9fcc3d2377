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
};

struct layerreg *layerreg_open(const struct recipe *r, const struct settings *st)
{
	const char *url = st->layer_registry ? st->layer_registry : r->layers.registry;
	const char *sign = st->layer_sign_key ? st->layer_sign_key : r->layers.sign_key;
	struct layerreg *lr;
	struct buf why = { 0 };

	if (!url)
		return NULL;
	if (st->offline) {
		log_info("layer registry: --offline, '%s' is not contacted", url);
		return NULL;
	}
	lr = xcalloc(1, sizeof(*lr));
	if (registry_open(&lr->g, url, st->registry_auth, &st->registry_auth_files,
			  st->stall_timeout, &why) ||
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
	ret = !stat(path, &sb) ? 1 : get_verified(lr, key, tag, max, &l, &why);
	if (!ret)
		ret = fetch(lr, &l, path, &why);
	cache_unlock(lock);
	if (ret == -ENOENT)
		log_info("layer registry: no layer %.12s in '%s'", key, registry_url(lr->g));
	else if ((ret == -EBADMSG || ret == -EPROTO) && !why.len)
		log_info("layer registry: layer %.12s from '%s' not used: unpacking and configuring "
			 "instead", key, registry_url(lr->g));
	else if (ret < 0 && ret != -MKI_E_INTERRUPTED)
		log_warn("layer registry: layer %.12s from '%s' not used: %s; unpacking and "
			 "configuring instead", key, registry_url(lr->g),
			 why.len ? why.p : err_text(ret));
	else if (!ret)
		log_info("layer registry: layer %.12s pulled from '%s' (%.1f MiB) in %.2f s", key,
			 registry_url(lr->g), (double)l.size / (1 << 20), log_now() - t0);
	registry_layer_release(&l);
	buf_release(&why);
	if (ret == -MKI_E_INTERRUPTED)
		return ret;
	return ret >= 0;
}

void layerreg_push(struct layerreg *lr, const char *key, const char *path, int if_missing)
{
	struct registry_layer l = { 0 };
	char tag[REGISTRY_TAG_LEN + 1], hex[SHA256_HEX_LEN + 1];
	char signer[LAYERSIGN_FPR_LEN + 1];
	struct buf sig = { 0 }, why = { 0 };
	double t0 = log_now();
	struct stat sb;
	int fd, ret;

	if (!lr || !layersign_can_sign(lr->keys))
		return;
	registry_tag(key, tag);
	if (if_missing && (ret = registry_has_manifest(lr->g, tag, &why))) {
		if (ret < 0)
			log_warn("layer registry: cannot tell whether '%s' has layer %.12s: %s",
				 registry_url(lr->g), key, why.p);
		buf_release(&why);
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ret = fd < 0 ? -errno : fstat(fd, &sb) ? -errno : hash_file_hex(path, HASH_SHA256, hex);
	if (!ret) {
		snprintf(l.digest, sizeof(l.digest), "sha256:%s", hex);
		l.size = (uint64_t)sb.st_size;
		l.key = xstrdup(key);
		ret = layersign_sign(lr->keys, key, l.digest, l.size, &sig, signer);
	}
	if (!ret) {
		l.signature = buf_detach(&sig);
		l.signer = xstrdup(signer);
		ret = registry_push(lr->g, tag, fd, &l, &why);
	}
	if (fd >= 0)
		close(fd);
	if (ret)
		log_warn("layer registry: layer %.12s not pushed to '%s': %s", key,
			 registry_url(lr->g), why.len ? why.p : err_text(ret));
	else
		log_info("layer registry: layer %.12s pushed to '%s' as '%s' in %.2f s", key,
			 registry_url(lr->g), tag, log_now() - t0);
	registry_layer_release(&l);
	buf_release(&sig);
	buf_release(&why);
}
