#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "readfile.h"

int hash_init(struct hash *h, enum hash_kind kind)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	h->ctx = ctx;
	h->kind = kind;
	if (!ctx)
		return -ENOMEM;
	if (!EVP_DigestInit_ex(ctx, kind == HASH_MD5 ? EVP_md5() : EVP_sha256(), NULL)) {
		hash_release(h);
		return -ENOMEM;
	}
	return 0;
}

void hash_update(struct hash *h, const void *data, size_t n)
{
	EVP_DigestUpdate(h->ctx, data, n);
}

void hash_final(struct hash *h, uint8_t *out)
{
	unsigned len = 0;

	EVP_DigestFinal_ex(h->ctx, out, &len);
	hash_release(h);
}

void hash_final_hex(struct hash *h, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	uint8_t raw[EVP_MAX_MD_SIZE];
	size_t n = h->kind == HASH_MD5 ? 16 : 32, i;

	hash_final(h, raw);
	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[raw[i] >> 4];
		hex[2 * i + 1] = digits[raw[i] & 15];
	}
	hex[2 * n] = 0;
}

void hash_sha256_pair(struct hash *h, const void *a, size_t na, const void *b, size_t nb,
		      uint8_t out[32])
{
	unsigned len = 0;

	/* NULL keeps the context's digest: a reset, not a new lookup by name */
	EVP_DigestInit_ex(h->ctx, NULL, NULL);
	EVP_DigestUpdate(h->ctx, a, na);
	EVP_DigestUpdate(h->ctx, b, nb);
	EVP_DigestFinal_ex(h->ctx, out, &len);
}

void hash_release(struct hash *h)
{
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

void hash_sha256_hex(const void *data, size_t n, char *hex)
{
	struct hash h;

	if (hash_init(&h, HASH_SHA256) < 0) {
		hex[0] = 0;
		return;
	}
	hash_update(&h, data, n);
	hash_final_hex(&h, hex);
}

int hash_file_hex(const char *path, enum hash_kind kind, char *hex)
{
	char block[65536];
	struct hash h;
	ssize_t n;
	int fd, ret;

	fd = readfile_open(path, NULL);
	if (fd < 0)
		return fd;
	ret = hash_init(&h, kind);
	if (ret < 0)
		goto out;
	while ((n = read(fd, block, sizeof(block))) > 0 && !err_interrupted())
		hash_update(&h, block, (size_t)n);
	if (n != 0) {
		ret = n < 0 ? -errno : -MKI_E_INTERRUPTED;
		hash_release(&h);
		goto out;
	}
	hash_final_hex(&h, hex);
out:
	close(fd);
	return ret;
}

int hash_sha256_hex_valid(const char *s)
{
	size_t i;

	for (i = 0; i < SHA256_HEX_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[SHA256_HEX_LEN] == 0;
}
