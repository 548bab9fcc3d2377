/*
 * A RAUC bundle (rauc.h), front to back into one temporary beside the output: the squashfs of
 * the contents, the hash tree after it, the signature over the manifest that names the tree's
 * root, the signature's size; then fsync and rename. RAUC reads it from the end: the last 8
 * bytes give the signature's size, what is before the signature (a multiple of 4096) is the
 * squashfs and its tree, the signed manifest's verity-size says where they part.
 */
#include "rauc_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "imgtree.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/str.h"
#include "raucsign.h"
#include "sink.h"
#include "squashfs.h"
#include "tree/staging.h"
#include "verity.h"

#define MANIFEST "manifest.raucm"
/*
 * The payload's zstd level. On a 326 MiB ext4 slot image of /usr/lib/gcc, 9 takes 5.3 s of CPU
 * for 81.2 MB, 12 17 s for 80.8 MB, libsquashfs's default 15 40 s for 76.0 MB, and `rauc
 * bundle` (mksquashfs's default, gzip level 9) 39.5 s for 84.7 MB (tests/bench/79-rauc-bundle.sh).
 */
#define RAUC_ZSTD_LEVEL 9

void rauc_manifest_images(struct buf *b, const struct recipe_update *u,
			  const struct rauc_image *img, size_t n, const struct rauc_verity *v)
{
	size_t i;

	buf_addf(b, "[update]\ncompatible=%s\nversion=%s\n\n[bundle]\nformat=verity\n",
		 u->compatible, u->version);
	if (v)
		buf_addf(b, "verity-hash=%s\nverity-salt=%s\nverity-size=%" PRIu64 "\n", v->hash,
			 v->salt, v->size);
	for (i = 0; i < n; i++)
		buf_addf(b, "\n[image.%s]\nsha256=%s\nsize=%" PRIu64 "\nfilename=%s\n",
			 img[i].class, img[i].sha256, img[i].size, img[i].file);
}

void rauc_manifest(struct buf *b, const struct recipe_update *u, const char *image,
		   const char *sha256, uint64_t size, const struct rauc_verity *v)
{
	struct rauc_image one = { RAUC_SLOT_CLASS, image, "", size };

	snprintf(one.sha256, sizeof(one.sha256), "%s", sha256);
	rauc_manifest_images(b, u, &one, 1, v);
}

void rauc_salt(const char *seed, int64_t sde, uint8_t salt[32])
{
	struct hash h;
	char text[64];

	snprintf(text, sizeof(text), "\n%" PRId64, sde);
	if (hash_init(&h, HASH_SHA256)) /* OpenSSL out of memory: nothing else would work */
		abort();
	hash_update(&h, "mkimage rauc verity salt\n", 25);
	hash_update(&h, seed, strlen(seed));
	hash_update(&h, text, strlen(text));
	hash_final(&h, salt);
	hash_release(&h);
}

void rauc_put_be64(uint8_t out[8], uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		out[i] = (uint8_t)v;
}

static void hex(const uint8_t *v, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[v[i] >> 4];
		out[2 * i + 1] = digits[v[i] & 15];
	}
	out[2 * n] = 0;
}

struct rauc_ctx {
	const struct rauc_params *p;
	struct rauc_image img[RAUC_MAX_IMAGES];
	size_t n;
	uint64_t manifest_bytes;
	struct rauc_verity v;
	uint8_t salt[32];
};

/* One slot image's digest and size. */
static int image_info(struct rauc_ctx *c, struct rauc_image *im)
{
	char *path = xasprintf("%s/%s", c->p->dir, im->file);
	struct stat st;
	int ret = stat(path, &st) ? -errno : hash_file_hex(path, HASH_SHA256, im->sha256);

	if (ret)
		ret = log_errno(-MKI_E_IMAGE, "cannot read the update's slot image '%s': %s", path,
				strerror(-ret));
	im->size = ret ? 0 : (uint64_t)st.st_size;
	free(path);
	return ret;
}

