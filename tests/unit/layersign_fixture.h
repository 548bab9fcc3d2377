/* Throwaway Ed25519 keys as PEM files for the layer signature tests. */
#ifndef LAYERSIGN_FIXTURE_H
#define LAYERSIGN_FIXTURE_H

#include <check.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/str.h"

/* dir/NAME.key and dir/NAME.pub: a new key pair. */
static inline void layersign_fixture_key(const char *dir, const char *name)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	char *path = xasprintf("%s/%s.key", dir, name);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
	free(path);
	path = xasprintf("%s/%s.pub", dir, name);
	f = fopen(path, "w");
	ck_assert_int_eq(PEM_write_PUBKEY(f, k), 1);
	fclose(f);
	free(path);
	EVP_PKEY_free(k);
}

#endif
