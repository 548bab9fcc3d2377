/*
 * Keys and certificates made at test time (OpenSSL), for the suites of the update bundle's
 * modules: a CA and certificates it issues, each written as PEM into a directory.
 */
#ifndef MKI_TEST_PKI_FIXTURE_H
#define MKI_TEST_PKI_FIXTURE_H

#include <check.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>

#include "lib/str.h"

static void pki_write(const char *dir, const char *name, EVP_PKEY *key, X509 *cert)
{
	char *path = xasprintf("%s/%s.key", dir, name);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
	free(path);
	path = xasprintf("%s/%s.pem", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(PEM_write_X509(f, cert), 1);
	fclose(f);
	free(path);
}

static void pki_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;

	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	ck_assert_ptr_nonnull(e);
	X509_add_ext(cert, e, -1);
	X509_EXTENSION_free(e);
}

/*
 * A certificate NAME for a new key of `type` ("RSA", or "EC" for P-256), issued by ca/ca_key
 * (NULL: self-signed, a CA), written as DIR/NAME.pem and DIR/NAME.key. The key is returned in
 * *key_out and the certificate in *cert_out when not NULL (the caller frees them).
 */
static void pki_make(const char *dir, const char *name, const char *type, X509 *ca,
		     EVP_PKEY *ca_key, EVP_PKEY **key_out, X509 **cert_out)
{
	EVP_PKEY *key = !strcmp(type, "EC") ? EVP_EC_gen("P-256") : EVP_RSA_gen(2048);
	X509 *cert = X509_new();
	X509_NAME *n = X509_NAME_new();

	ck_assert_ptr_nonnull(key);
	X509_set_version(cert, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
	X509_gmtime_adj(X509_getm_notBefore(cert), -86400);
	X509_gmtime_adj(X509_getm_notAfter(cert), 86400L * 3650);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)name, -1, -1, 0);
	X509_set_subject_name(cert, n);
	X509_set_issuer_name(cert, ca ? X509_get_subject_name(ca) : n);
	X509_set_pubkey(cert, key);
	pki_ext(cert, ca ? ca : cert, NID_basic_constraints, ca ? "CA:FALSE" : "critical,CA:TRUE");
	pki_ext(cert, ca ? ca : cert, NID_key_usage,
		ca ? "critical,digitalSignature" : "critical,keyCertSign,cRLSign");
	ck_assert_int_gt(X509_sign(cert, ca_key ? ca_key : key, EVP_sha256()), 0);
	X509_NAME_free(n);
	pki_write(dir, name, key, cert);
	if (key_out)
		*key_out = key;
	else
		EVP_PKEY_free(key);
	if (cert_out)
		*cert_out = cert;
	else
		X509_free(cert);
}

/* DIR/ca (a CA), DIR/signer (by it), DIR/other-ca and DIR/stranger (by other-ca), DIR/ec. */
static void pki_setup(const char *dir)
{
	EVP_PKEY *ca_key, *other_key;
	X509 *ca, *other;

	pki_make(dir, "ca", "RSA", NULL, NULL, &ca_key, &ca);
	pki_make(dir, "signer", "RSA", ca, ca_key, NULL, NULL);
	pki_make(dir, "ec", "EC", ca, ca_key, NULL, NULL);
	pki_make(dir, "other-ca", "RSA", NULL, NULL, &other_key, &other);
	pki_make(dir, "stranger", "RSA", other, other_key, NULL, NULL);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(other_key);
	X509_free(ca);
	X509_free(other);
}

#endif
