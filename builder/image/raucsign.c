/* A RAUC bundle's CMS signature (raucsign.h), through OpenSSL. */
#include "raucsign.h"

#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <stdio.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/readfile.h"

#define PEM_FILE_MAX (1u << 20)

struct keys {
	STACK_OF(X509) *chain;   /* the signer first, then its intermediates */
	EVP_PKEY *key;
	X509_STORE *store;       /* the keyring */
};

/* OpenSSL's reason for the last failure, for a message: its queue emptied. */
static const char *ossl_why(char *buf, size_t n)
{
	unsigned long e = ERR_peek_last_error();

	if (!e)
		snprintf(buf, n, "no reason given");
	else
		ERR_error_string_n(e, buf, n);
	ERR_clear_error();
	return buf;
}

static BIO *read_pem(const char *file, const char *what, struct buf *text)
{
	const char *kind = NULL;
	int ret = readfile_read(file, PEM_FILE_MAX, text, &kind);

	if (ret) {
		log_error("cannot read the update %s '%s': %s", what, file, readfile_why(ret, kind));
		return NULL;
	}
	return BIO_new_mem_buf(text->p, (int)text->len);
}

/* Every certificate of a PEM file, in order; NULL (logged) when it holds none. */
static STACK_OF(X509) *load_certs(const char *file, const char *what)
{
	struct buf text = { 0 };
	BIO *bio = read_pem(file, what, &text);
	STACK_OF(X509) *v = bio ? sk_X509_new_null() : NULL;
	X509 *x;

	while (v && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL)))
		sk_X509_push(v, x);
	ERR_clear_error(); /* the end of the file reads as an error */
	if (v && !sk_X509_num(v)) {
		log_error("the update %s '%s' holds no PEM certificate (BEGIN CERTIFICATE)", what,
			  file);
		sk_X509_free(v);
		v = NULL;
	}
	BIO_free(bio);
	buf_release(&text);
	return v;
}

/* The private key: RSA, whose PKCS#1 v1.5 signature is the same each time. */
static EVP_PKEY *load_key(const char *file)
{
	struct buf text = { 0 };
	BIO *bio = read_pem(file, "key", &text);
	EVP_PKEY *k = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
	char why[256];

	if (bio && !k)
		log_error("the update key '%s' is no private key in PEM (%s)", file,
			  ossl_why(why, sizeof(why)));
	else if (k && EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA) {
		log_error("the update key '%s': not yet supported: a %s key; sign with an RSA key "
			  "('openssl genpkey -algorithm rsa'): an ECDSA signature differs on each "
			  "build and OpenSSL 3.0's CMS cannot sign with Ed25519", file,
			  OBJ_nid2sn(EVP_PKEY_get_base_id(k)));
		EVP_PKEY_free(k);
		k = NULL;
	}
	BIO_free(bio);
	buf_release(&text);
	return k;
}

static X509_STORE *load_keyring(const char *file)
{
	STACK_OF(X509) *v = load_certs(file, "keyring");
	X509_STORE *s = v ? X509_STORE_new() : NULL;
	int i;

	for (i = 0; s && i < sk_X509_num(v); i++)
		X509_STORE_add_cert(s, sk_X509_value(v, i));
	sk_X509_pop_free(v, X509_free);
	return s;
}

static void keys_release(struct keys *ks)
{
	sk_X509_pop_free(ks->chain, X509_free);
	EVP_PKEY_free(ks->key);
	X509_STORE_free(ks->store);
}

