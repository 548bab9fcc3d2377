/*
 * The ext4 writer: an empty filesystem from mke2fs with fixed options (clean environment, no
 * host config, lazy init on a fresh sparse file), then populated in-process with libext2fs in
 * sorted path order. libext2fs is used here and nowhere else.
 */
#include "image.h"

#include <errno.h>
#include <et/com_err.h>
#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2fs.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "fsutil.h"
#include "hash.h"
#include "imgtree.h"
#include "log.h"
#include "proc.h"
#include "str.h"
#include "tarout.h"

#define BLOCK_SIZE 4096u
#define INODE_SIZE 256u
#define COPY_BLOCKS 256u       /* 1 MiB per write */
#define MIN_BLOCKS 4096u       /* 16 MiB: room for a 4 MiB journal and the metadata */
#define MAX_SIZE_TRIES 6
#define WRITEBACK_BYTES (32u << 20)

static const char features[] = "none,has_journal,ext_attr,resize_inode,dir_index,filetype,"
	"extent,64bit,flex_bg,sparse_super,large_file,huge_file,dir_nlink,extra_isize,metadata_csum";

struct ext4w {
	const struct imgtree *t;
	const struct image_params *p;
	ext2_filsys fs;
	char *tmp;             /* temporary image beside the output */
	ext2_ino_t *ino;       /* per node */
	uint64_t *dir_bytes;   /* per directory node: bytes of directory entries */
	uint32_t *subdirs;     /* per directory node: subdirectories */
	uint64_t need_blocks;  /* data, directories, symlinks, xattr blocks */
	uint64_t need_inodes;
	uint64_t blocks;       /* filesystem size in blocks */
	uint8_t *buf;          /* COPY_BLOCKS blocks */
	int img_fd;            /* the temporary image, for file data (libext2fs never caches it) */
	int kernel_copy;       /* copy_file_range() works between source and image */
	uint64_t unflushed;    /* bytes copied since writeback was last started */
	struct progress progress;
};

/* --- sizing ------------------------------------------------------------------------------- */

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static uint64_t dirent_len(size_t name_len)
{
	return (8 + name_len + 3) & ~3ull;
}

/* A directory needs an htree when its entries do not fit the first block beside "." and "..". */
static int wants_htree(uint64_t bytes)
{
	return bytes > BLOCK_SIZE - 12 - 24 - 64;
}

static uint64_t dir_blocks(uint64_t bytes)
{
	if (!wants_htree(bytes))
		return 1;
	/* Leaves split half full; one root, one index level per ~500 leaves. */
	return 1 + div_up(bytes * 2, BLOCK_SIZE - 12) + div_up(bytes, 500 * (BLOCK_SIZE / 2));
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
		*out = div_up((uint64_t)st.st_size, BLOCK_SIZE);
		return 0;
	}
	while ((data = lseek(fd, pos, SEEK_DATA)) >= 0) {
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			break;
		n += div_up((uint64_t)hole, BLOCK_SIZE) - (uint64_t)data / BLOCK_SIZE;
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

static int node_blocks(struct ext4w *w, size_t i, uint64_t *out)
{
	const struct manifest_entry *e = w->t->v[i].e;
	uint64_t n = 0;
	int ret = 0;

	if (e->type == MF_REG) {
		ret = file_blocks(w->t, i, &n);
		n += n > 4 * 32768 ? div_up(n, 340 * 32768) + 1 : 0; /* extent tree blocks */
	} else if (e->type == MF_SYMLINK) {
		n = strlen(e->target) >= 60;
	}
	if (xattr_bytes(e) > INODE_SIZE - 160 - 4 - 16)
		n++;
	*out = n;
	return ret;
}

/* What the tree needs: blocks beyond the filesystem's own metadata, and inodes. */
static int estimate(struct ext4w *w)
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

/* First guess for `auto`: data plus inode tables, journal and bitmaps; mke2fs tells the rest. */
static uint64_t auto_blocks(const struct ext4w *w, uint64_t inodes)
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

static int check_ids(const struct recipe_image *im)
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
static int run_mke2fs(struct ext4w *w, uint64_t inodes)
{
	const struct recipe_image *im = w->p->im;
	char uuid[37], seed[37], *e_opt = NULL, *tm = NULL, *n = NULL, *m = NULL, *b = NULL;
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
	e_opt = xasprintf("hash_seed=%s,nodiscard,assume_storage_prezeroed=1,root_owner=0:0",
			  im->hash_seed ? im->hash_seed : seed);
	tm = xasprintf("E2FSPROGS_FAKE_TIME=%" PRId64, w->t->sde);
	n = xasprintf("%" PRIu64, inodes);
	m = xasprintf("%u", im->reserved);
	b = xasprintf("%" PRIu64, w->blocks);
	{
		const char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C",
			"MKE2FS_CONFIG=/nonexistent/mkimage-builtin-defaults", tm, NULL };
		const char *argv[] = { prog, "-q", "-F", "-t", "ext4", "-T", "default", "-o", "Linux",
			"-b", "4096", "-I", "256", "-N", n, "-m", m, "-L", im->label ? im->label : "",
			"-U", im->uuid ? im->uuid : uuid, "-O", features, "-E", e_opt, "--", w->tmp,
			b, NULL };

		o.env = env;
		ret = proc_run(argv, &o, &status);
	}
	if (!ret && status) {
		log_error("mke2fs failed (status %d): %s", status, err.p ? err.p : "");
		ret = -MKI_E_IMAGE;
	} else if (ret) {
		log_error("cannot run '%s': %s", prog, strerror(-ret));
	}
	buf_release(&err);
	free(prog);
	free(e_opt);
	free(tm);
	free(n);
	free(m);
	free(b);
	return ret;
}

