/* A layer's file: write a configured tree into it, and check it (layerfile_restore.c restores it). */
#include "layerfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "layerfile_fmt.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "sandbox/idshift.h"
#include "tree/treeread.h"

#define MAGIC "MKILAYR\n"
#define BYTE_ORDER_MARK 0x01020304u
#define NO_TARGET UINT32_MAX /* a manifest entry's target is NULL */

/* ---- encoding: native-order integers, strings as u32 length + bytes ---- */

static void put32(struct buf *b, uint32_t v)
{
	buf_add(b, &v, sizeof(v));
}

static void put64(struct buf *b, uint64_t v)
{
	buf_add(b, &v, sizeof(v));
}

static void putmem(struct buf *b, const void *p, size_t n)
{
	put32(b, (uint32_t)n);
	buf_add(b, p, n);
}

static void putstr(struct buf *b, const char *s)
{
	putmem(b, s, strlen(s));
}

static void get_bytes(struct rd *r, void *out, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p, n);
	r->p += n;
}

uint32_t layerfile_rd_u32(struct rd *r)
{
	uint32_t v;

	get_bytes(r, &v, sizeof(v));
	return v;
}

uint64_t layerfile_rd_u64(struct rd *r)
{
	uint64_t v;

	get_bytes(r, &v, sizeof(v));
	return v;
}

/* Bytes of a string record, borrowed; `*n` its length. */
const uint8_t *layerfile_rd_mem(struct rd *r, size_t *n)
{
	const uint8_t *p;

	*n = layerfile_rd_u32(r);
	if (r->bad || (size_t)(r->end - r->p) < *n) {
		r->bad = 1;
		*n = 0;
		return (const uint8_t *)"";
	}
	p = r->p;
	r->p += *n;
	return p;
}

/* A string record as a new C string; one holding a NUL byte is corrupt. */
char *layerfile_rd_str(struct rd *r)
{
	size_t n;
	const uint8_t *p = layerfile_rd_mem(r, &n);

	if (memchr(p, '\0', n))
		r->bad = 1;
	return xstrndup((const char *)p, n);
}

static void put_xattrs(struct buf *b, const struct manifest_xattr *v, size_t n)
{
	size_t i;

	put32(b, (uint32_t)n);
	for (i = 0; i < n; i++) {
		putstr(b, v[i].name);
		putmem(b, v[i].value, v[i].len);
	}
}

void layerfile_rd_xattrs(struct rd *r, struct manifest_entry *e)
{
	uint32_t i, n = layerfile_rd_u32(r);
	size_t len;

	for (i = 0; i < n && !r->bad; i++) {
		char *name = layerfile_rd_str(r);
		const uint8_t *val = layerfile_rd_mem(r, &len);

		if (!r->bad)
			manifest_set_xattr(e, name, val, len);
		free(name);
	}
}

/* ---- the stage's manifest ---- */

static void put_manifest(struct buf *b, const struct manifest *m)
{
	size_t i, j;

	put64(b, m->n);
	for (i = 0; i < m->n; i++) {
		const struct manifest_entry *e = m->v[i];

		putstr(b, e->path);
		put32(b, (uint32_t)e->type);
		put32(b, e->mode);
		put32(b, e->uid);
		put32(b, e->gid);
		put64(b, (uint64_t)e->mtime);
		put32(b, e->major);
		put32(b, e->minor);
		put64(b, e->size);
		if (e->target)
			putstr(b, e->target);
		else
			put32(b, NO_TARGET);
		put_xattrs(b, e->xattrs, e->n_xattrs);
		put64(b, e->owners.n);
		for (j = 0; j < e->owners.n; j++)
			putstr(b, e->owners.v[j]);
	}
}

static void get_target(struct rd *r, struct manifest_entry *e)
{
	struct rd peek = *r;

	if (layerfile_rd_u32(&peek) == NO_TARGET) {
		*r = peek;
		return;
	}
	e->target = layerfile_rd_str(r);
}