/* The slot images' digests and sizes; the manifest without the verity fields beside them. */
static int contents(struct rauc_ctx *c)
{
	const struct rauc_params *p = c->p;
	char *man = xasprintf("%s/" MANIFEST, p->dir);
	struct buf text = { 0 };
	size_t i;
	int ret = 0;

	c->img[0] = (struct rauc_image){ RAUC_SLOT_CLASS, p->image, "", 0 };
	for (i = 0; i < p->n_children && i + 1 < RAUC_MAX_IMAGES; i++)
		c->img[i + 1] = (struct rauc_image){ p->child_class[i], p->child_image[i], "", 0 };
	c->n = i + 1;
	for (i = 0; !ret && i < c->n; i++)
		ret = image_info(c, &c->img[i]);
	if (ret)
		goto out;
	rauc_manifest_images(&text, p->u, c->img, c->n, NULL);
	c->manifest_bytes = text.len;
	ret = fsutil_write_atomic(man, text.p, text.len);
	if (ret)
		ret = log_errno(-MKI_E_IMAGE, "cannot write '%s': %s", man, strerror(-ret));
out:
	buf_release(&text);
	free(man);
	return ret;
}

static void add_file(struct manifest *m, const char *path, uint32_t mode, uint64_t size,
		     int64_t sde)
{
	struct manifest_entry *e = manifest_add(m, path);

	e->type = path[0] ? MF_REG : MF_DIR;
	e->mode = mode;
	e->size = size;
	e->mtime = sde;
}

/* The squashfs of the contents at the start of `k`; its size, padded to 4096, in *bytes. */
static int payload(struct rauc_ctx *c, struct sink *k, uint64_t *bytes)
{
	struct recipe_image im = { .compression = FS_COMP_ZSTD };
	struct image_params ip = { .im = &im, .source_date_epoch = c->p->source_date_epoch,
				   .level = RAUC_ZSTD_LEVEL };
	struct staging s = { .root = xstrdup(c->p->dir) };
	struct imgtree t = { 0 };
	size_t i;
	int ret;

	manifest_init(&s.manifest);
	add_file(&s.manifest, "", 0755, 0, c->p->source_date_epoch);
	add_file(&s.manifest, MANIFEST, 0644, c->manifest_bytes, c->p->source_date_epoch);
	for (i = 0; i < c->n; i++)
		add_file(&s.manifest, c->img[i].file, 0644, c->img[i].size,
			 c->p->source_date_epoch);
	manifest_sort(&s.manifest);
	ret = imgtree_build(&t, &s, &ip);
	if (!ret)
		ret = squashfs_write(&t, &ip, k);
	if (!ret)
		ret = squashfs_size_back(k->fd, 0, k->tmp, bytes);
	if (!ret && *bytes <= VERITY_BLOCK) /* RAUC wants a hash tree, so two blocks or more */
		ret = log_errno(-MKI_E_IMAGE, "the update bundle's payload is %" PRIu64 " bytes: "
				"RAUC needs more than %u", *bytes, VERITY_BLOCK);
	imgtree_release(&t);
	manifest_release(&s.manifest);
	free(s.root);
	return ret;
}

/* The payload's hash tree right after it; the signed manifest's verity fields. */
static int tree(struct rauc_ctx *c, struct sink *k, uint64_t data)
{
	struct verity_params vp = { .name = c->p->output, .no_superblock = 1 };
	struct buf seed = { 0 };
	struct sink h;
	size_t i;
	int ret;

	/* from the content: signed at the build or offline, the same bundle */
	for (i = 0; i < c->n; i++)
		buf_adds(&seed, c->img[i].sha256);
	rauc_salt(seed.p, c->p->source_date_epoch, c->salt);
	buf_release(&seed);
	memcpy(vp.salt, c->salt, sizeof(vp.salt));
	c->v.size = verity_tree_size(data, 0);
	sink_init_region(&h, k->fd, data, c->v.size, k->tmp);
	ret = verity_write(k->fd, 0, data, &vp, &h, c->v.hash);
	sink_release(&h);
	hex(c->salt, sizeof(c->salt), c->v.salt);
	return ret;
}

