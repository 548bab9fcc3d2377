/* The ext4 writer: regular files - extents allocated per data range, bytes copied in. */
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ext4file.h"
#include "ext4inode.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/str.h"

/* --- regular files ------------------------------------------------------------------------- */

/* Allocate blocks for every data range of the source, so holes stay holes. */
static int allocate_data(struct ext4fs *w, ext2_ino_t ino, int fd, uint64_t size,
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
				       ext4fs_div_up((uint64_t)hole, BLOCK_SIZE) -
				       (uint64_t)data / BLOCK_SIZE);
		if (err)
			return ext4fs_lib_fail("cannot allocate blocks for", path, err);
		pos = hole;
	}
	return 0;
}

/*
 * Through user space in whole-block runs, when the kernel cannot copy for us; `dst` from the
 * sink's start. A short write (the disk filled up mid-buffer) is continued, so the next attempt
 * reports the real cause (ENOSPC) instead of a stale errno.
 */
static int copy_by_hand(struct ext4fs *w, int fd, uint64_t src, uint64_t dst, uint64_t len,
			const char *path)
{
	ssize_t got = 0;
	size_t n;
	int ret;

	while (len) {
		n = len < COPY_BLOCKS * BLOCK_SIZE ? (size_t)len : COPY_BLOCKS * BLOCK_SIZE;
		got = pread(fd, w->buf, n, (off_t)src);
		if (got <= 0)
			break; /* the file shrank: the rest stays zero */
		ret = sink_pwrite(w->k, w->buf, (size_t)got, dst);
		if (ret) {
			log_error("cannot write the data of '%s' into '%s': %s", path, w->k->name,
				  strerror(-ret));
			return ret;
		}
		log_progress_add(&w->progress, (uint64_t)got);
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
 * extents on reflink filesystems); the sink reads as zeros (sink_begin), so the tail of the
 * last block is already zero.
 */
static int copy_extent(struct ext4fs *w, int fd, uint64_t size, const struct ext2fs_extent *x,
		       const char *path)
{
	uint64_t start = x->e_lblk * BLOCK_SIZE, len = (uint64_t)x->e_len * BLOCK_SIZE;
	loff_t src = (loff_t)start, dst = (loff_t)(w->k->offset + x->e_pblk * BLOCK_SIZE);
	ssize_t got;

	if (start >= size)
		return 0;
	if (len > size - start)
		len = size - start;
	while (len && w->kernel_copy) {
		got = copy_file_range(fd, &src, w->k->fd, &dst, len, 0);
		if (got < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				errno == EOPNOTSUPP)) {
			w->kernel_copy = 0;
			break;
		}
		if (got < 0) {
			int e = errno;

			log_error("cannot copy '%s' into '%s': %s", path, w->k->name, strerror(e));
			return -e;
		}
		if (got == 0)
			return 0; /* the file shrank: the rest stays zero */
		log_progress_add(&w->progress, (uint64_t)got);
		len -= (uint64_t)got;
	}
	return copy_by_hand(w, fd, (uint64_t)src, (uint64_t)dst - w->k->offset, len, path);
}

/*
 * Start writing the copied data out while we go on populating, so the fsync before the rename
 * finds little left to do (it waits for the disk, populating does not).
 */
static void start_writeback(struct ext4fs *w, uint64_t bytes)
{
	w->unflushed += bytes;
	if (w->unflushed < WRITEBACK_BYTES)
		return;
	sink_writeback(w->k);
	w->unflushed = 0;
}

static int copy_data(struct ext4fs *w, ext2_ino_t ino, int fd, uint64_t size, const char *path)
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
		return ext4fs_lib_fail("cannot map the blocks of", path, err);
	if (!ret)
		start_writeback(w, size);
	return ret;
}

int ext4file_add(struct ext4fs *w, size_t i)
{
	union ext4inode_buf u;
	const char *path = w->t->v[i].e->path;
	ext2_extent_handle_t h = NULL;
	struct stat st;
	errcode_t err;
	int fd = imgtree_open(w->t, i), ret;

	if (fd < 0)
		return fd;
	ret = ext4inode_new(w, i, 1);
	if (!ret && fstat(fd, &st)) {
		ret = -errno;
		log_error("cannot stat '%s' in the staging tree: %s", path, strerror(-ret));
	}
	if (ret)
		goto out;
	memset(&u, 0, sizeof(u));
	ext4inode_apply_meta(&u.in, &w->t->v[i], w->t->sde);
	err = ext2fs_extent_open2(w->fs, w->ino[i], (struct ext2_inode *)&u.in, &h);
	if (!err)
		err = ext2fs_inode_size_set(w->fs, (struct ext2_inode *)&u.in, (uint64_t)st.st_size);
	if (h)
		ext2fs_extent_free(h);
	ret = err ? ext4fs_lib_fail("cannot set up", path, err)
		  : ext4inode_write(w, w->ino[i], &u.in, path);
	if (!ret)
		ret = allocate_data(w, w->ino[i], fd, (uint64_t)st.st_size, path);
	if (!ret && st.st_size)
		ret = copy_data(w, w->ino[i], fd, (uint64_t)st.st_size, path);
	if (!ret)
		ret = ext4inode_link(w, w->ino[imgtree_parent(w->t, i)], imgtree_name(w->t, i),
				w->ino[i], EXT2_FT_REG_FILE, path);
out:
	close(fd);
	return ret;
}
