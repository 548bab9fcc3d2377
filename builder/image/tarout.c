#include "tarout.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/str.h"
#include "lib/x.h"

#define CHUNK (1u << 20)

struct tarw {
	const struct imgtree *t;
	struct archive *a;
	uint8_t *buf;
	const char *output;
	struct sink *k;
	uint64_t pos;  /* bytes written to the sink */
	int overflow;  /* the archive outgrew the sink's region */
};

static int ar_fail(struct tarw *w, const char *what, const char *path)
{
	log_error("tar '%s': %s '%s': %s", w->output, what, path, archive_error_string(w->a));
	return w->overflow ? -MKI_E_NOSPACE : -MKI_E_IMAGE;
}

/* libarchive's output: appended to the sink within its region; errors as archive_write_open_fd's */
static la_ssize_t sink_out(struct archive *a, void *data, const void *buf, size_t n)
{
	struct tarw *w = data;
	int ret = sink_pwrite(w->k, buf, n, w->pos);

	if (ret == -EFBIG) {
		char len[24];

		/* archive_set_error() formats no 64-bit numbers */
		snprintf(len, sizeof(len), "%" PRIu64, w->k->length);
		w->overflow = 1;
		archive_set_error(a, EFBIG, "the archive does not fit its region of %s bytes", len);
		return -1;
	}
	if (ret) {
		archive_set_error(a, -ret, "Write error");
		return -1;
	}
	w->pos += n;
	return (la_ssize_t)n;
}

/* "./" for the root, "./PATH" otherwise: the form rootfs tarballs use. */
static char *tar_name(const struct imgtree *t, size_t i)
{
	return t->v[i].e->path[0] ? xasprintf("./%s", t->v[i].e->path) : xstrdup("./");
}

static mode_t type_mode(char type)
{
	switch (type) {
	case MF_DIR: return AE_IFDIR;
	case MF_SYMLINK: return AE_IFLNK;
	case MF_CHR: return AE_IFCHR;
	case MF_BLK: return AE_IFBLK;
	case MF_FIFO: return AE_IFIFO;
	default: return AE_IFREG;
	}
}

/* Holes of the source become a pax sparse map; a file without holes gets none. */
static void add_sparse_map(struct archive_entry *ae, int fd, off_t size)
{
	off_t pos = 0, data, hole;

	hole = lseek(fd, 0, SEEK_HOLE);
	if (hole < 0 || hole >= size)
		return;
	while (pos < size && (data = lseek(fd, pos, SEEK_DATA)) >= 0) {
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || hole > size)
			hole = size;
		archive_entry_sparse_add_entry(ae, data, hole - data);
		pos = hole;
	}
	if (!archive_entry_sparse_count(ae))
		archive_entry_sparse_add_entry(ae, size, 0); /* all hole: one empty run at EOF */
}

static int copy_data(struct tarw *w, int fd, off_t size, const char *path)
{
	off_t done = 0;
	ssize_t got;

	while (done < size) {
		size_t want = size - done < (off_t)CHUNK ? (size_t)(size - done) : CHUNK;

		got = pread(fd, w->buf, want, done);
		if (got < 0) {
			int e = errno;

			log_error("cannot read '%s': %s", path, strerror(e));
			return -e;
		}
		if (got == 0) { /* the file shrank: keep the announced size */
			memset(w->buf, 0, want);
			got = (ssize_t)want;
		}
		if (archive_write_data(w->a, w->buf, (size_t)got) < 0)
			return ar_fail(w, "cannot write the data of", path);
		done += got;
	}
	return 0;
}

/* `carrier`: this name carries the inode (not a hard link to an earlier name). */
static void set_meta(struct archive_entry *ae, const struct imgtree_node *nd, int carrier)
{
	const struct manifest_entry *e = nd->e;
	size_t k;

	archive_entry_set_mode(ae, type_mode(e->type) | (e->mode & 07777));
	archive_entry_set_uid(ae, e->uid);
	archive_entry_set_gid(ae, e->gid);
	archive_entry_set_mtime(ae, nd->mtime, 0);
	if (e->type == MF_SYMLINK && carrier)
		archive_entry_set_symlink(ae, e->target);
	if (e->type == MF_CHR || e->type == MF_BLK) {
		archive_entry_set_rdevmajor(ae, e->major);
		archive_entry_set_rdevminor(ae, e->minor);
	}
	for (k = 0; k < e->n_xattrs; k++)
		archive_entry_xattr_add_entry(ae, e->xattrs[k].name, e->xattrs[k].value,
					      e->xattrs[k].len);
}

