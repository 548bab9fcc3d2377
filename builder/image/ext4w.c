/*
 * The ext4 format: size the filesystem for the tree, create it empty in the sink, write every
 * node in sorted path order, finish. The walk dispatches to the directory, file and inode
 * writers, which never call back up.
 */
#include "ext4w.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "ext4dir.h"
#include "ext4file.h"
#include "ext4fs.h"
#include "ext4inode.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"

int ext4w_estimate(const struct imgtree *t, const struct image_params *p, uint64_t *bytes)
{
	struct ext4fs w;
	int ret;

	ext4fs_init(&w, t, p, NULL);
	ret = ext4fs_check_ids(p->im);
	if (!ret)
		ret = ext4fs_estimate(&w);
	*bytes = ret ? 0 : ext4fs_first_blocks(&w) * BLOCK_SIZE;
	ext4fs_release(&w);
	return ret;
}

static int add_node(struct ext4fs *w, size_t i)
{
	int ret;

	if (ext4inode_is_lost_found(w, i)) {
		ret = ext4dir_reuse_lost_found(w, i);
		return ret ? ret : ext4inode_set_xattrs(w, i);
	}
	switch (w->t->v[i].e->type) {
	case MF_DIR: ret = i ? ext4dir_add(w, i) : ext4inode_update_meta(w, i); break;
	case MF_REG: ret = ext4file_add(w, i); break;
	case MF_SYMLINK: ret = ext4inode_add_symlink(w, i); break;
	case MF_HARDLINK: return 0; /* second pass */
	default: ret = ext4inode_add_special(w, i); break;
	}
	return ret ? ret : ext4inode_set_xattrs(w, i);
}

/* Every node in path order, then the hard links (to inodes that all exist by then). */
static int populate(struct ext4fs *w)
{
	size_t i;
	int ret = ext4inode_stamp_reserved(w);

	w->ino[0] = EXT2_ROOT_INO;
	for (i = 0; i < w->t->n && !ret; i++) {
		ret = add_node(w, i);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	for (i = 1; i < w->t->n && !ret; i++)
		if (w->t->v[i].e->type == MF_HARDLINK)
			ret = ext4inode_add_hardlink(w, i);
	return ret;
}

int ext4w_write(const struct imgtree *t, const struct image_params *p, struct sink *k)
{
	struct ext4fs w;
	double t0 = log_now();
	int ret;

	ext4fs_init(&w, t, p, k);
	w.buf = xmalloc(COPY_BLOCKS * BLOCK_SIZE);
	ret = ext4fs_check_ids(p->im);
	if (!ret)
		ret = ext4fs_estimate(&w);
	log_debug("image: the tree needs %" PRIu64 " blocks and %" PRIu64 " inodes (%.2fs)",
		  w.need_blocks, w.need_inodes, log_now() - t0);
	if (!ret)
		ret = ext4fs_create(&w);
	log_debug("image: empty filesystem of %" PRIu64 " blocks (%.2fs)", w.blocks,
		  log_now() - t0);
	if (!ret) {
		log_progress_begin(&w.progress, "image", w.need_blocks * BLOCK_SIZE, 1);
		ret = populate(&w);
		log_progress_end(&w.progress);
	}
	log_debug("image: populated (%.2fs)", log_now() - t0);
	if (!ret)
		ret = ext4dir_finish(&w);
	if (!ret)
		ret = ext4fs_finish(&w);
	log_debug("image: closed (%.2fs)", log_now() - t0);
	ext4fs_release(&w);
	return ret;
}

int ext4w_size_back(int fd, uint64_t offset, const char *file, uint64_t *bytes)
{
	uint8_t sb[1024];
	uint64_t blocks;
	uint32_t log;

	if (pread(fd, sb, sizeof(sb), (off_t)(offset + 1024)) != (ssize_t)sizeof(sb))
		return log_errno(-MKI_E_IMAGE, "cannot read back the filesystem in '%s'", file);
	blocks = (uint64_t)sb[4] | (uint64_t)sb[5] << 8 | (uint64_t)sb[6] << 16 |
		 (uint64_t)sb[7] << 24 | (uint64_t)sb[0x150] << 32 | (uint64_t)sb[0x151] << 40 |
		 (uint64_t)sb[0x152] << 48 | (uint64_t)sb[0x153] << 56;
	log = (uint32_t)sb[24] | (uint32_t)sb[25] << 8 | (uint32_t)sb[26] << 16 |
	      (uint32_t)sb[27] << 24;
	*bytes = log < 8 ? blocks << (10 + log) : 0;
	return 0;
}