/* The certificate's chain to the keyring, as CMS_verify checks it on the device (smime_sign). */
static int check_chain(const struct raucsign_keys *k, struct keys *ks)
{
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	STACK_OF(X509) *inter = sk_X509_dup(ks->chain);
	X509 *signer = sk_X509_shift(inter);
	int ok = ctx && X509_STORE_CTX_init(ctx, ks->store, signer, inter) == 1 &&
		 X509_STORE_CTX_set_default(ctx, "smime_sign") == 1 && X509_verify_cert(ctx) == 1;
	int err = ctx ? X509_STORE_CTX_get_error(ctx) : X509_V_ERR_OUT_OF_MEM;

	X509_STORE_CTX_free(ctx);
	sk_X509_free(inter);
	ERR_clear_error();
	if (ok)
		return 0;
	log_error("the update certificate '%s' is not trusted by the keyring '%s': %s; devices "
		  "trusting that keyring would refuse the bundle", k->cert, k->keyring,
		  X509_verify_cert_error_string(err));
	return -MKI_E_RECIPE;
}

static int load(const struct raucsign_keys *k, struct keys *ks)
{
	ks->chain = load_certs(k->cert, "certificate");
	ks->key = ks->chain ? load_key(k->key) : NULL;
	ks->store = ks->key ? load_keyring(k->keyring) : NULL;
	if (!ks->store)
		return -MKI_E_RECIPE;
	if (X509_check_private_key(sk_X509_value(ks->chain, 0), ks->key) != 1) {
		ERR_clear_error();
		log_error("the update key '%s' is not the private key of the certificate '%s': give "
			  "the key the certificate was issued for", k->key, k->cert);
		return -MKI_E_RECIPE;
	}
	return check_chain(k, ks);
}

int raucsign_check(const struct raucsign_keys *k)
{
	struct keys ks = { 0 };
	int ret;

	if (!k->cert && !k->key) { /* signed offline: the keyring, which goes into the image */
		ks.store = load_keyring(k->keyring);
		ret = ks.store ? 0 : -MKI_E_RECIPE;
	} else {
		ret = load(k, &ks);
	}
	keys_release(&ks);
	return ret;
}

/* The signature just made, read back and verified with the keyring alone, as `rauc info`. */
static int verify(const struct raucsign_keys *k, X509_STORE *store, const struct buf *der)
{
	const unsigned char *p = (const unsigned char *)der->p;
	CMS_ContentInfo *cms = d2i_CMS_ContentInfo(NULL, &p, (long)der->len);
	BIO *out = BIO_new(BIO_s_mem());
	int ok = cms && out && CMS_verify(cms, NULL, store, NULL, out, CMS_BINARY) == 1;
	char why[256];

	CMS_ContentInfo_free(cms);
	BIO_free(out);
	if (ok)
		return 0;
	log_error("the bundle's signature by '%s' does not verify with the keyring '%s': %s",
		  k->cert, k->keyring, ossl_why(why, sizeof(why)));
	return -MKI_E_IMAGE;
}

/* CMS SignedData with the content inside, no signed attributes, DER appended to `der`. */
static int sign(const struct raucsign_keys *k, struct keys *ks, const void *data, size_t n,
		struct buf *der)
{
	STACK_OF(X509) *inter = sk_X509_dup(ks->chain);
	X509 *signer = sk_X509_shift(inter);
	BIO *in = BIO_new_mem_buf(data, (int)n);
	CMS_ContentInfo *cms = in ? CMS_sign(signer, ks->key, inter, in, CMS_BINARY | CMS_NOATTR |
					     CMS_NOSMIMECAP) : NULL;
	unsigned char *out = NULL;
	int len = cms ? i2d_CMS_ContentInfo(cms, &out) : -1;
	char why[256];

	if (len > 0)
		buf_add(der, out, (size_t)len);
	else
		log_error("cannot sign the bundle's manifest with '%s': %s", k->key,
			  ossl_why(why, sizeof(why)));
	OPENSSL_free(out);
	CMS_ContentInfo_free(cms);
	BIO_free(in);
	sk_X509_free(inter);
	return len > 0 ? 0 : -MKI_E_IMAGE;
}

int raucsign_sign(const struct raucsign_keys *k, const void *data, size_t n, struct buf *der)
{
	struct keys ks = { 0 };
	int ret = load(k, &ks);

	if (!ret)
		ret = sign(k, &ks, data, n, der);
	if (!ret)
		ret = verify(k, ks.store, der);
	keys_release(&ks);
	return ret;
}
