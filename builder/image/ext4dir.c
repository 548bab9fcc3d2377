/* The ext4 writer: directories (linear or htree) and the finishing pass over them. */
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ext4dir.h"
#include "ext4inode.h"
#include "lib/err.h"
#include "lib/str.h"

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
static int make_htree(struct ext4fs *w, size_t i, ext2_ino_t parent)
{
	union ext4inode_buf u;
	const char *path = w->t->v[i].e->path;
	ext2_ino_t ino = w->ino[i];
	char *leaf = NULL;
	uint8_t *root = xmalloc(BLOCK_SIZE);
	ext2_extent_handle_t h = NULL;
	blk64_t root_blk = 0, leaf_blk = 0;
	errcode_t err = 0;
	int ret = ext4inode_read(w, ino, &u.in, path);

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
	if (err || (ret = ext4inode_read(w, ino, &u.in, path)))
		goto out;
	u.in.i_flags |= EXT2_INDEX_FL;
	u.in.i_size = 2 * BLOCK_SIZE;
	ext2fs_iblk_set(w->fs, (struct ext2_inode *)&u.in, 2);
	ret = ext4inode_write(w, ino, &u.in, path);
out:
	if (h)
		ext2fs_extent_free(h);
	ext2fs_free_mem(&leaf);
	free(root);
	return err ? ext4fs_lib_fail("cannot index directory", path, err) : ret;
}

int ext4dir_add(struct ext4fs *w, size_t i)
{
	ext2_ino_t parent = w->ino[imgtree_parent(w->t, i)];
	errcode_t err;
	int ret = ext4inode_new(w, i, 0);

	if (ret)
		return ret;
	err = ext2fs_mkdir(w->fs, parent, w->ino[i], NULL);
	if (err)
		return ext4fs_lib_fail("cannot create directory", w->t->v[i].e->path, err);
	if (ext4fs_wants_htree(w->dir_bytes[i]) && (ret = make_htree(w, i, parent)))
		return ret;
	ret = ext4inode_link(w, parent, imgtree_name(w->t, i), w->ino[i], EXT2_FT_DIR,
			w->t->v[i].e->path);
	return ret ? ret : ext4inode_update_meta(w, i);
}

/* mke2fs made /lost+found; a manifest entry for it describes that directory. */
int ext4dir_reuse_lost_found(struct ext4fs *w, size_t i)
{
	errcode_t err;

	if (w->t->v[i].e->type != MF_DIR) {
		log_error("manifest: 'lost+found' must be a directory in an ext4 image");
		return -MKI_E_IMAGE;
	}
	err = ext2fs_lookup(w->fs, EXT2_ROOT_INO, "lost+found", 10, NULL, &w->ino[i]);
	return err ? ext4fs_lib_fail("cannot find", "lost+found", err) : ext4inode_update_meta(w, i);
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
static int scrub_htree(struct ext4fs *w, size_t i)
{
	union ext4inode_buf u;
	const char *path = w->t->v[i].e->path;
	char *buf = xmalloc(BLOCK_SIZE);
	struct ext2_dir_entry *de = (struct ext2_dir_entry *)buf;
	blk64_t lblk, pblk, n;
	unsigned rec_len;
	errcode_t err = 0;
	int ret = ext4inode_read(w, w->ino[i], &u.in, path);

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
	return err ? ext4fs_lib_fail("cannot clean directory", path, err) : ret;
}

/* dir_nlink: a directory with too many subdirectories for the 16-bit count says 1. */
static int fix_dir_nlink(struct ext4fs *w)
{
	union ext4inode_buf u;
	size_t i;
	int ret = 0;

	for (i = 0; i < w->t->n && !ret; i++) {
		if (w->t->v[i].e->type != MF_DIR || w->subdirs[i] + 2 <= EXT2_LINK_MAX)
			continue;
		ret = ext4inode_read(w, w->ino[i], &u.in, w->t->v[i].e->path);
		u.in.i_links_count = 1;
		if (!ret)
			ret = ext4inode_write(w, w->ino[i], &u.in, w->t->v[i].e->path);
	}
	return ret;
}

int ext4dir_finish(struct ext4fs *w)
{
	int ret = fix_dir_nlink(w);
	size_t i;

	for (i = 1; i < w->t->n && !ret; i++)
		if (w->t->v[i].e->type == MF_DIR && ext4fs_wants_htree(w->dir_bytes[i]) &&
		    !ext4inode_is_lost_found(w, i))
			ret = scrub_htree(w, i);
	return ret;
}
