/* The ext4 writer's filesystem: sized for the tree, created empty with mke2fs, finished. */
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ext4fs.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/proc.h"
#include "lib/str.h"

/* --- state and sizing ---------------------------------------------------------------------- */

void ext4fs_init(struct ext4fs *w, const struct imgtree *t, const struct image_params *p,
		 struct sink *k)
{
	memset(w, 0, sizeof(*w));
	w->t = t;
	w->p = p;
	w->k = k;
	w->kernel_copy = 1;
	w->ino = xcalloc(t->n, sizeof(*w->ino));
	w->dir_bytes = xcalloc(t->n, sizeof(*w->dir_bytes));
	w->subdirs = xcalloc(t->n, sizeof(*w->subdirs));
}

void ext4fs_release(struct ext4fs *w)
{
	ext4fs_close(w);
	free(w->dev);
	free(w->ino);
	free(w->dir_bytes);
	free(w->subdirs);
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

uint64_t ext4fs_div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static uint64_t dirent_len(size_t name_len)
{
	return (8 + name_len + 3) & ~3ull;
}

/* A directory needs an htree when its entries do not fit the first block beside "." and "..". */
int ext4fs_wants_htree(uint64_t bytes)
{
	return bytes > BLOCK_SIZE - 12 - 24 - 64;
}

static uint64_t dir_blocks(uint64_t bytes)
{
	if (!ext4fs_wants_htree(bytes))
		return 1;
	/* Leaves split half full; one root, one index level per ~500 leaves. */
	return 1 + ext4fs_div_up(bytes * 2, BLOCK_SIZE - 12) +
	       ext4fs_div_up(bytes, 500 * (BLOCK_SIZE / 2));
}

/* Blocks of data a regular file will take: holes of the source stay holes. */
static int file_blocks(const struct imgtree *t, size_t i, uint64_t *out)
{
	struct stat st;
	uint64_t n = 0;
	off_t pos = 0, data, hole;
	int fd;

	fd = imgtree_open(t, i);
	if (fd < 0)
		return fd;
	if (!fstat(fd, &st) && (uint64_t)st.st_blocks * 512 >= (uint64_t)st.st_size) {
		close(fd);
		*out = ext4fs_div_up((uint64_t)st.st_size, BLOCK_SIZE);
		return 0;
	}
	while ((data = lseek(fd, pos, SEEK_DATA)) >= 0) {
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			break;
		n += ext4fs_div_up((uint64_t)hole, BLOCK_SIZE) - (uint64_t)data / BLOCK_SIZE;
		pos = hole;
	}
	close(fd);
	*out = n;
	return 0;
}

static uint64_t xattr_bytes(const struct manifest_entry *e)
{
	uint64_t n = 0;
	size_t k;

	for (k = 0; k < e->n_xattrs; k++)
		n += 16 + ((strlen(e->xattrs[k].name) + 3) & ~3u) + ((e->xattrs[k].len + 3) & ~3u);
	return n;
}

static int check_name(const struct imgtree *t, size_t i)
{
	size_t len = strlen(imgtree_name(t, i));

	if (t->v[i].e->type != MF_DIR && t->v[i].nlink > EXT2_LINK_MAX) {
		log_error("'%s' has %u names; an ext4 inode holds at most %d links", t->v[i].e->path,
			  t->v[i].nlink, EXT2_LINK_MAX);
		return -MKI_E_IMAGE;
	}
	if (len > EXT2_NAME_LEN) {
		log_error("'%s': a name of %zu bytes is longer than ext4's %d", t->v[i].e->path, len,
			  EXT2_NAME_LEN);
		return -MKI_E_IMAGE;
	}
	if (t->v[i].e->type == MF_SYMLINK && strlen(t->v[i].e->target) >= BLOCK_SIZE) {
		log_error("'%s': a symlink target of %zu bytes is longer than ext4's %u",
			  t->v[i].e->path, strlen(t->v[i].e->target), BLOCK_SIZE - 1);
		return -MKI_E_IMAGE;
	}
	return 0;
}

static int node_blocks(struct ext4fs *w, size_t i, uint64_t *out)
{
	const struct manifest_entry *e = w->t->v[i].e;
	uint64_t n = 0;
	int ret = 0;

	if (e->type == MF_REG) {
		ret = file_blocks(w->t, i, &n);
		n += n > 4 * 32768 ? ext4fs_div_up(n, 340 * 32768) + 1 : 0; /* extent tree blocks */
	} else if (e->type == MF_SYMLINK) {
		n = strlen(e->target) >= 60;
	}
	if (xattr_bytes(e) > INODE_SIZE - 160 - 4 - 16)
		n++;
	*out = n;
	return ret;
}

/* What the tree needs: blocks beyond the filesystem's own metadata, and inodes. */
int ext4fs_estimate(struct ext4fs *w)
{
	const struct imgtree *t = w->t;
	uint64_t n;
	size_t i;
	int ret;

	w->need_inodes = EXT2_GOOD_OLD_FIRST_INO + 1;
	for (i = 0; i < t->n; i++) {
		ret = check_name(t, i);
		if (!ret)
			ret = node_blocks(w, i, &n);
		if (ret)
			return ret;
		w->need_blocks += n;
		if (i)
			w->dir_bytes[imgtree_parent(t, i)] += dirent_len(strlen(imgtree_name(t, i)));
		if (i && t->v[i].e->type == MF_DIR)
			w->subdirs[imgtree_parent(t, i)]++;
		w->need_inodes += t->v[i].e->type != MF_HARDLINK;
	}
	for (i = 0; i < t->n; i++)
		if (t->v[i].e->type == MF_DIR)
			w->need_blocks += dir_blocks(w->dir_bytes[i]) + (i == 0);
	return 0;
}

static uint64_t with_margin(uint64_t n, unsigned percent)
{
	return n + n * percent / 100;
}

static uint64_t first_inodes(const struct ext4fs *w)
{
	return with_margin(w->need_inodes, w->p->im->margin) + 16;
}

/* First guess for `auto`: data plus inode tables, journal and bitmaps; mke2fs tells the rest. */
static uint64_t auto_blocks(const struct ext4fs *w, uint64_t inodes)
{
	uint64_t data = with_margin(w->need_blocks, w->p->im->margin);
	uint64_t n = data + inodes * INODE_SIZE / BLOCK_SIZE + data / 64 + 256;
	unsigned reserved = w->p->im->reserved < 50 ? w->p->im->reserved : 50;

	n += n < 32768 ? 1024 : n < 262144 ? 4096 : n < 524288 ? 8192 : 16384;
	n = n * 100 / (100 - reserved);
	if (n < inodes + inodes / 8)
		n = inodes + inodes / 8; /* a block group holds at most one inode per block */
	return n < MIN_BLOCKS ? MIN_BLOCKS : (n + 255) & ~255ull;
}

uint64_t ext4fs_first_blocks(const struct ext4fs *w)
{
	const struct recipe_image *im = w->p->im;

	return im->size ? im->size / BLOCK_SIZE : auto_blocks(w, first_inodes(w));
}

/* --- the empty filesystem ------------------------------------------------------------------ */

static void derive_uuid(const char *seed, const char *what, char out[37])
{
	struct buf in = { 0 };
	uint8_t d[32];
	struct hash h;

	buf_addf(&in, "mkimage %s\n%s", what, seed);
	if (hash_init(&h, HASH_SHA256) == 0) {
		hash_update(&h, in.p, in.len);
		hash_final(&h, d);
	} else {
		memset(d, 0, sizeof(d));
	}
	buf_release(&in);
	d[6] = (uint8_t)((d[6] & 0x0f) | 0x40);
	d[8] = (uint8_t)((d[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12],
		 d[13], d[14], d[15]);
}

static int uuid_valid(const char *s)
{
	size_t i;

	for (i = 0; i < 36; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (!s[i] || (dash ? s[i] != '-' : !strchr("0123456789abcdefABCDEF", s[i])))
			return 0;
	}
	return !s[36];
}

int ext4fs_check_ids(const struct recipe_image *im)
{
	if (im->uuid && !uuid_valid(im->uuid)) {
		log_error("image.uuid '%s' is not a UUID (like 0a1b2c3d-0000-4000-8000-00112233aabb)",
			  im->uuid);
		return -MKI_E_IMAGE;
	}
	if (im->hash_seed && !uuid_valid(im->hash_seed)) {
		log_error("image.hash_seed '%s' is not a UUID (like 0a1b2c3d-0000-4000-8000-00112233aabb)",
			  im->hash_seed);
		return -MKI_E_IMAGE;
	}
	return 0;
}

static char *find_mke2fs(void)
{
	static const char *const dirs[] = { "/usr/sbin/mke2fs", "/sbin/mke2fs" };
	char *path = proc_which("mke2fs");
	size_t i;

	for (i = 0; !path && i < sizeof(dirs) / sizeof(*dirs); i++)
		if (access(dirs[i], X_OK) == 0)
			path = xstrdup(dirs[i]);
	return path;
}

/* mke2fs with every choice explicit: no host mke2fs.conf, no inherited MKE2FS_* variables. */
static int run_mke2fs(struct ext4fs *w, uint64_t inodes)
{
	const struct recipe_image *im = w->p->im;
	char uuid[37], seed[37], *e_opt = NULL, *tm = NULL, *n = NULL, *m = NULL, *b = NULL, *off;
	char *prog = find_mke2fs();
	struct buf err = { 0 };
	struct proc_opts o = { .stdin_fd = -1, .err = &err, .out = &err, .limit = 8192 };
	int status = 0, ret;

	if (!prog) {
		log_error("cannot find 'mke2fs': install e2fsprogs");
		return -ENOENT;
	}
	derive_uuid(w->p->seed, "uuid", uuid);
	derive_uuid(w->p->seed, "hash seed", seed);
	/* A region's offset: mke2fs writes nothing before or past the filesystem it makes there. */
	off = w->k->offset ? xasprintf(",offset=%" PRIu64, w->k->offset) : xstrdup("");
	e_opt = xasprintf("hash_seed=%s,nodiscard,assume_storage_prezeroed=1,root_owner=0:0%s",
			  im->hash_seed ? im->hash_seed : seed, off);
	tm = xasprintf("E2FSPROGS_FAKE_TIME=%" PRId64, w->t->sde);
	n = xasprintf("%" PRIu64, inodes);
	m = xasprintf("%u", im->reserved);
	b = xasprintf("%" PRIu64, w->blocks);
	{
		const char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C",
			"MKE2FS_CONFIG=/nonexistent/mkimage-builtin-defaults", tm, NULL };
		const char *argv[] = { prog, "-q", "-F", "-t", "ext4", "-T", "default", "-o", "Linux",
			"-b", "4096", "-I", "256", "-N", n, "-m", m, "-L", im->label ? im->label : "",
			"-U", im->uuid ? im->uuid : uuid, "-O", EXT4FS_FEATURES, "-E", e_opt, "--", w->dev,
			b, NULL };

		o.env = env;
		ret = proc_run(argv, &o, &status);
	}
	if (!ret && status) {
		log_error("mke2fs failed (status %d): %s", status, err.p ? err.p : "");
		ret = -MKI_E_IMAGE;
	} else if (ret && ret != -MKI_E_INTERRUPTED) {
		log_error("cannot run '%s': %s", prog, strerror(-ret));
	}
	buf_release(&err);
	free(prog);
	free(e_opt);
	free(tm);
	free(n);
	free(m);
	free(b);
	free(off);
	return ret;
}

int ext4fs_lib_fail(const char *what, const char *path, errcode_t err)
{
	if (err == EXT2_ET_BLOCK_ALLOC_FAIL || err == EXT2_ET_INODE_ALLOC_FAIL ||
	    err == EXT2_ET_DIR_NO_SPACE_FOR_CSUM || err == ENOSPC) {
		log_error("%s '%s': the image is full; raise image.size (or use \"auto\")", what, path);
		return -MKI_E_NOSPACE;
	}
	log_error("%s '%s': %s", what, path, error_message(err));
	return -MKI_E_IMAGE;
}

static int open_fs(struct ext4fs *w)
{
	char *io_opts = w->k->offset ? xasprintf("offset=%" PRIu64, w->k->offset) : NULL;
	errcode_t err = ext2fs_open2(w->dev, io_opts, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0,
				     unix_io_manager, &w->fs);

	free(io_opts);
	if (!err)
		err = ext2fs_read_bitmaps(w->fs);
	if (err)
		return ext4fs_lib_fail("cannot open the new filesystem", w->k->name, err);
	/*
	 * Everything read back was written by us in this run: verifying checksums on every read
	 * (a directory leaf per link) only costs time. Checksums are still computed on write, and
	 * the tests run e2fsck -fn on every image.
	 */
	w->fs->flags |= EXT2_FLAG_IGNORE_CSUM_ERRORS;
	/*
	 * mke2fs records whether the building host's char is signed (for htree hashes); always
	 * say signed, as x86 does, so the image does not depend on the host's architecture.
	 */
	w->fs->super->s_flags &= ~EXT2_FLAGS_UNSIGNED_HASH;
	w->fs->super->s_flags |= EXT2_FLAGS_SIGNED_HASH;
	ext2fs_mark_super_dirty(w->fs);
	/* libext2fs reads 0 as "now": the one field that cannot say 0 says 1 second. */
	w->fs->now = w->t->sde > 0 ? (time_t)w->t->sde : 1;
	return 0;
}

void ext4fs_close(struct ext4fs *w)
{
	if (w->fs)
		ext2fs_free(w->fs);
	w->fs = NULL;
}

static uint64_t free_for_tree(const struct ext4fs *w)
{
	uint64_t free_blocks = ext2fs_free_blocks_count(w->fs->super);
	uint64_t reserved = ext2fs_r_blocks_count(w->fs->super);

	return free_blocks > reserved ? free_blocks - reserved : 0;
}

static int too_small(struct ext4fs *w, uint64_t short_blocks)
{
	uint64_t need = (w->blocks + short_blocks + short_blocks / 16 + 255) & ~255ull;

	log_error("image size %" PRIu64 " MiB is too small: the tree needs about %" PRIu64
		  " MiB (%" PRIu64 " bytes); raise image.size or use \"auto\"",
		  w->blocks * BLOCK_SIZE >> 20, need * BLOCK_SIZE >> 20, need * BLOCK_SIZE);
	return -MKI_E_NOSPACE;
}

/* Create the empty filesystem, growing an `auto` size until the tree fits with its margin. */
int ext4fs_create(struct ext4fs *w)
{
	const struct recipe_image *im = w->p->im;
	uint64_t inodes = first_inodes(w), want;
	int tries, ret;

	w->blocks = ext4fs_first_blocks(w);
	if (im->size && w->blocks < 2048) {
		log_error("image size %" PRIu64 " bytes is too small for ext4 with a journal; "
			  "use at least 8 MiB", im->size);
		return -MKI_E_NOSPACE;
	}
	if (im->size && inodes > w->blocks) {
		log_error("image size %" PRIu64 " MiB is too small: the tree has %" PRIu64 " entries and "
			  "ext4 holds at most one inode per block; raise image.size or use \"auto\"",
			  w->blocks * BLOCK_SIZE >> 20, w->need_inodes);
		return -MKI_E_NOSPACE;
	}
	if (im->size && inodes < w->blocks / 4)
		inodes = w->blocks / 4; /* mke2fs's own ratio when the size is given */
	if (!w->dev)
		w->dev = sink_path(w->k);
	for (tries = 0; tries < MAX_SIZE_TRIES; tries++) {
		ext4fs_close(w);
		ret = sink_begin(w->k, w->blocks * BLOCK_SIZE);
		if (!ret)
			ret = run_mke2fs(w, inodes);
		if (!ret)
			ret = open_fs(w);
		if (ret)
			return ret;
		want = im->size ? w->need_blocks : with_margin(w->need_blocks, im->margin);
		if (free_for_tree(w) >= want)
			return 0;
		if (im->size)
			return too_small(w, want - free_for_tree(w));
		w->blocks += (want - free_for_tree(w)) * 100 / (100 - im->reserved) + w->blocks / 50;
		w->blocks = (w->blocks + 255) & ~255ull;
	}
	log_error("cannot size the image for this tree after %d tries", MAX_SIZE_TRIES);
	return -MKI_E_IMAGE;
}

/* --- finishing ----------------------------------------------------------------------------- */

static void stamp_super(struct ext4fs *w)
{
	struct ext2_super_block *sb = w->fs->super;
	int64_t t = w->t->sde;

	sb->s_mkfs_time = sb->s_lastcheck = (__u32)t;
	sb->s_mkfs_time_hi = sb->s_lastcheck_hi = (__u8)(t >> 32);
	sb->s_mtime = 0;
	sb->s_mtime_hi = 0;
	sb->s_wtime_hi = (__u8)(w->fs->now >> 32);
	ext2fs_mark_super_dirty(w->fs);
}

int ext4fs_finish(struct ext4fs *w)
{
	errcode_t err;

	stamp_super(w);
	err = ext2fs_close2(w->fs, 0);
	w->fs = NULL;
	return err ? ext4fs_lib_fail("cannot write", w->k->name, err) : 0;
}
