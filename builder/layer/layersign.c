/* Ed25519 signatures over layers (layersign.h), through OpenSSL's EVP interface. */
#include "layersign.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <string.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/readfile.h"

#define KEY_FILE_MAX (64u << 10)
#define SIG_LEN 64

struct layersign {
	EVP_PKEY *sign;
	char sign_fpr[LAYERSIGN_FPR_LEN + 1];
	EVP_PKEY **trusted;
	char (*fpr)[LAYERSIGN_FPR_LEN + 1];
	size_t n;
};

static int fingerprint(EVP_PKEY *k, char *out)
{
	unsigned char raw[32];
	size_t len = sizeof(raw);

	if (EVP_PKEY_get_raw_public_key(k, raw, &len) != 1 || len != sizeof(raw))
		return -EINVAL;
	hash_sha256_hex(raw, len, out);
	return 0;
}

/* A PEM key of `file`, private or public; Ed25519 only. */
static int load_key(const char *file, int private, EVP_PKEY **out, char *fpr)
{
	struct buf text = { 0 };
	const char *kind = NULL;
	EVP_PKEY *k = NULL;
	BIO *bio = NULL;
	int ret = readfile_read(file, KEY_FILE_MAX, &text, &kind);

	if (ret) {
		log_warn("cannot read the layer %s key '%s': %s; the layer registry is not used",
			 private ? "signing" : "trusted", file, readfile_why(ret, kind));
		goto out;
	}
	bio = BIO_new_mem_buf(text.p, (int)text.len);
	k = !bio ? NULL : private ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)
				 : PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	if (!k || EVP_PKEY_id(k) != EVP_PKEY_ED25519 || fingerprint(k, fpr)) {
		log_warn("'%s' is no Ed25519 %s key in PEM (make one with 'openssl genpkey "
			 "-algorithm ed25519 -out KEY', its public half with 'openssl pkey -in KEY "
			 "-pubout'): the layer registry is not used", file,
			 private ? "private (PKCS#8)" : "public");
		EVP_PKEY_free(k);
		k = NULL;
		ret = -EINVAL;
	}
out:
	BIO_free(bio);
	buf_release(&text);
	*out = k;
	return ret;
}

int layersign_load(struct layersign **out, const char *sign_key, const struct strv *trusted)
{
	struct layersign *ls = xcalloc(1, sizeof(*ls));
	size_t i;
	int ret = 0;

	if (sign_key)
		ret = load_key(sign_key, 1, &ls->sign, ls->sign_fpr);
	ls->trusted = xcalloc(trusted->n + 1, sizeof(*ls->trusted));
	ls->fpr = xcalloc(trusted->n + 1, sizeof(*ls->fpr));
	for (i = 0; !ret && i < trusted->n; i++, ls->n++)
		ret = load_key(trusted->v[i], 0, &ls->trusted[i], ls->fpr[i]);
	if (ret) {
		layersign_free(ls);
		ls = NULL;
	}
	*out = ls;
	return ret;
}

void layersign_free(struct layersign *ls)
{
	size_t i;

	if (!ls)
		return;
	EVP_PKEY_free(ls->sign);
	for (i = 0; i < ls->n; i++)
		EVP_PKEY_free(ls->trusted[i]);
	free(ls->trusted);
	free(ls->fpr);
	free(ls);
}

int layersign_can_sign(const struct layersign *ls)
{
	return ls && ls->sign;
}

size_t layersign_n_trusted(const struct layersign *ls)
{
	return ls ? ls->n : 0;
}

void layersign_message(const char *key, const char *digest, uint64_t size, struct buf *out)
{
	buf_addf(out, "mkimage layer signature 1\nlayer %s\nblob %s\nsize %" PRIu64 "\n", key,
		 digest, size);
}

int layersign_sign(const struct layersign *ls, const char *key, const char *digest,
		   uint64_t size, struct buf *sig, char signer[LAYERSIGN_FPR_LEN + 1])
{
	unsigned char raw[SIG_LEN], b64[4 * ((SIG_LEN + 2) / 3) + 1];
	size_t len = sizeof(raw);
	struct buf msg = { 0 };
	EVP_MD_CTX *ctx;
	int ret = -EIO;

	if (!layersign_can_sign(ls))
		return -EINVAL;
	layersign_message(key, digest, size, &msg);
	ctx = EVP_MD_CTX_new();
	if (ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, ls->sign) == 1 &&
	    EVP_DigestSign(ctx, raw, &len, (const unsigned char *)msg.p, msg.len) == 1 &&
	    len == SIG_LEN) {
		EVP_EncodeBlock(b64, raw, SIG_LEN);
		buf_adds(sig, (const char *)b64);
		memcpy(signer, ls->sign_fpr, LAYERSIGN_FPR_LEN + 1);
		ret = 0;
	}
	EVP_MD_CTX_free(ctx);
	buf_release(&msg);
	return ret;
}

/* Base64 of exactly SIG_LEN bytes: 88 characters, the last two '='. */
static int decode_sig(const char *sig, unsigned char raw[SIG_LEN + 2])
{
	size_t n = strlen(sig);

	if (n != 4 * ((SIG_LEN + 2) / 3) || strcmp(sig + n - 2, "==") ||
	    EVP_DecodeBlock(raw, (const unsigned char *)sig, (int)n) != SIG_LEN + 2)
		return -EBADMSG;
	return 0;
}

int layersign_verify(const struct layersign *ls, const char *key, const char *digest,
		     uint64_t size, const char *sig, const char *signer)
{
	unsigned char raw[SIG_LEN + 2];
	struct buf msg = { 0 };
	EVP_MD_CTX *ctx = NULL;
	size_t i;
	int ret = -ENOKEY;

	for (i = 0; ls && i < ls->n; i++)
		if (signer && !strcmp(signer, ls->fpr[i]))
			break;
	if (!ls || i == ls->n)
		return -ENOKEY;
	if (!sig || decode_sig(sig, raw))
		return -EBADMSG;
	layersign_message(key, digest, size, &msg);
	ctx = EVP_MD_CTX_new();
	ret = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, ls->trusted[i]) == 1 &&
	      EVP_DigestVerify(ctx, raw, SIG_LEN, (const unsigned char *)msg.p, msg.len) == 1
		      ? 0 : -EBADMSG;
	EVP_MD_CTX_free(ctx);
	buf_release(&msg);
	return ret;
}
