/*
 * The image writer: the image's view of the stage (imgtree.c), then ext4 or tar. For ext4: an
 * empty filesystem from mke2fs with fixed options (clean environment, no host config, lazy init
 * on a fresh sparse file), populated in-process with libext2fs in sorted path order, finished
 * and published by rename. libext2fs is used by the ext4 modules (ext4w.h) only.
 */
#include "image.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ext4w.h"
#include "imgtree.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/str.h"
#include "tarout.h"

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
	ret = ext4w_check_ids(p->im);
	if (!ret)
		ret = ext4w_estimate(&w);
	log_debug("image: the tree needs %" PRIu64 " blocks and %" PRIu64 " inodes (%.2fs)",
		  w.need_blocks, w.need_inodes, log_now() - t0);
	if (!ret)
		ret = ext4w_create_fs(&w);
	log_debug("image: empty filesystem of %" PRIu64 " blocks (%.2fs)", w.blocks, log_now() - t0);
	if (!ret && (w.img_fd = open(w.tmp, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		ret = -errno;
		log_error("cannot open '%s': %s", w.tmp, strerror(errno));
	}
	if (!ret) {
		log_progress_begin(&w.progress, "image", w.need_blocks * BLOCK_SIZE, 1);
		ret = ext4w_populate(&w);
		log_progress_end(&w.progress);
	}
	log_debug("image: populated (%.2fs)", log_now() - t0);
	if (!ret)
		ret = ext4w_finish(&w);
	log_debug("image: closed (%.2fs)", log_now() - t0);
	if (!ret)
		ret = commit(w.img_fd, w.tmp, p->output);
	log_debug("image: committed (%.2fs)", log_now() - t0);
	ext4w_close_fs(&w);
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