static int lib_fail(const char *what, const char *path, errcode_t err)
{
	if (err == EXT2_ET_BLOCK_ALLOC_FAIL || err == EXT2_ET_INODE_ALLOC_FAIL ||
	    err == EXT2_ET_DIR_NO_SPACE_FOR_CSUM || err == ENOSPC) {
		log_error("%s '%s': the image is full; raise image.size (or use \"auto\")", what, path);
		return -MKI_E_NOSPACE;
	}
	log_error("%s '%s': %s", what, path, error_message(err));
	return -MKI_E_IMAGE;
}

static int open_fs(struct ext4w *w)
{
	errcode_t err = ext2fs_open2(w->tmp, NULL, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0,
				     unix_io_manager, &w->fs);

	if (!err)
		err = ext2fs_read_bitmaps(w->fs);
	if (err)
		return lib_fail("cannot open the new filesystem", w->tmp, err);
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

static void close_fs(struct ext4w *w)
{
	if (w->fs)
		ext2fs_free(w->fs);
	w->fs = NULL;
}

static int make_file(struct ext4w *w)
{
	int fd = open(w->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 || ftruncate(fd, (off_t)(w->blocks * BLOCK_SIZE)) < 0) {
		int err = errno;

		log_error("cannot create '%s': %s", w->tmp, strerror(err));
		if (fd >= 0)
			close(fd);
		return -err;
	}
	close(fd);
	return 0;
}

static uint64_t free_for_tree(const struct ext4w *w)
{
	uint64_t free_blocks = ext2fs_free_blocks_count(w->fs->super);
	uint64_t reserved = ext2fs_r_blocks_count(w->fs->super);

	return free_blocks > reserved ? free_blocks - reserved : 0;
}

static int too_small(struct ext4w *w, uint64_t short_blocks)
{
	uint64_t need = (w->blocks + short_blocks + short_blocks / 16 + 255) & ~255ull;

	log_error("image size %" PRIu64 " MiB is too small: the tree needs about %" PRIu64
		  " MiB (%" PRIu64 " bytes); raise image.size or use \"auto\"",
		  w->blocks * BLOCK_SIZE >> 20, need * BLOCK_SIZE >> 20, need * BLOCK_SIZE);
	return -MKI_E_NOSPACE;
}

/* Create the empty filesystem, growing an `auto` size until the tree fits with its margin. */
static int create_fs(struct ext4w *w)
{
	const struct recipe_image *im = w->p->im;
	uint64_t inodes = with_margin(w->need_inodes, im->margin) + 16, want;
	int tries, ret;

	w->blocks = im->size ? im->size / BLOCK_SIZE : auto_blocks(w, inodes);
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
	for (tries = 0; tries < MAX_SIZE_TRIES; tries++) {
		close_fs(w);
		ret = make_file(w);
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

/* --- inodes -------------------------------------------------------------------------------- */

static void set_time(__u32 *lo, __u32 *extra, int64_t t)
{
	*lo = (__u32)t;
	/* The two epoch bits carry times past 2038 (and before 1970). */
	*extra = (__u32)(((t - (int64_t)(int32_t)*lo) >> 32) & 3);
}

static void set_times(struct ext2_inode_large *in, int64_t mtime, int64_t sde)
{
	in->i_extra_isize = sizeof(struct ext2_inode_large) - EXT2_GOOD_OLD_INODE_SIZE;
	set_time(&in->i_atime, &in->i_atime_extra, sde);
	set_time(&in->i_ctime, &in->i_ctime_extra, sde);
	set_time(&in->i_crtime, &in->i_crtime_extra, sde);
	set_time(&in->i_mtime, &in->i_mtime_extra, mtime);
}

static __u16 type_bits(char type)
{
	switch (type) {
	case MF_DIR: return LINUX_S_IFDIR;
	case MF_SYMLINK: return LINUX_S_IFLNK;
	case MF_CHR: return LINUX_S_IFCHR;
	case MF_BLK: return LINUX_S_IFBLK;
	case MF_FIFO: return LINUX_S_IFIFO;
	case MF_SOCK: return LINUX_S_IFSOCK;
	default: return LINUX_S_IFREG;
	}
}

static int dirent_type(char type)
{
	switch (type) {
	case MF_DIR: return EXT2_FT_DIR;
	case MF_SYMLINK: return EXT2_FT_SYMLINK;
	case MF_CHR: return EXT2_FT_CHRDEV;
	case MF_BLK: return EXT2_FT_BLKDEV;
	case MF_FIFO: return EXT2_FT_FIFO;
	case MF_SOCK: return EXT2_FT_SOCK;
	default: return EXT2_FT_REG_FILE;
	}
}

/* Owner, mode and times from the manifest onto an inode that may already hold blocks. */
static void apply_meta(struct ext2_inode_large *in, const struct imgtree_node *nd, int64_t sde)
{
	const struct manifest_entry *e = nd->e;

	in->i_mode = (__u16)(type_bits(e->type) | (e->mode & 07777));
	in->i_uid = (__u16)e->uid;
	in->osd2.linux2.l_i_uid_high = (__u16)(e->uid >> 16);
	in->i_gid = (__u16)e->gid;
	in->osd2.linux2.l_i_gid_high = (__u16)(e->gid >> 16);
	if (e->type != MF_DIR)
		in->i_links_count = (__u16)nd->nlink;
	set_times(in, nd->mtime, sde);
}

static int read_inode(struct ext4w *w, ext2_ino_t ino, struct ext2_inode_large *in,
		      const char *path)
{
	errcode_t err;

	memset(in, 0, INODE_SIZE);
	err = ext2fs_read_inode_full(w->fs, ino, (struct ext2_inode *)in, INODE_SIZE);
	return err ? lib_fail("cannot read back the inode of", path, err) : 0;
}

static int write_inode(struct ext4w *w, ext2_ino_t ino, struct ext2_inode_large *in,
		       const char *path)
{
	errcode_t err = ext2fs_write_inode_full(w->fs, ino, (struct ext2_inode *)in, INODE_SIZE);

	return err ? lib_fail("cannot write the inode of", path, err) : 0;
}

static int update_meta(struct ext4w *w, size_t i)
{
	union { struct ext2_inode_large in; uint8_t raw[INODE_SIZE]; } u;
	int ret = read_inode(w, w->ino[i], &u.in, w->t->v[i].e->path);

	if (ret)
		return ret;
	apply_meta(&u.in, &w->t->v[i], w->t->sde);
	return write_inode(w, w->ino[i], &u.in, w->t->v[i].e->path);
}

static int link_name(struct ext4w *w, ext2_ino_t dir, const char *name, ext2_ino_t ino,
		     int type, const char *path)
{
	errcode_t err = ext2fs_link(w->fs, dir, name, ino, type);

	if (err == EXT2_ET_DIR_NO_SPACE) {
		err = ext2fs_expand_dir(w->fs, dir);
		if (!err)
			err = ext2fs_link(w->fs, dir, name, ino, type);
	}
	return err ? lib_fail("cannot link", path, err) : 0;
}

static int new_inode(struct ext4w *w, size_t i, int mark)
{
	ext2_ino_t dir = w->ino[imgtree_parent(w->t, i)];
	errcode_t err = ext2fs_new_inode(w->fs, dir, type_bits(w->t->v[i].e->type), NULL,
					 &w->ino[i]);

	if (err)
		return lib_fail("cannot allocate an inode for", w->t->v[i].e->path, err);
	if (mark)
		ext2fs_inode_alloc_stats2(w->fs, w->ino[i], +1, 0);
	return 0;
}

/* --- directories --------------------------------------------------------------------------- */

/* Block 0 of an htree: "." and "..", then the dx root pointing at leaf block 1 (for all hashes). */
static void fill_dx_root(uint8_t *root, ext2_ino_t ino, ext2_ino_t parent, int hash_version)
{
	struct ext2_dir_entry *de = (struct ext2_dir_entry *)root;
	struct ext2_dx_root_info *info = (struct ext2_dx_root_info *)(root + 24);
	struct ext2_dx_countlimit *cl = (struct ext2_dx_countlimit *)(root + 32);

	memset(root, 0, BLOCK_SIZE);
	de->inode = ino;
	de->rec_len = 12;
	ext2fs_dirent_set_name_len(de, 1);
	ext2fs_dirent_set_file_type(de, EXT2_FT_DIR);
	de->name[0] = '.';
	de = (struct ext2_dir_entry *)(root + 12);
	de->inode = parent;
	de->rec_len = BLOCK_SIZE - 12;
	ext2fs_dirent_set_name_len(de, 2);
	ext2fs_dirent_set_file_type(de, EXT2_FT_DIR);
	de->name[0] = de->name[1] = '.';
	info->hash_version = (__u8)hash_version;
	info->info_length = 8;
	/* metadata_csum keeps a dx tail after the entries */
	cl->limit = (BLOCK_SIZE - 32 - sizeof(struct ext2_dx_tail)) / sizeof(struct ext2_dx_entry);
	cl->count = 1;
	((struct ext2_dx_entry *)cl)->block = 1;
}

/*
 * Turn a fresh one-block directory into an empty htree: a dx root over one empty leaf. From
 * then on ext2fs_link() adds entries through the index, splitting leaves as they fill.
 */
static int make_htree(struct ext4w *w, size_t i, ext2_ino_t parent)
{
	union { struct ext2_inode_large in; uint8_t raw[INODE_SIZE]; } u;
	const char *path = w->t->v[i].e->path;
	ext2_ino_t ino = w->ino[i];
	char *leaf = NULL;
	uint8_t *root = xmalloc(BLOCK_SIZE);
	ext2_extent_handle_t h = NULL;
	blk64_t root_blk = 0, leaf_blk = 0;
	errcode_t err = 0;
	int ret = read_inode(w, ino, &u.in, path);

	if (ret)
		goto out;
	err = ext2fs_bmap2(w->fs, ino, (struct ext2_inode *)&u.in, NULL, 0, 0, NULL, &root_blk);
	if (!err)
		err = ext2fs_new_block2(w->fs, root_blk + 1, NULL, &leaf_blk);
	if (!err)
		err = ext2fs_new_dir_block(w->fs, 0, 0, &leaf);
	if (!err)
		err = ext2fs_write_dir_block4(w->fs, leaf_blk, leaf, 0, ino);
	if (err)
		goto out;
	ext2fs_block_alloc_stats2(w->fs, leaf_blk, +1);
	fill_dx_root(root, ino, parent, w->fs->super->s_def_hash_version);
	err = ext2fs_write_dir_block4(w->fs, root_blk, root, 0, ino);
	if (!err)
		err = ext2fs_extent_open2(w->fs, ino, (struct ext2_inode *)&u.in, &h);
	if (!err)
		err = ext2fs_extent_set_bmap(h, 1, leaf_blk, 0);
	if (err || (ret = read_inode(w, ino, &u.in, path)))
		goto out;
	u.in.i_flags |= EXT2_INDEX_FL;
	u.in.i_size = 2 * BLOCK_SIZE;
	ext2fs_iblk_set(w->fs, (struct ext2_inode *)&u.in, 2);
	ret = write_inode(w, ino, &u.in, path);
out:
	if (h)
		ext2fs_extent_free(h);
	ext2fs_free_mem(&leaf);
	free(root);
	return err ? lib_fail("cannot index directory", path, err) : ret;
}

static int add_dir(struct ext4w *w, size_t i)
{
	ext2_ino_t parent = w->ino[imgtree_parent(w->t, i)];
	errcode_t err;
	int ret = new_inode(w, i, 0);

	if (ret)
		return ret;
	err = ext2fs_mkdir(w->fs, parent, w->ino[i], NULL);
	if (err)
		return lib_fail("cannot create directory", w->t->v[i].e->path, err);
	if (wants_htree(w->dir_bytes[i]) && (ret = make_htree(w, i, parent)))
		return ret;
	ret = link_name(w, parent, imgtree_name(w->t, i), w->ino[i], EXT2_FT_DIR,
			w->t->v[i].e->path);
	return ret ? ret : update_meta(w, i);
}

/* --- regular files ------------------------------------------------------------------------- */

/* Allocate blocks for every data range of the source, so holes stay holes. */
static int allocate_data(struct ext4w *w, ext2_ino_t ino, int fd, uint64_t size,
			 const char *path)
{
	off_t pos = 0, data, hole;
	errcode_t err;

	while ((uint64_t)pos < size) {
		data = lseek(fd, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? (off_t)size : lseek(fd, data, SEEK_HOLE);
		if (data < 0)
			data = pos; /* no SEEK_DATA here: the whole file is data */
		if (hole < 0 || (uint64_t)hole > size)
			hole = (off_t)size;
		err = ext2fs_fallocate(w->fs, EXT2_FALLOCATE_FORCE_INIT, ino, NULL, ~0ull,
				       (uint64_t)data / BLOCK_SIZE,
				       div_up((uint64_t)hole, BLOCK_SIZE) - (uint64_t)data / BLOCK_SIZE);
		if (err)
			return lib_fail("cannot allocate blocks for", path, err);
		pos = hole;
	}
	return 0;
}

/*
 * pwrite() all `n` bytes: a short write (the disk filled up mid-buffer) is continued, so the
 * next attempt reports the real cause (ENOSPC) instead of a stale errno. 0 or -1 with errno.
 */
static int pwrite_all(int fd, const void *buf, size_t n, off_t off)
{
	const char *p = buf;
	ssize_t k;

	while (n) {
		k = pwrite(fd, p, n, off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = ENOSPC;
			return -1;
		}
		p += k;
		n -= (size_t)k;
		off += k;
	}
	return 0;
}

/* Through user space in whole-block runs, when the kernel cannot copy for us. */
static int copy_by_hand(struct ext4w *w, int fd, uint64_t src, uint64_t dst, uint64_t len,
			const char *path)
{
	ssize_t got = 0;
	size_t n;

	while (len) {
		n = len < COPY_BLOCKS * BLOCK_SIZE ? (size_t)len : COPY_BLOCKS * BLOCK_SIZE;
		got = pread(fd, w->buf, n, (off_t)src);
		if (got <= 0)
			break; /* the file shrank: the rest stays zero */
		if (pwrite_all(w->img_fd, w->buf, (size_t)got, (off_t)dst)) {
			int e = errno;

			log_error("cannot write the data of '%s' into '%s': %s", path, w->tmp, strerror(e));
			return -e;
		}
		progress_add(&w->progress, (uint64_t)got);
		src += (uint64_t)got;
		dst += (uint64_t)got;
		len -= (uint64_t)got;
	}
	if (got < 0) {
		int e = errno;

		log_error("cannot read '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}

/*
 * Copy one extent's bytes from the source into its blocks. The kernel copies (and may share
 * extents on reflink filesystems); the image file is fresh and sparse, so the tail of the last
 * block is already zero.
 */
static int copy_extent(struct ext4w *w, int fd, uint64_t size, const struct ext2fs_extent *x,
		       const char *path)
{
	uint64_t start = x->e_lblk * BLOCK_SIZE, len = (uint64_t)x->e_len * BLOCK_SIZE;
	loff_t src = (loff_t)start, dst = (loff_t)(x->e_pblk * BLOCK_SIZE);
	ssize_t got;

	if (start >= size)
		return 0;
	if (len > size - start)
		len = size - start;
	while (len && w->kernel_copy) {
		got = copy_file_range(fd, &src, w->img_fd, &dst, len, 0);
		if (got < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				errno == EOPNOTSUPP)) {
			w->kernel_copy = 0;
			break;
		}
		if (got < 0) {
			int e = errno;

			log_error("cannot copy '%s' into '%s': %s", path, w->tmp, strerror(e));
			return -e;
		}
		if (got == 0)
			return 0; /* the file shrank: the rest stays zero */
		progress_add(&w->progress, (uint64_t)got);
		len -= (uint64_t)got;
	}
	return copy_by_hand(w, fd, (uint64_t)src, (uint64_t)dst, len, path);
}

/*
 * Start writing the copied data out while we go on populating, so the fsync before the rename
 * finds little left to do (it waits for the disk, populating does not).
 */
static void start_writeback(struct ext4w *w, uint64_t bytes)
{
	w->unflushed += bytes;
	if (w->unflushed < WRITEBACK_BYTES)
		return;
	sync_file_range(w->img_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	w->unflushed = 0;
}

static int copy_data(struct ext4w *w, ext2_ino_t ino, int fd, uint64_t size, const char *path)
{
	ext2_extent_handle_t h = NULL;
	struct ext2fs_extent x;
	errcode_t err = ext2fs_extent_open(w->fs, ino, &h);
	int ret = 0;

	if (!err)
		err = ext2fs_extent_get(h, EXT2_EXTENT_ROOT, &x);
	while (!err && !ret) {
		if ((x.e_flags & EXT2_EXTENT_FLAGS_LEAF) && x.e_len)
			ret = copy_extent(w, fd, size, &x, path);
		if (!ret)
			err = ext2fs_extent_get(h, EXT2_EXTENT_NEXT, &x);
	}
	if (h)
		ext2fs_extent_free(h);
	if (err && err != EXT2_ET_EXTENT_NO_NEXT && err != EXT2_ET_NO_CURRENT_NODE)
		return lib_fail("cannot map the blocks of", path, err);
	if (!ret)
		start_writeback(w, size);
	return ret;
}

static int add_file(struct ext4w *w, size_t i)
{
	union { struct ext2_inode_large in; uint8_t raw[INODE_SIZE]; } u;
	const char *path = w->t->v[i].e->path;
	ext2_extent_handle_t h = NULL;
	struct stat st;
	errcode_t err;
	int fd = imgtree_open(w->t, i), ret;

	if (fd < 0)
		return fd;
	ret = new_inode(w, i, 1);
	if (!ret && fstat(fd, &st)) {
		ret = -errno;
		log_error("cannot stat '%s' in the staging tree: %s", path, strerror(-ret));
	}
	if (ret)
		goto out;
	memset(&u, 0, sizeof(u));
	apply_meta(&u.in, &w->t->v[i], w->t->sde);
	err = ext2fs_extent_open2(w->fs, w->ino[i], (struct ext2_inode *)&u.in, &h);
	if (!err)
		err = ext2fs_inode_size_set(w->fs, (struct ext2_inode *)&u.in, (uint64_t)st.st_size);
	if (h)
		ext2fs_extent_free(h);
	ret = err ? lib_fail("cannot set up", path, err) : write_inode(w, w->ino[i], &u.in, path);
	if (!ret)
		ret = allocate_data(w, w->ino[i], fd, (uint64_t)st.st_size, path);
	if (!ret && st.st_size)
		ret = copy_data(w, w->ino[i], fd, (uint64_t)st.st_size, path);
	if (!ret)
		ret = link_name(w, w->ino[imgtree_parent(w->t, i)], imgtree_name(w->t, i),
				w->ino[i], EXT2_FT_REG_FILE, path);
out:
	close(fd);
	return ret;
}

/* --- other types --------------------------------------------------------------------------- */

static int add_symlink(struct ext4w *w, size_t i)
{
	const struct manifest_entry *e = w->t->v[i].e;
	ext2_ino_t parent = w->ino[imgtree_parent(w->t, i)];
	errcode_t err;
	int ret = new_inode(w, i, 0);

	if (ret)
		return ret;
	err = ext2fs_symlink(w->fs, parent, w->ino[i], NULL, e->target);
	if (err)
		return lib_fail("cannot create symlink", e->path, err);
	ret = update_meta(w, i);
	return ret ? ret : link_name(w, parent, imgtree_name(w->t, i), w->ino[i],
				     EXT2_FT_SYMLINK, e->path);
}

static int add_special(struct ext4w *w, size_t i)
{
	union { struct ext2_inode_large in; uint8_t raw[INODE_SIZE]; } u;
	const struct manifest_entry *e = w->t->v[i].e;
	int ret = new_inode(w, i, 1);

	if (ret)
		return ret;
	memset(&u, 0, sizeof(u));
	apply_meta(&u.in, &w->t->v[i], w->t->sde);
	if ((e->type == MF_CHR || e->type == MF_BLK) && e->major < 256 && e->minor < 256) {
		u.in.i_block[0] = e->major * 256 + e->minor;
	} else if (e->type == MF_CHR || e->type == MF_BLK) {
		u.in.i_block[1] = (e->minor & 0xff) | (e->major << 8) | ((e->minor & ~0xffu) << 12);
	}
	ret = write_inode(w, w->ino[i], &u.in, e->path);
	return ret ? ret : link_name(w, w->ino[imgtree_parent(w->t, i)], imgtree_name(w->t, i),
				     w->ino[i], dirent_type(e->type), e->path);
}

static int add_xattrs(struct ext4w *w, size_t i)
{
	const struct manifest_entry *e = w->t->v[i].e;
	struct ext2_xattr_handle *h = NULL;
	errcode_t err;
	size_t k;

	if (!e->n_xattrs || e->type == MF_HARDLINK)
		return 0;
	err = ext2fs_xattrs_open(w->fs, w->ino[i], &h);
	if (!err)
		err = ext2fs_xattrs_read(h);
	for (k = 0; !err && k < e->n_xattrs; k++)
		err = ext2fs_xattr_set(h, e->xattrs[k].name, e->xattrs[k].value, e->xattrs[k].len);
	if (h) {
		errcode_t cerr = ext2fs_xattrs_close(&h);

		err = err ? err : cerr;
	}
	if (err)
		return lib_fail("cannot set the extended attributes of", e->path, err);
	return 0;
}

/* mke2fs made /lost+found; a manifest entry for it describes that directory. */
static int is_lost_found(const struct ext4w *w, size_t i)
{
	return !strcmp(w->t->v[i].e->path, "lost+found");
}

static int reuse_lost_found(struct ext4w *w, size_t i)
{
	errcode_t err;

	if (w->t->v[i].e->type != MF_DIR) {
		log_error("manifest: 'lost+found' must be a directory in an ext4 image");
		return -MKI_E_IMAGE;
	}
	err = ext2fs_lookup(w->fs, EXT2_ROOT_INO, "lost+found", 10, NULL, &w->ino[i]);
	return err ? lib_fail("cannot find", "lost+found", err) : update_meta(w, i);
}

static int add_node(struct ext4w *w, size_t i)
{
	int ret;

	if (is_lost_found(w, i)) {
		ret = reuse_lost_found(w, i);
		return ret ? ret : add_xattrs(w, i);
	}
	switch (w->t->v[i].e->type) {
	case MF_DIR: ret = i ? add_dir(w, i) : update_meta(w, i); break;
	case MF_REG: ret = add_file(w, i); break;
	case MF_SYMLINK: ret = add_symlink(w, i); break;
	case MF_HARDLINK: return 0; /* second pass */
	default: ret = add_special(w, i); break;
	}
	return ret ? ret : add_xattrs(w, i);
}

static int add_hardlink(struct ext4w *w, size_t i)
{
	const struct imgtree_node *nd = &w->t->v[i];

	w->ino[i] = w->ino[nd->link];
	return link_name(w, w->ino[imgtree_parent(w->t, i)], imgtree_name(w->t, i), w->ino[i],
			 dirent_type(w->t->v[nd->link].e->type), nd->e->path);
}

/* mke2fs's own inodes (root, resize, journal, lost+found) carry the epoch too. */
static int stamp_reserved(struct ext4w *w)
{
	union { struct ext2_inode_large in; uint8_t raw[INODE_SIZE]; } u;
	ext2_ino_t ino, lost = 0;
	int ret = 0;

	ext2fs_lookup(w->fs, EXT2_ROOT_INO, "lost+found", 10, NULL, &lost);
	for (ino = 1; ino <= EXT2_FIRST_INO(w->fs->super) && !ret; ino++) {
		ext2_ino_t at = ino == EXT2_FIRST_INO(w->fs->super) ? lost : ino;

		if (!at || (ret = read_inode(w, at, &u.in, "(reserved inode)")))
			continue;
		if (!u.in.i_mode && !u.in.i_mtime && !u.in.i_ctime && !u.in.i_atime)
			continue; /* never used: stays all zero */
		if (at != EXT2_ROOT_INO)
			set_times(&u.in, w->t->sde, w->t->sde);
		ret = write_inode(w, at, &u.in, "(reserved)");
	}
	return ret;
}

static int populate(struct ext4w *w)
{
	size_t i;
	int ret = stamp_reserved(w);

	w->ino[0] = EXT2_ROOT_INO;
	for (i = 0; i < w->t->n && !ret; i++) {
		ret = add_node(w, i);
		if (!ret && mki_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	for (i = 1; i < w->t->n && !ret; i++)
		if (w->t->v[i].e->type == MF_HARDLINK)
			ret = add_hardlink(w, i);
	return ret;
}

/* --- finishing ----------------------------------------------------------------------------- */

/* Zero the dx entries past `count` in an index block whose count/limit header is at `at`. */
static void scrub_dx(char *buf, unsigned at)
{
	struct ext2_dx_countlimit *cl = (struct ext2_dx_countlimit *)(buf + at);
	unsigned from = at + ext2fs_le16_to_cpu(cl->count) * 8, to = at + ext2fs_le16_to_cpu(cl->limit) * 8;

	if (from < to && to <= BLOCK_SIZE)
		memset(buf + from, 0, to - from);
}

/* Zero what follows each name in a leaf: padding and free space (the checksum tail is kept). */
static void scrub_leaf(ext2_filsys fs, char *buf)
{
	unsigned off = 0, rec_len, start;
	struct ext2_dir_entry *de;

	while (off + 8 <= BLOCK_SIZE - sizeof(struct ext2_dir_entry_tail)) {
		de = (struct ext2_dir_entry *)(buf + off);
		if (ext2fs_get_rec_len(fs, de, &rec_len) || rec_len < 8 ||
		    off + rec_len > BLOCK_SIZE - sizeof(struct ext2_dir_entry_tail))
			return;
		if (!de->inode)
			de->name_len = 0;
		start = 8 + ext2fs_dirent_name_len(de);
		if (start < rec_len)
			memset(buf + off + start, 0, rec_len - start);
		off += rec_len;
	}
}

/*
 * libext2fs 1.47.0 splits htree leaves into an uninitialised buffer (link.c, dx_split_leaf), so
 * heap bytes would reach the image after names and in free space. Zero them in every block of
 * the directory and write it back (checksums are recomputed on write).
 */
static int scrub_htree(struct ext4w *w, size_t i)
{
	union { struct ext2_inode_large in; uint8_t raw[INODE_SIZE]; } u;
	const char *path = w->t->v[i].e->path;
	char *buf = xmalloc(BLOCK_SIZE);
	struct ext2_dir_entry *de = (struct ext2_dir_entry *)buf;
	blk64_t lblk, pblk, n;
	unsigned rec_len;
	errcode_t err = 0;
	int ret = read_inode(w, w->ino[i], &u.in, path);

	n = EXT2_I_SIZE(&u.in) / BLOCK_SIZE;
	for (lblk = 0; !ret && !err && lblk < n; lblk++) {
		err = ext2fs_bmap2(w->fs, w->ino[i], (struct ext2_inode *)&u.in, NULL, 0, lblk, NULL,
				   &pblk);
		if (!err)
			err = ext2fs_read_dir_block4(w->fs, pblk, buf, 0, w->ino[i]);
		if (err)
			break;
		if (lblk == 0)
			scrub_dx(buf, 32);
		else if (!de->inode && !ext2fs_get_rec_len(w->fs, de, &rec_len) && rec_len == BLOCK_SIZE)
			scrub_dx(buf, 8);
		else
			scrub_leaf(w->fs, buf);
		err = ext2fs_write_dir_block4(w->fs, pblk, buf, 0, w->ino[i]);
	}
	free(buf);
	return err ? lib_fail("cannot clean directory", path, err) : ret;
}

/* dir_nlink: a directory with too many subdirectories for the 16-bit count says 1. */
static int fix_dir_nlink(struct ext4w *w)
{
	union { struct ext2_inode_large in; uint8_t raw[INODE_SIZE]; } u;
	size_t i;
	int ret = 0;

	for (i = 0; i < w->t->n && !ret; i++) {
		if (w->t->v[i].e->type != MF_DIR || w->subdirs[i] + 2 <= EXT2_LINK_MAX)
			continue;
		ret = read_inode(w, w->ino[i], &u.in, w->t->v[i].e->path);
		u.in.i_links_count = 1;
		if (!ret)
			ret = write_inode(w, w->ino[i], &u.in, w->t->v[i].e->path);
	}
	return ret;
}

static void stamp_super(struct ext4w *w)
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

static int finish(struct ext4w *w)
{
	errcode_t err;
	int ret = fix_dir_nlink(w);
	size_t i;

	for (i = 1; i < w->t->n && !ret; i++)
		if (w->t->v[i].e->type == MF_DIR && wants_htree(w->dir_bytes[i]) && !is_lost_found(w, i))
			ret = scrub_htree(w, i);
	if (ret)
		return ret;
	stamp_super(w);
	err = ext2fs_close2(w->fs, 0);
	if (err) {
		w->fs = NULL;
		return lib_fail("cannot write", w->tmp, err);
	}
	w->fs = NULL;
	return 0;
}

/* Publish the finished temp file as `output`; the writer owns the message. */
static int commit(int fd, const char *tmp, const char *output)
{
	int ret = fsutil_commit(fd, tmp, output);

	if (ret)
		log_error("cannot write '%s': %s", output, strerror(-ret));
	return ret;
}

static int write_ext4(const struct imgtree *t, const struct image_params *p)
{
	struct ext4w w = { .t = t, .p = p, .img_fd = -1, .kernel_copy = 1 };
	double t0 = log_now();
	int ret;

	w.tmp = xasprintf("%s.tmp-%d", p->output, (int)getpid());
	w.ino = xcalloc(t->n, sizeof(*w.ino));
	w.dir_bytes = xcalloc(t->n, sizeof(*w.dir_bytes));
	w.subdirs = xcalloc(t->n, sizeof(*w.subdirs));
	w.buf = xmalloc(COPY_BLOCKS * BLOCK_SIZE);
	ret = check_ids(p->im);
	if (!ret)
		ret = estimate(&w);
	log_debug("image: the tree needs %" PRIu64 " blocks and %" PRIu64 " inodes (%.2fs)",
		  w.need_blocks, w.need_inodes, log_now() - t0);
	if (!ret)
		ret = create_fs(&w);
	log_debug("image: empty filesystem of %" PRIu64 " blocks (%.2fs)", w.blocks, log_now() - t0);
	if (!ret && (w.img_fd = open(w.tmp, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		ret = -errno;
		log_error("cannot open '%s': %s", w.tmp, strerror(errno));
	}
	if (!ret) {
		progress_begin(&w.progress, "image", w.need_blocks * BLOCK_SIZE, 1);
		ret = populate(&w);
		progress_end(&w.progress);
	}
	log_debug("image: populated (%.2fs)", log_now() - t0);
	if (!ret)
		ret = finish(&w);
	log_debug("image: closed (%.2fs)", log_now() - t0);
	if (!ret)
		ret = commit(w.img_fd, w.tmp, p->output);
	log_debug("image: committed (%.2fs)", log_now() - t0);
	close_fs(&w);
	if (w.img_fd >= 0)
		close(w.img_fd);
	if (ret == -MKI_E_INTERRUPTED)
		log_error("interrupted: the unfinished image '%s' is removed", w.tmp);
	if (ret)
		unlink(w.tmp);
	free(w.tmp);
	free(w.ino);
	free(w.dir_bytes);
	free(w.subdirs);
	free(w.buf);
	return ret;
}

int image_write(const struct stage *s, const struct image_params *p)
{
	struct imgtree t;
	int ret = imgtree_build(&t, s, p);

	if (ret)
		return ret > -MKI_E_BASE ? -MKI_E_IMAGE : ret;
	if (p->im->format == IMAGE_TAR)
		ret = tarout_write(&t, p);
	else
		ret = write_ext4(&t, p);
	imgtree_release(&t);
	/* An errno here (already logged) is still an image failure to the caller: exit status 8. */
	return ret > -MKI_E_BASE && ret < 0 ? -MKI_E_IMAGE : ret;
}