void layerfile_rd_manifest(struct rd *r, struct manifest *m)
{
	uint64_t i, j, n = layerfile_rd_u64(r), owners;

	for (i = 0; i < n && !r->bad; i++) {
		char *path = layerfile_rd_str(r);
		struct manifest_entry *e = manifest_add(m, path);

		free(path);
		e->type = (char)layerfile_rd_u32(r);
		e->mode = layerfile_rd_u32(r);
		e->uid = layerfile_rd_u32(r);
		e->gid = layerfile_rd_u32(r);
		e->mtime = (int64_t)layerfile_rd_u64(r);
		e->major = layerfile_rd_u32(r);
		e->minor = layerfile_rd_u32(r);
		e->size = layerfile_rd_u64(r);
		get_target(r, e);
		layerfile_rd_xattrs(r, e);
		owners = layerfile_rd_u64(r);
		for (j = 0; j < owners && !r->bad; j++)
			strv_push_take(&e->owners, layerfile_rd_str(r));
	}
}

/* ---- writing: walk the tree, then store each entry's data and record ---- */

struct tent {
	char *path;
	struct stat sb;
	uint32_t uid, gid; /* as a command in the sandbox sees them */
	char *target;      /* symlink text */
	struct manifest_entry x; /* only its xattrs are used */
	size_t link;       /* 1 + index of the hard link holding the data; 0: none */
};

struct wr {
	int fd, rootfd;
	struct tent *v;
	size_t n, alloc;
	struct hash h;
	uint64_t off;  /* bytes of data written so far */
	uint8_t *chunk;
	uint64_t max_entries;
};