/* Node `i`; a hard-link group's sorted-first name carries the inode, the others link to it. */
static int write_node(struct tarw *w, size_t i)
{
	const struct imgtree_node *nd = &w->t->v[i];
	size_t owner = nd->e->type == MF_HARDLINK ? nd->link : i;
	struct archive_entry *ae = archive_entry_new();
	char *name = tar_name(w->t, i), *first = NULL;
	struct stat st;
	int fd = -1, ret = 0;

	archive_entry_set_pathname(ae, name);
	set_meta(ae, &w->t->v[owner], nd->first == i);
	if (nd->first != i) {
		first = tar_name(w->t, nd->first);
		archive_entry_set_hardlink(ae, first);
		archive_entry_set_size(ae, 0);
	} else if (w->t->v[owner].e->type == MF_REG) {
		fd = imgtree_open(w->t, owner);
		if (fd < 0 || fstat(fd, &st)) {
			ret = fd < 0 ? fd : -errno;
			goto out;
		}
		archive_entry_set_size(ae, st.st_size);
		add_sparse_map(ae, fd, st.st_size);
	}
	if (archive_write_header(w->a, ae) < ARCHIVE_WARN) {
		ret = ar_fail(w, "cannot add", name);
		goto out;
	}
	if (fd >= 0)
		ret = copy_data(w, fd, st.st_size, name);
out:
	if (fd >= 0)
		close(fd);
	archive_entry_free(ae);
	free(name);
	free(first);
	return ret;
}

/*
 * The last block is not padded to the 10240-byte record, as archive_write_open_fd() does for a
 * regular file: the archive ends with its two zero blocks, in a whole file or a region.
 */