/* The signed manifest and the signature's size after the tree, at `off`. */
static int signature(struct rauc_ctx *c, struct sink *k, uint64_t off, uint64_t *sig_bytes)
{
	const struct recipe_update *u = c->p->u;
	struct raucsign_keys keys = { u->cert, u->key, u->keyring };
	struct buf man = { 0 }, der = { 0 };
	uint8_t be[8];
	int ret;

	rauc_manifest_images(&man, u, c->img, c->n, &c->v);
	ret = raucsign_sign(&keys, man.p, man.len, &der);
	if (!ret) {
		rauc_put_be64(be, der.len);
		ret = sink_pwrite(k, der.p, der.len, off);
		if (!ret)
			ret = sink_pwrite(k, be, sizeof(be), off + der.len);
		if (ret)
			ret = log_errno(-MKI_E_IMAGE, "cannot write the signature to '%s': %s",
					k->tmp, strerror(-ret));
		*sig_bytes = der.len;
	}
	buf_release(&man);
	buf_release(&der);
	return ret;
}

/* sign = "offline": the manifest the signing station signs, beside the unsigned bundle. */
static int manifest_out(struct rauc_ctx *c)
{
	struct buf man = { 0 };
	int ret;

	rauc_manifest_images(&man, c->p->u, c->img, c->n, &c->v);
	ret = fsutil_write_atomic(c->p->manifest, man.p, man.len);
	if (ret)
		ret = log_errno(-MKI_E_IMAGE, "cannot write '%s': %s", c->p->manifest,
				strerror(-ret));
	buf_release(&man);
	return ret;
}

/* Every part into the temporary, committed; what the report says of it. */
static int write_all(struct rauc_ctx *c, struct sink *k, struct rauc_bundle *out)
{
	int ret = contents(c);

	if (!ret)
		ret = payload(c, k, &out->payload_bytes);
	if (!ret)
		ret = tree(c, k, out->payload_bytes);
	out->tree_bytes = c->v.size;
	if (!ret && !c->p->u->sign_offline)
		ret = signature(c, k, out->payload_bytes + out->tree_bytes, &out->signature_bytes);
	if (!ret && c->p->u->sign_offline)
		ret = manifest_out(c);
	if (!ret && err_interrupted())
		ret = -MKI_E_INTERRUPTED;
	if (!ret)
		ret = hash_file_hex(k->tmp, HASH_SHA256, out->sha256);
	if (!ret)
		ret = sink_commit(k);
	if (ret < 0 && ret > -MKI_E_BASE)
		ret = log_errno(-MKI_E_IMAGE, "cannot write the update bundle '%s': %s",
				c->p->output, strerror(-ret));
	return ret;
}

int rauc_write(const struct rauc_params *p, struct rauc_bundle *out)
{
	struct rauc_ctx c = { .p = p };
	struct sink k;
	int ret;

	memset(out, 0, sizeof(*out));
	sink_init_file(&k, p->output);
	ret = write_all(&c, &k, out);
	sink_release(&k);
	if (ret)
		return ret;
	memcpy(out->verity_hash, c.v.hash, sizeof(out->verity_hash));
	out->bytes = out->payload_bytes + out->tree_bytes;
	if (!p->u->sign_offline) {
		out->bytes += out->signature_bytes + 8;
		log_info("update bundle '%s' written: %" PRIu64 " bytes, sha256 %s", p->output,
			 out->bytes, out->sha256);
		return 0;
	}
	log_info("update bundle '%s' written unsigned: %" PRIu64 " bytes, sha256 %s; sign '%s' "
		 "offline and append the signature and its size (mkimage(7), Updates)", p->output,
		 out->bytes, out->sha256, p->manifest);
	return 0;
}
