/* SHA-256 and MD5 (dpkg's conffile sums), streaming, over OpenSSL's EVP. */
#ifndef MKI_HASH_H
#define MKI_HASH_H

#include <stddef.h>
#include <stdint.h>

enum hash_kind { HASH_SHA256, HASH_MD5 };

struct hash {
	void *ctx; /* EVP_MD_CTX */
	enum hash_kind kind;
};

#define SHA256_HEX_LEN 64

/** Start a digest. Returns 0 or -ENOMEM. */
int hash_init(struct hash *h, enum hash_kind kind);
void hash_update(struct hash *h, const void *data, size_t n);
/** Finish into lowercase hex (`hex` holds 65 bytes) and release the context. */
void hash_final_hex(struct hash *h, char *hex);
/** Finish into raw bytes (32 for SHA-256, 16 for MD5) and release the context. */
void hash_final(struct hash *h, uint8_t *out);
/** Release a digest that was not finished. */
void hash_release(struct hash *h);

/**
 * SHA-256 of `a` then `b` into `out` (32 bytes), restarting `h` (from hash_init, HASH_SHA256),
 * which stays usable for the next: one context for many short digests (a hash tree's blocks)
 * without an allocation or a digest lookup each. `h` is released by hash_release.
 */
void hash_sha256_pair(struct hash *h, const void *a, size_t na, const void *b, size_t nb,
		      uint8_t out[32]);

/** One-shot helpers. `hex` holds 65 bytes. */
void hash_sha256_hex(const void *data, size_t n, char *hex);
/**
 * Hash a whole regular file; 0, -EINVAL for anything else (a FIFO, a device), -MKI_E_INTERRUPTED
 * on SIGINT/SIGTERM, or negative errno.
 */
int hash_file_hex(const char *path, enum hash_kind kind, char *hex);
/** True if `s` is exactly 64 lowercase hex digits. */
int hash_sha256_hex_valid(const char *s);

#endif