static int add_entry(void *arg, int dirfd, const char *name, const char *rel,
		     const struct stat *sb)
{
	struct wr *w = arg;
	long uid = idshift_inside_uid(sb->st_uid), gid = idshift_inside_gid(sb->st_gid);
	struct tent *t;
	char target[PATH_MAX];
	ssize_t n;

	if (uid < 0 || gid < 0 || S_ISCHR(sb->st_mode) || S_ISBLK(sb->st_mode) ||
	    S_ISSOCK(sb->st_mode)) {
		log_info("layer not stored: '/%s' is a device node, a socket or has an owner "
			 "outside the build's ids", rel);
		return -EOPNOTSUPP;
	}
	if (w->n >= w->max_entries) {
		log_info("layer not stored: the configured tree holds more than %llu entries "
			 "(limit 'staging-entries')", (unsigned long long)w->max_entries);
		return -EOPNOTSUPP;
	}
	ALLOC_GROW(w->v, w->n + 1, w->alloc);
	t = &w->v[w->n++];
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(rel);
	t->sb = *sb;
	t->uid = (uint32_t)uid;
	t->gid = (uint32_t)gid;
	if (S_ISLNK(sb->st_mode)) {
		n = readlinkat(dirfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		t->target = xstrndup(target, (size_t)n);
	}
	return treeread_xattrs(dirfd, name, &t->x); /* "": the root itself */
}

static int cmp_inode(const void *a, const void *b)
{
	const struct tent *x = *(const struct tent *const *)a, *y = *(const struct tent *const *)b;

	if (x->sb.st_ino != y->sb.st_ino)
		return x->sb.st_ino < y->sb.st_ino ? -1 : 1;
	return x < y ? -1 : x > y; /* walk order: the first name holds the data */
}

/* Names of one inode: every one but the first in walk order links to the first. */
static void group_links(struct wr *w)
{
	struct tent **v = xcalloc(w->n + 1, sizeof(*v));
	size_t i, n = 0, first = 0;

	for (i = 0; i < w->n; i++)
		if (S_ISREG(w->v[i].sb.st_mode) && w->v[i].sb.st_nlink > 1)
			v[n++] = &w->v[i];
	if (n)
		qsort(v, n, sizeof(*v), cmp_inode);
	for (i = 1; i < n; i++) {
		if (v[i]->sb.st_ino != v[first]->sb.st_ino)
			first = i;
		else
			v[i]->link = (size_t)(v[first] - w->v) + 1;
	}
	free(v);
}

static int copy_out(struct wr *w, int fd, off_t from, off_t len)
{
	while (len > 0) {
		size_t want = len < LAYER_COPY_CHUNK ? (size_t)len : LAYER_COPY_CHUNK;
		ssize_t n = pread(fd, w->chunk, want, from);
		int ret;

		if (n <= 0)
			return n < 0 ? -errno : -EIO; /* shorter than its size said */
		hash_update(&w->h, w->chunk, (size_t)n);
		ret = fsutil_write_all(w->fd, w->chunk, (size_t)n);
		if (ret)
			return ret;
		w->off += (uint64_t)n;
		from += n;
		len -= n;
	}
	return 0;
}

/* A regular file's data extents (holes stay holes), recorded as offset, length, data offset. */
static int put_data(struct wr *w, const struct tent *t, struct buf *meta)
{
	int fd = beneath_open_regular(w->rootfd, t->path, 1, NULL), ret = 0;
	off_t size = t->sb.st_size, pos = 0, data, hole;
	struct buf ext = { 0 };
	uint32_t n = 0;

	if (fd < 0)
		return fd;
	while (!ret && pos < size) {
		data = lseek(fd, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (hole < 0) {
			ret = -errno;
			break;
		}
		if (hole > size)
			hole = size;
		put64(&ext, (uint64_t)data);
		put64(&ext, (uint64_t)(hole - data));
		put64(&ext, w->off);
		n++;
		ret = copy_out(w, fd, data, hole - data);
		pos = hole;
	}
	close(fd);
	put32(meta, n);
	if (ext.len)
		buf_add(meta, ext.p, ext.len);
	buf_release(&ext);
	return ret;
}

static int put_entry(struct wr *w, const struct tent *t, struct buf *meta)
{
	int ret = 0;

	putstr(meta, t->path);
	put32(meta, (uint32_t)t->sb.st_mode);
	put32(meta, t->uid);
	put32(meta, t->gid);
	put64(meta, (uint64_t)t->sb.st_mtim.tv_sec);
	put32(meta, (uint32_t)t->sb.st_mtim.tv_nsec);
	if (S_ISREG(t->sb.st_mode)) {
		put64(meta, (uint64_t)t->sb.st_size);
		put64(meta, t->link);
		if (t->link)
			put32(meta, 0);
		else
			ret = put_data(w, t, meta);
	} else if (S_ISLNK(t->sb.st_mode)) {
		putstr(meta, t->target);
	}
	put_xattrs(meta, t->x.xattrs, t->x.n_xattrs);
	return ret;
}

/* The copyright texts as unpacked (dep5.h): their count, then each one's error and bytes. */
static void put_texts(struct buf *meta, const struct dep5_texts *t)
{
	size_t i, n = t ? t->n : 0;

	put64(meta, n);
	for (i = 0; i < n; i++) {
		put32(meta, (uint32_t)-t->err[i]);
		putmem(meta, t->v[i].p ? t->v[i].p : "", t->v[i].len);
	}
}

void layerfile_rd_texts(struct rd *r, struct dep5_texts *t)
{
	uint64_t n = layerfile_rd_u64(r);
	size_t i, len;
	const uint8_t *p;

	/* each text takes 8 bytes at least: a count beyond that is a corrupt file, not an alloc */
	if (r->bad || n > (uint64_t)(r->end - r->p) / 8) {
		r->bad = 1;
		return;
	}
	dep5_texts_init(t, (size_t)n);
	for (i = 0; i < n && !r->bad; i++) {
		t->err[i] = -(int)layerfile_rd_u32(r);
		p = layerfile_rd_mem(r, &len);
		if (!r->bad)
			buf_add(&t->v[i], p, len);
	}
}

static void wr_release(struct wr *w)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		free(w->v[i].path);
		free(w->v[i].target);
		manifest_xattrs_free(w->v[i].x.xattrs, w->v[i].x.n_xattrs);
	}
	free(w->v);
	free(w->chunk);
}

static int write_tail(struct wr *w, struct buf *meta)
{
	struct layer_trailer tr = { .version = LAYERFILE_VERSION, .order = BYTE_ORDER_MARK };
	int ret;

	memcpy(tr.magic, MAGIC, sizeof(tr.magic));
	tr.data_len = w->off;
	tr.meta_len = meta->len;
	hash_update(&w->h, meta->p, meta->len);
	hash_final(&w->h, tr.digest);
	ret = fsutil_write_all(w->fd, meta->p, meta->len);
	return ret ? ret : fsutil_write_all(w->fd, &tr, sizeof(tr));
}