static int write_all(struct tarw *w, const char *tmp)
{
	size_t i;
	int ret = 0;

	if (archive_write_set_format_pax(w->a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(w->a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(w->a, 1) != ARCHIVE_OK ||
	    archive_write_open2(w->a, w, NULL, sink_out, NULL, NULL) != ARCHIVE_OK)
		return ar_fail(w, "cannot start", tmp);
	for (i = 0; i < w->t->n && !ret; i++) {
		if (w->t->v[i].e->type == MF_SOCK) {
			log_debug("tar: skipping socket '%s' (tar cannot hold sockets)",
				  w->t->v[i].e->path);
			continue;
		}
		ret = write_node(w, i);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	if (!ret && archive_write_close(w->a) != ARCHIVE_OK)
		ret = ar_fail(w, "cannot finish", tmp);
	return ret;
}

int tarout_estimate(const struct imgtree *t, const struct image_params *p, uint64_t *bytes)
{
	struct stat st;
	uint64_t n = 1024; /* the two zero blocks at the end */
	size_t i, k;
	int fd;

	for (i = 0; i < t->n; i++) {
		const struct manifest_entry *e = t->v[i].e;

		n += 3 * 512 + ((strlen(e->path) + 511) & ~511ull); /* pax header, its data, ustar */
		for (k = 0; k < e->n_xattrs; k++)
			n += ((strlen(e->xattrs[k].name) + e->xattrs[k].len * 4 / 3 + 64 + 511) & ~511ull);
		if (e->type != MF_REG || t->v[i].first != i)
			continue;
		fd = imgtree_open(t, i);
		if (fd < 0)
			return fd;
		if (!fstat(fd, &st))
			n += ((uint64_t)st.st_size + 511) & ~511ull;
		close(fd);
	}
	*bytes = n;
	return 0;
}

int tarout_write(const struct imgtree *t, const struct image_params *p, struct sink *k)
{
	struct tarw w = { .t = t, .output = k->output ? k->output : k->name, .k = k };
	int ret = sink_begin(k, 0);

	if (ret)
		return ret;
	w.a = archive_write_new();
	w.buf = xmalloc(CHUNK);
	ret = w.a ? write_all(&w, k->name) : -ENOMEM;
	if (w.a)
		archive_write_free(w.a);
	free(w.buf);
	return ret;
}

/* One entry's data copied from `in` to the disk writer `out`. */
static int extract_data(struct archive *in, struct archive *out)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	int r;

	while ((r = archive_read_data_block(in, &buf, &size, &off)) == ARCHIVE_OK)
		if (archive_write_data_block(out, buf, size, off) != ARCHIVE_OK)
			return ARCHIVE_FATAL;
	return r == ARCHIVE_EOF ? ARCHIVE_OK : r;
}

/* Every entry of `in` under the current directory `dir` (its names relative, "./x"). */
static int extract_entries(struct archive *in, struct archive *out, const char *tar,
			   const char *dir)
{
	struct archive_entry *e;
	int r, ret = 0;

	while (!ret && (r = archive_read_next_header(in, &e)) != ARCHIVE_EOF) {
		const char *got = r == ARCHIVE_OK ? archive_entry_pathname(e) : NULL;
		char *name = got ? xstrdup(got) : NULL;
		char *path = name ? xasprintf("%s/%s", dir, name) : NULL;
		const char *hard = name ? archive_entry_hardlink(e) : NULL;
		char *link = hard ? xasprintf("%s/%s", dir, hard) : NULL;

		/* Names below `dir`, which libarchive's absolute-path check cannot say of them. */
		if (name && (name[0] == '/' || (hard && hard[0] == '/'))) {
			log_error("cannot unpack '%s': its entry '%s' is an absolute path", tar, name);
			ret = -MKI_E_IMAGE;
		}
		if (path)
			archive_entry_set_pathname(e, path);
		/* A developer's copy: no set-id program (su, mount) lands setuid beside it. */
		if (name)
			archive_entry_set_perm(e, archive_entry_perm(e) & ~(mode_t)(S_ISUID | S_ISGID));
		if (link)
			archive_entry_set_hardlink(e, link);
		if (!ret && (r != ARCHIVE_OK || archive_write_header(out, e) != ARCHIVE_OK ||
			     (archive_entry_size(e) > 0 && extract_data(in, out) != ARCHIVE_OK) ||
			     archive_write_finish_entry(out) != ARCHIVE_OK)) {
			log_error("cannot unpack '%s' into '%s' at '%s': %s", tar, dir,
				  name ? name : "?", archive_error_string(r != ARCHIVE_OK ? in : out));
			ret = -MKI_E_IMAGE;
		}
		free(name);
		free(path);
		free(link);
		if (err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	return ret;
}

int tarout_extract(const char *tar, const char *dir)
{
	char *tmp = xasprintf("%s.tmp-%d", dir, (int)getpid());
	struct archive *in = archive_read_new(), *out = archive_write_disk_new();
	int ret = 0;

	archive_read_support_format_tar(in);
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
				       ARCHIVE_EXTRACT_SECURE_NODOTDOT |
				       ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_NO_OVERWRITE);
	if (mkdir(tmp, 0755))
		ret = log_errno(-MKI_E_IMAGE, "cannot create '%s': %m", tmp);
	else if (archive_read_open_filename(in, tar, CHUNK) != ARCHIVE_OK)
		ret = log_errno(-MKI_E_IMAGE, "cannot read '%s': %s", tar, archive_error_string(in));
	if (!ret)
		ret = extract_entries(in, out, tar, tmp);
	if (archive_write_close(out) != ARCHIVE_OK && !ret)
		ret = log_errno(-MKI_E_IMAGE, "cannot finish unpacking into '%s': %s", tmp,
				archive_error_string(out));
	if (!ret && rename(tmp, dir))
		ret = log_errno(-MKI_E_IMAGE, "cannot rename '%s' to '%s': %m", tmp, dir);
	if (ret)
		fsutil_remove_tree(tmp);
	archive_read_free(in);
	archive_write_free(out);
	free(tmp);
	return ret;
}
