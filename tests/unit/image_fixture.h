/*
 * A small staging tree and its manifest for the image writers' suites: directories, a file
 * with a hard link, a sparse file, a symlink, device nodes, a FIFO, a socket and an xattr, in
 * a fresh directory under /var/tmp. Each suite includes this once.
 */
#ifndef MKI_UNIT_IMAGE_FIXTURE_H
#define MKI_UNIT_IMAGE_FIXTURE_H

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image.h"
#include "image/imgtree.h"
#include "lib/log.h"
#include "lib/manifest.h"
#include "lib/str.h"

#define FX_SDE 1000
#define FX_BS 4096

struct fixture {
	char top[64];
	char *out;                /* top/out: a whole-file output */
	struct staging st;
	struct recipe_image im;
	struct image_params p;
	struct imgtree t;         /* after fx_tree */
};

static inline struct manifest_entry *fx_add(struct fixture *f, const char *path, char type,
					    uint32_t mode, uint64_t size)
{
	struct manifest_entry *e = manifest_add(&f->st.manifest, path);

	e->type = type;
	e->mode = mode;
	e->size = size;
	e->mtime = 50;
	return e;
}

/* `len` bytes of `c` at `off` in the staging file `rel` (created, holes elsewhere). */
static inline void fx_put(struct fixture *f, const char *rel, off_t off, size_t len, char c)
{
	char *path = xasprintf("%s/%s", f->st.root, rel), *data = xmalloc(len);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	ck_assert_int_ge(fd, 0);
	memset(data, c, len);
	ck_assert_int_eq(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
	free(data);
	free(path);
}

static inline void fx_mkdir(struct fixture *f, const char *rel)
{
	char *path = xasprintf("%s/%s", f->st.root, rel);

	ck_assert_int_eq(mkdir(path, 0755), 0);
	free(path);
}

/* The tree and manifest (sorted), params for `format` at the fixed epoch; nothing written. */
static inline void fx_setup(struct fixture *f, const char *name, char *format)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->top, sizeof(f->top), "/var/tmp/mki-unit-%s-XXXXXX", name);
	ck_assert_ptr_nonnull(mkdtemp(f->top));
	f->out = xasprintf("%s/out", f->top);
	f->im.format = format;
	f->im.margin = 20;
	f->im.reserved = 5;
	f->p.im = &f->im;
	f->p.output = f->out;
	f->p.source_date_epoch = FX_SDE;
	memset(f->p.seed, '7', 64);
	log_set_level(LOG_ERROR); /* no progress lines */
	manifest_init(&f->st.manifest);
	f->st.root = xasprintf("%s/root", f->top);
	ck_assert_int_eq(mkdir(f->st.root, 0755), 0);
	fx_mkdir(f, "etc");
	fx_mkdir(f, "var");
	fx_put(f, "etc/data", 0, 10000, 'd');
	fx_put(f, "var/sparse", 0, FX_BS, 'a');
	fx_put(f, "var/sparse", 4 * FX_BS, 100, 'b');
	fx_add(f, "", MF_DIR, 0755, 0);
	fx_add(f, "etc", MF_DIR, 0755, 0)->uid = 7;
	fx_add(f, "etc/data", MF_REG, 0640, 10000)->uid = 1000;
	fx_add(f, "etc/data2", MF_HARDLINK, 0640, 0)->target = xstrdup("etc/data");
	fx_add(f, "etc/link", MF_SYMLINK, 0777, 0)->target = xstrdup("data");
	fx_add(f, "etc/fifo", MF_FIFO, 0600, 0);
	fx_add(f, "etc/sock", MF_SOCK, 0600, 0);
	fx_add(f, "var", MF_DIR, 0755, 0);
	fx_add(f, "var/null", MF_CHR, 0666, 0)->minor = 3;
	fx_add(f, "var/sparse", MF_REG, 0644, 4 * FX_BS + 100)->mtime = FX_SDE + 500;
	fx_add(f, "var/big", MF_BLK, 0660, 0)->major = 259;
	manifest_get(&f->st.manifest, "var/null")->major = 1;
	manifest_get(&f->st.manifest, "var/big")->minor = 70000;
	manifest_set_xattr(manifest_get(&f->st.manifest, "etc/data"), "user.k", "v1", 2);
	manifest_sort(&f->st.manifest);
}

/* The image's view of the fixture (f->t). */
static inline void fx_tree(struct fixture *f)
{
	ck_assert_int_eq(imgtree_build(&f->t, &f->st, &f->p), 0);
}

static inline void fx_teardown(struct fixture *f)
{
	char *cmd;

	if (!f->top[0])
		return;
	cmd = xasprintf("rm -rf '%s'", f->top);
	if (f->t.v)
		imgtree_release(&f->t);
	staging_release(&f->st);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(f->out);
}

/* A file of `size` bytes of `c`. Returns an fd, read-write. */
static inline int fx_pattern_file(const char *path, uint64_t size, uint8_t c)
{
	uint8_t buf[65536];
	uint64_t done;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	memset(buf, c, sizeof(buf));
	for (done = 0; done < size; done += sizeof(buf))
		ck_assert_int_eq(pwrite(fd, buf, sizeof(buf), (off_t)done), (ssize_t)sizeof(buf));
	return fd;
}

/* Whether bytes [from, to) of `fd` are all `c`. */
static inline int fx_all(int fd, uint64_t from, uint64_t to, uint8_t c)
{
	uint8_t buf[65536];
	ssize_t got;
	size_t i;

	while (from < to) {
		size_t want = to - from < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);

		got = pread(fd, buf, want, (off_t)from);
		if (got <= 0)
			return 0;
		for (i = 0; i < (size_t)got; i++)
			if (buf[i] != c)
				return 0;
		from += (uint64_t)got;
	}
	return 1;
}

/* Copy bytes [from, from + len) of `fd` into a new file `path`. */
static inline void fx_extract(int fd, uint64_t from, uint64_t len, const char *path)
{
	uint8_t *buf = xmalloc(len);
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(out, 0);
	ck_assert_int_eq(pread(fd, buf, len, (off_t)from), (ssize_t)len);
	ck_assert_int_eq(write(out, buf, len), (ssize_t)len);
	close(out);
	free(buf);
}

/* Whether files `a` and `b` have the same bytes. */
static inline int fx_same(const char *a, const char *b)
{
	char *cmd = xasprintf("cmp -s '%s' '%s'", a, b);
	int same = system(cmd) == 0;

	free(cmd);
	return same;
}

/* The exit status of `cmd` (taken) run by the shell. */
static inline int fx_sh(char *cmd)
{
	int st = system(cmd);

	free(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
