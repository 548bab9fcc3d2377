/*
 * The dm-verity hash tree (verity.h). The first level - a digest per data block, nearly all the
 * work - is hashed in chunks on worker threads (lib/workpool.h) and written in chunk order, so
 * the bytes never depend on timing; a chunk the data's holes cover entirely takes the zero
 * block's digest without being read. The levels above are read back from the hash device, each
 * 128 times smaller than the one below.
 */
#include "verity.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/str.h"
#include "lib/workpool.h"

#define DIGEST 32u
#define PER_BLOCK_BITS 7u               /* 128 digests of 32 bytes in a 4096-byte hash block */
#define CHUNK_BLOCKS 1024u              /* data blocks per job: 4 MiB read, 8 hash blocks out */
#define MAX_LEVELS 16u                  /* 2^52 blocks need 8 */
#define SB_SIZE 512u

struct tree {
	uint64_t blocks;                /* data blocks */
	unsigned levels;                /* 0: one data block, whose digest is the root */
	uint64_t start[MAX_LEVELS];     /* first hash block of level i (0: just above the data) */
	uint64_t size[MAX_LEVELS];      /* its hash blocks */
	uint64_t total;                 /* hash blocks, the superblock's included */
};

struct run {
	const struct verity_params *vp;
	struct tree t;
	int fd;
	uint64_t off;
	uint8_t zero_digest[DIGEST];
	uint8_t **out;                  /* per chunk: its hash blocks, until written */
	int *err;                       /* per chunk: 0 or a negative errno of its read */
};

static uint64_t shift_up(uint64_t n, unsigned bits)
{
	return (n + ((uint64_t)1 << bits) - 1) >> bits;
}

/*
 * cryptsetup's layout: as many levels as the block count's digits in base 128, top first, after
 * the superblock's block when there is one.
 */
static void tree_shape(uint64_t blocks, int superblock, struct tree *t)
{
	uint64_t pos = superblock ? 1 : 0;
	unsigned i;

	memset(t, 0, sizeof(*t));
	t->blocks = blocks;
	while (blocks && t->levels < MAX_LEVELS && (blocks - 1) >> (PER_BLOCK_BITS * t->levels))
		t->levels++;
	for (i = t->levels; i-- > 0;) {
		t->size[i] = shift_up(blocks, PER_BLOCK_BITS * (i + 1));
		t->start[i] = pos;
		pos += t->size[i];
	}
	t->total = pos;
}

uint64_t verity_tree_size(uint64_t data_bytes, int superblock)
{
	struct tree t;

	tree_shape(shift_up(data_bytes, 12), superblock, &t);
	return t.total * VERITY_BLOCK;
}

uint64_t verity_hash_size(uint64_t data_bytes)
{
	return verity_tree_size(data_bytes, 1);
}