int layerfile_write(int fd, int rootfd, const struct staging *s, const char *lint,
		    const struct dep5_texts *texts, uint64_t max_entries)
{
	struct wr w = { .fd = fd, .rootfd = rootfd, .max_entries = max_entries };
	struct buf meta = { 0 };
	struct stat sb;
	size_t i;
	int ret = hash_init(&w.h, HASH_SHA256);

	if (ret)
		return ret;
	w.chunk = xmalloc(LAYER_COPY_CHUNK);
	ret = fstatat(rootfd, "", &sb, AT_EMPTY_PATH) ? -errno : add_entry(&w, rootfd, "", "", &sb);
	if (!ret)
		ret = treeread_walk(rootfd, "", add_entry, &w, NULL);
	group_links(&w);
	put64(&meta, w.n);
	for (i = 0; !ret && i < w.n; i++)
		ret = put_entry(&w, &w.v[i], &meta);
	if (!ret) {
		put_manifest(&meta, &s->manifest);
		put64(&meta, s->filtered.files);
		put64(&meta, s->filtered.dirs);
		put64(&meta, s->filtered.bytes);
		putstr(&meta, lint ? lint : "");
		put_texts(&meta, texts);
		ret = write_tail(&w, &meta);
	} else {
		hash_release(&w.h);
	}
	buf_release(&meta);
	wr_release(&w);
	return ret;
}

/* ---- checking ---- */

int layerfile_read_trailer(int fd, const char *name, struct layer_trailer *tr, uint64_t *size)
{
	struct stat sb;

	if (fstat(fd, &sb))
		return -errno;
	*size = (uint64_t)sb.st_size;
	if (*size < sizeof(*tr) || pread(fd, tr, sizeof(*tr), sb.st_size - (off_t)sizeof(*tr)) !=
				      (ssize_t)sizeof(*tr) || memcmp(tr->magic, MAGIC, 8) ||
	    tr->order != BYTE_ORDER_MARK) {
		log_warn("layer '%s' is truncated or not a layer: ignored", name);
		return -EBADMSG;
	}
	if (tr->version != LAYERFILE_VERSION) {
		log_warn("layer '%s' has format %u, not %u: ignored", name, tr->version,
			 LAYERFILE_VERSION);
		return -EPROTO;
	}
	if (tr->data_len > *size || tr->meta_len > *size - tr->data_len ||
	    tr->data_len + tr->meta_len + sizeof(*tr) != *size) {
		log_warn("layer '%s' is truncated (%llu bytes, its trailer says otherwise): "
			 "ignored", name, (unsigned long long)*size);
		return -EBADMSG;
	}
	return 0;
}

int layerfile_check(int fd, const char *name)
{
	struct layer_trailer tr;
	struct hash h;
	uint64_t size, left;
	uint8_t digest[32], *chunk;
	off_t at = 0;
	int ret = layerfile_read_trailer(fd, name, &tr, &size);

	if (ret || (ret = hash_init(&h, HASH_SHA256)))
		return ret;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	chunk = xmalloc(LAYER_COPY_CHUNK);
	for (left = tr.data_len + tr.meta_len; !ret && left;) {
		ssize_t n = pread(fd, chunk, left < LAYER_COPY_CHUNK ? (size_t)left : LAYER_COPY_CHUNK, at);

		if (n <= 0)
			ret = n < 0 ? -errno : -EBADMSG;
		else if (err_interrupted())
			ret = -MKI_E_INTERRUPTED;
		else {
			hash_update(&h, chunk, (size_t)n);
			at += n;
			left -= (uint64_t)n;
		}
	}
	free(chunk);
	if (ret) {
		hash_release(&h);
		return ret;
	}
	hash_final(&h, digest);
	if (memcmp(digest, tr.digest, sizeof(digest))) {
		log_warn("layer '%s' is corrupt (its SHA-256 does not match): ignored", name);
		return -EBADMSG;
	}
	return 0;
}
