/*
 * Layer signatures: a layer shared through a registry (registry.h) is a configured tree another
 * machine made, so it is used only when a key the recipe trusts signed it. Keys are Ed25519
 * (OpenSSL): the builder's private key as PEM PKCS#8 (`openssl genpkey -algorithm ed25519`), the
 * trusted ones as PEM public keys (`openssl pkey -pubout`). What is signed is layersign_message():
 * the layer key, the blob's digest and its size, so a signature never vouches for another layer,
 * other bytes or a longer blob. A key is named by its fingerprint: the SHA-256 of its raw 32 bytes.
 */
#ifndef MKI_LAYERSIGN_H
#define MKI_LAYERSIGN_H

#include <stdint.h>

#include "lib/str.h"

#define LAYERSIGN_FPR_LEN 64

struct layersign;

/**
 * Load the signing key `sign_key` (NULL: none) and the public keys `trusted` (may be empty) into
 * a new *out. 0, or -EINVAL / a negative errno after logging which file and why.
 */
int layersign_load(struct layersign **out, const char *sign_key, const struct strv *trusted);
void layersign_free(struct layersign *ls);

int layersign_can_sign(const struct layersign *ls);
/** How many trusted keys there are: 0 means no layer can be verified, so none is pulled. */
size_t layersign_n_trusted(const struct layersign *ls);

/** The text signed for layer `key` whose blob is `digest` ("sha256:HEX") of `size` bytes. */
void layersign_message(const char *key, const char *digest, uint64_t size, struct buf *out);

/**
 * Sign layer `key`'s blob: `sig` gets the signature in base64, `signer` the signing key's
 * fingerprint. 0 or -EINVAL (no signing key) or -EIO (OpenSSL failed).
 */
int layersign_sign(const struct layersign *ls, const char *key, const char *digest,
		   uint64_t size, struct buf *sig, char signer[LAYERSIGN_FPR_LEN + 1]);

/**
 * Check `sig` (base64) by `signer` over layer `key`'s blob. 0; -ENOKEY when `signer` is no
 * trusted key; -EBADMSG when the signature is malformed or does not verify. Logs nothing.
 */
int layersign_verify(const struct layersign *ls, const char *key, const char *digest,
		     uint64_t size, const char *sig, const char *signer);

#endif
