/*
 * The signature of a RAUC bundle (OpenSSL's CMS): SignedData holding the manifest it signs
 * (RAUC's verity format carries the manifest inside its signature, not beside it), DER, with
 * no signed attributes - no signing time, so the same manifest and key give the same bytes -
 * signed with an RSA (PKCS#1 v1.5) or Ed25519 key, both deterministic; ECDSA, whose
 * signatures OpenSSL 3.0 makes random, is refused. The signer's certificate and any
 * intermediate ones after it in the same file are included, so that a device holding only
 * the CA (its keyring) can verify the chain, which is checked here before anything is written.
 */
#ifndef MKI_RAUCSIGN_H
#define MKI_RAUCSIGN_H

#include <stddef.h>

#include "lib/buf.h"

struct raucsign_keys {
	const char *cert;    /* PEM: the signing certificate, then its intermediates */
	const char *key;     /* PEM: its private key */
	const char *keyring; /* PEM: the CA certificates a device trusts */
};

/**
 * Load and check the keys: each file readable and PEM, the key the certificate's, of a kind
 * whose signature is deterministic, and the certificate's chain ending at a CA of the keyring
 * at the current time; with neither cert nor key (signed offline), the keyring alone. 0, or
 * -MKI_E_RECIPE logged naming the file and what to do.
 */
int raucsign_check(const struct raucsign_keys *k);
/**
 * Sign the `n` bytes of `data` (the manifest) into a DER CMS SignedData appended to `der`, and
 * verify it against the keyring as a device would. 0, -MKI_E_RECIPE (the keys, as
 * raucsign_check) or -MKI_E_IMAGE (OpenSSL failed), logged.
 */
int raucsign_sign(const struct raucsign_keys *k, const void *data, size_t n, struct buf *der);

#endif