/* All `n` bytes at `off`, or a negative errno (-EIO: the file ends before). */
static int read_all(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	ssize_t got;

	while (n) {
		got = pread(fd, buf, n, (off_t)off);
		if (got < 0 && errno == EINTR && !err_interrupted())
			continue;
		if (got <= 0)
			return got ? -errno : -EIO;
		buf += got;
		n -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

/* Digests of `count` blocks in `buf`, packed into `out` (version 1: no padding between them). */
static void digest_blocks(struct hash *h, const uint8_t *salt, const uint8_t *buf,
			  uint64_t count, uint8_t *out)
{
	uint64_t b;

	for (b = 0; b < count; b++)
		hash_sha256_pair(h, salt, 32, buf + b * VERITY_BLOCK, VERITY_BLOCK,
				 out + b * DIGEST);
}

/* Whether [off, off + n) of fd is one hole: SEEK_DATA finds nothing before its end. */
static int all_hole(int fd, uint64_t off, uint64_t n)
{
	off_t d = lseek(fd, (off_t)off, SEEK_DATA);

	return (d < 0 && errno == ENXIO) || (d >= 0 && (uint64_t)d >= off + n);
}

/* Worker: chunk i of the data into its hash blocks (zero-padded), held until written. */
static uint64_t chunk_job(void *arg, size_t i)
{
	struct run *r = arg;
	uint64_t first = (uint64_t)i * CHUNK_BLOCKS, count = r->t.blocks - first, b;
	uint64_t out_bytes;
	uint8_t *buf = NULL, *out;
	struct hash h;

	if (count > CHUNK_BLOCKS)
		count = CHUNK_BLOCKS;
	out_bytes = shift_up(count, PER_BLOCK_BITS) * VERITY_BLOCK;
	out = xcalloc(1, out_bytes);
	r->out[i] = out;
	if (all_hole(r->fd, r->off + first * VERITY_BLOCK, count * VERITY_BLOCK)) {
		for (b = 0; b < count; b++)
			memcpy(out + b * DIGEST, r->zero_digest, DIGEST);
		return out_bytes;
	}
	buf = xmalloc(count * VERITY_BLOCK);
	r->err[i] = read_all(r->fd, buf, count * VERITY_BLOCK, r->off + first * VERITY_BLOCK);
	if (!r->err[i])
		r->err[i] = hash_init(&h, HASH_SHA256);
	if (!r->err[i]) {
		digest_blocks(&h, r->vp->salt, buf, count, out);
		hash_release(&h);
	}
	free(buf);
	return out_bytes;
}

/* Chunk i's hash blocks into level 0 of the hash device. */
static int write_chunk(struct run *r, struct sink *hash, size_t i)
{
	uint64_t per = CHUNK_BLOCKS >> PER_BLOCK_BITS, first = (uint64_t)i * per;
	uint64_t n = r->t.size[0] - first < per ? r->t.size[0] - first : per;
	int ret = r->err[i];

	if (ret)
		return log_errno(ret, "cannot read partition '%s' to hash it: %m", r->vp->name);
	ret = sink_pwrite(hash, r->out[i], n * VERITY_BLOCK,
			  (r->t.start[0] + first) * VERITY_BLOCK);
	if (ret)
		return log_errno(ret, "cannot write the hash tree of partition '%s' to '%s': %m",
				 r->vp->name, hash->name);
	return 0;
}

/* Level 0 from the data, chunks in order into the hash device. */
static int level0(struct run *r, struct sink *hash)
{
	size_t n = shift_up(r->t.blocks, 10), i;
	struct workpool_spec spec = { .n = n, .window = 8, .budget = 8 * CHUNK_BLOCKS * DIGEST,
				       .job = chunk_job, .arg = r };
	struct workpool *pool = NULL;
	int ret = 0;

	spec.threads = workpool_threads(r->vp->threads ? r->vp->threads : ~0u, n);
	r->out = xcalloc(n, sizeof(*r->out));
	r->err = xcalloc(n, sizeof(*r->err));
	if (workpool_start(&pool, &spec) < 0)
		ret = log_errno(-EAGAIN, "cannot start the threads hashing partition '%s'",
				r->vp->name);
	for (i = 0; !ret && i < n; i++) {
		workpool_wait(pool, i);
		ret = write_chunk(r, hash, i);
		free(r->out[i]);
		r->out[i] = NULL;
		workpool_done(pool, i);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	if (pool)
		workpool_finish(pool);
	for (i = 0; i < n; i++)
		free(r->out[i]);
	free(r->out);
	free(r->err);
	return ret;
}

/* Level l (> 0) from level l - 1, read back from the hash device, a chunk at a time. */
static int upper_level(struct run *r, struct sink *hash, unsigned l, struct hash *h,
		       uint8_t *buf, uint8_t *out)
{
	uint64_t done = 0, count, from = r->t.start[l - 1], n = r->t.size[l - 1];
	uint64_t to = r->t.start[l] * VERITY_BLOCK;
	size_t bytes;
	int ret = 0;

	while (!ret && done < n) {
		count = n - done < CHUNK_BLOCKS ? n - done : CHUNK_BLOCKS;
		bytes = shift_up(count, PER_BLOCK_BITS) * VERITY_BLOCK;
		ret = read_all(hash->fd, buf, count * VERITY_BLOCK,
			       hash->offset + (from + done) * VERITY_BLOCK);
		if (ret)
			return log_errno(ret, "cannot read back the hash tree of partition '%s' "
					 "from '%s': %m", r->vp->name, hash->name);
		memset(out, 0, bytes);
		digest_blocks(h, r->vp->salt, buf, count, out);
		ret = sink_pwrite(hash, out, bytes, to);
		if (ret)
			return log_errno(ret, "cannot write the hash tree of partition '%s' to "
					 "'%s': %m", r->vp->name, hash->name);
		to += bytes;
		done += count;
	}
	return 0;
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	while (n--) {
		*p++ = (uint8_t)v;
		v >>= 8;
	}
}

/* The version 1 superblock (cryptsetup's struct verity_sb), alone in the first hash block. */
static int write_superblock(const struct run *r, struct sink *hash, uint8_t *block)
{
	int ret;

	memset(block, 0, VERITY_BLOCK);
	memcpy(block, "verity\0\0", 8);
	put_le(block + 8, 1, 4);                /* version */
	put_le(block + 12, 1, 4);               /* hash type: normal, salt first */
	memcpy(block + 16, r->vp->uuid, 16);
	memcpy(block + 32, "sha256", 6);
	put_le(block + 64, VERITY_BLOCK, 4);    /* data block size */
	put_le(block + 68, VERITY_BLOCK, 4);    /* hash block size */
	put_le(block + 72, r->t.blocks, 8);
	put_le(block + 80, 32, 2);              /* salt size */
	memcpy(block + 88, r->vp->salt, 32);
	ret = sink_pwrite(hash, block, VERITY_BLOCK, 0);
	if (ret)
		return log_errno(ret, "cannot write the hash tree of partition '%s' to '%s': %m",
				 r->vp->name, hash->name);
	return 0;
}

/* The root: the digest of the top level's one block, or of the only data block. */
static int root_digest(struct run *r, struct sink *hash, struct hash *h, uint8_t *buf,
		       char root_hex[65])
{
	static const char digits[] = "0123456789abcdef";
	uint8_t root[DIGEST];
	int ret, i;

	if (r->t.levels)
		ret = read_all(hash->fd, buf, VERITY_BLOCK,
			       hash->offset + r->t.start[r->t.levels - 1] * VERITY_BLOCK);
	else
		ret = read_all(r->fd, buf, VERITY_BLOCK, r->off);
	if (ret)
		return log_errno(ret, "cannot read back the hash tree of partition '%s': %m",
				 r->vp->name);
	hash_sha256_pair(h, r->vp->salt, 32, buf, VERITY_BLOCK, root);
	for (i = 0; i < (int)DIGEST; i++) {
		root_hex[2 * i] = digits[root[i] >> 4];
		root_hex[2 * i + 1] = digits[root[i] & 15];
	}
	root_hex[64] = 0;
	return 0;
}

static int write_tree(struct run *r, struct sink *hash, char root_hex[65])
{
	uint8_t *buf = xmalloc(CHUNK_BLOCKS * VERITY_BLOCK), *out = xmalloc(CHUNK_BLOCKS * DIGEST);
	struct hash h;
	unsigned l;
	int ret = hash_init(&h, HASH_SHA256);

	if (ret) {
		free(buf);
		free(out);
		return log_errno(ret, "cannot hash partition '%s': %m", r->vp->name);
	}
	memset(buf, 0, VERITY_BLOCK);
	hash_sha256_pair(&h, r->vp->salt, 32, buf, VERITY_BLOCK, r->zero_digest);
	ret = r->vp->no_superblock ? 0 : write_superblock(r, hash, buf);
	if (!ret && r->t.levels)
		ret = level0(r, hash);
	for (l = 1; !ret && l < r->t.levels; l++)
		ret = upper_level(r, hash, l, &h, buf, out);
	if (!ret)
		ret = root_digest(r, hash, &h, buf, root_hex);
	hash_release(&h);
	free(buf);
	free(out);
	return ret;
}

int verity_write(int data_fd, uint64_t data_off, uint64_t data_bytes,
		 const struct verity_params *vp, struct sink *hash, char root_hex[65])
{
	struct run r = { .vp = vp, .fd = data_fd, .off = data_off };

	root_hex[0] = 0;
	if (!data_bytes || data_bytes % VERITY_BLOCK) {
		log_error("partition '%s' is %" PRIu64 " bytes, not a whole number of %u-byte "
			  "blocks: dm-verity cannot hash it", vp->name, data_bytes, VERITY_BLOCK);
		return -MKI_E_IMAGE;
	}
	tree_shape(data_bytes / VERITY_BLOCK, !vp->no_superblock, &r.t);
	if (hash->length && hash->length < r.t.total * VERITY_BLOCK) {
		log_error("the hash tree of partition '%s' needs %" PRIu64 " bytes, more than the "
			  "%" PRIu64 " of '%s'", vp->name, r.t.total * VERITY_BLOCK, hash->length,
			  hash->name);
		return -MKI_E_NOSPACE;
	}
	return write_tree(&r, hash, root_hex);
}
