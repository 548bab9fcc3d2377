/* The ext4 writer's inodes: metadata, links; symlinks, device nodes, xattrs, hard links. */
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ext4inode.h"
#include "lib/err.h"
#include "lib/str.h"

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
void ext4inode_apply_meta(struct ext2_inode_large *in, const struct imgtree_node *nd, int64_t sde)
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

int ext4inode_read(struct ext4fs *w, ext2_ino_t ino, struct ext2_inode_large *in,
		     const char *path)
{
	errcode_t err;

	memset(in, 0, INODE_SIZE);
	err = ext2fs_read_inode_full(w->fs, ino, (struct ext2_inode *)in, INODE_SIZE);
	return err ? ext4fs_lib_fail("cannot read back the inode of", path, err) : 0;
}

int ext4inode_write(struct ext4fs *w, ext2_ino_t ino, struct ext2_inode_large *in,
		      const char *path)
{
	errcode_t err = ext2fs_write_inode_full(w->fs, ino, (struct ext2_inode *)in, INODE_SIZE);

	return err ? ext4fs_lib_fail("cannot write the inode of", path, err) : 0;
}

int ext4inode_update_meta(struct ext4fs *w, size_t i)
{
	union ext4inode_buf u;
	int ret = ext4inode_read(w, w->ino[i], &u.in, w->t->v[i].e->path);

	if (ret)
		return ret;
	ext4inode_apply_meta(&u.in, &w->t->v[i], w->t->sde);
	return ext4inode_write(w, w->ino[i], &u.in, w->t->v[i].e->path);
}

int ext4inode_link(struct ext4fs *w, ext2_ino_t dir, const char *name, ext2_ino_t ino,
		    int type, const char *path)
{
	errcode_t err = ext2fs_link(w->fs, dir, name, ino, type);

	if (err == EXT2_ET_DIR_NO_SPACE) {
		err = ext2fs_expand_dir(w->fs, dir);
		if (!err)
			err = ext2fs_link(w->fs, dir, name, ino, type);
	}
	return err ? ext4fs_lib_fail("cannot link", path, err) : 0;
}

int ext4inode_new(struct ext4fs *w, size_t i, int mark)
{
	ext2_ino_t dir = w->ino[imgtree_parent(w->t, i)];
	errcode_t err = ext2fs_new_inode(w->fs, dir, type_bits(w->t->v[i].e->type), NULL,
					 &w->ino[i]);

	if (err)
		return ext4fs_lib_fail("cannot allocate an inode for", w->t->v[i].e->path, err);
	if (mark)
		ext2fs_inode_alloc_stats2(w->fs, w->ino[i], +1, 0);
	return 0;
}

/* --- other types --------------------------------------------------------------------------- */

int ext4inode_add_symlink(struct ext4fs *w, size_t i)
{
	const struct manifest_entry *e = w->t->v[i].e;
	ext2_ino_t parent = w->ino[imgtree_parent(w->t, i)];
	errcode_t err;
	int ret = ext4inode_new(w, i, 0);

	if (ret)
		return ret;
	err = ext2fs_symlink(w->fs, parent, w->ino[i], NULL, e->target);
	if (err)
		return ext4fs_lib_fail("cannot create symlink", e->path, err);
	ret = ext4inode_update_meta(w, i);
	return ret ? ret : ext4inode_link(w, parent, imgtree_name(w->t, i), w->ino[i],
				     EXT2_FT_SYMLINK, e->path);
}

int ext4inode_add_special(struct ext4fs *w, size_t i)
{
	union ext4inode_buf u;
	const struct manifest_entry *e = w->t->v[i].e;
	int ret = ext4inode_new(w, i, 1);

	if (ret)
		return ret;
	memset(&u, 0, sizeof(u));
	ext4inode_apply_meta(&u.in, &w->t->v[i], w->t->sde);
	if ((e->type == MF_CHR || e->type == MF_BLK) && e->major < 256 && e->minor < 256) {
		u.in.i_block[0] = e->major * 256 + e->minor;
	} else if (e->type == MF_CHR || e->type == MF_BLK) {
		u.in.i_block[1] = (e->minor & 0xff) | (e->major << 8) | ((e->minor & ~0xffu) << 12);
	}
	ret = ext4inode_write(w, w->ino[i], &u.in, e->path);
	return ret ? ret : ext4inode_link(w, w->ino[imgtree_parent(w->t, i)], imgtree_name(w->t, i),
				     w->ino[i], dirent_type(e->type), e->path);
}

int ext4inode_set_xattrs(struct ext4fs *w, size_t i)
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
		return ext4fs_lib_fail("cannot set the extended attributes of", e->path, err);
	return 0;
}

/* mke2fs made /lost+found; a manifest entry for it describes that directory. */
int ext4inode_is_lost_found(const struct ext4fs *w, size_t i)
{
	return !strcmp(w->t->v[i].e->path, "lost+found");
}

int ext4inode_add_hardlink(struct ext4fs *w, size_t i)
{
	const struct imgtree_node *nd = &w->t->v[i];

	w->ino[i] = w->ino[nd->link];
	return ext4inode_link(w, w->ino[imgtree_parent(w->t, i)], imgtree_name(w->t, i), w->ino[i],
			 dirent_type(w->t->v[nd->link].e->type), nd->e->path);
}

/* mke2fs's own inodes (root, resize, journal, lost+found) carry the epoch too. */
int ext4inode_stamp_reserved(struct ext4fs *w)
{
	union ext4inode_buf u;
	ext2_ino_t ino, lost = 0;
	int ret = 0;

	ext2fs_lookup(w->fs, EXT2_ROOT_INO, "lost+found", 10, NULL, &lost);
	for (ino = 1; ino <= EXT2_FIRST_INO(w->fs->super) && !ret; ino++) {
		ext2_ino_t at = ino == EXT2_FIRST_INO(w->fs->super) ? lost : ino;

		if (!at || (ret = ext4inode_read(w, at, &u.in, "(reserved inode)")))
			continue;
		if (!u.in.i_mode && !u.in.i_mtime && !u.in.i_ctime && !u.in.i_atime)
			continue; /* never used: stays all zero */
		if (at != EXT2_ROOT_INO)
			set_times(&u.in, w->t->sde, w->t->sde);
		ret = ext4inode_write(w, at, &u.in, "(reserved)");
	}
	return ret;
}
