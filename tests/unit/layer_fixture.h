/*
 * Layer files for the suites of layerfile.c and layerfile_restore.c: a tree with what a
 * configured tree holds, written to a layer, checked and restored.
 */
#ifndef MKI_TEST_LAYER_FIXTURE_H
#define MKI_TEST_LAYER_FIXTURE_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/str.h"
#include "layer/layerfile.h"

static inline void sh(char *cmd)
{
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

/* A tree with what a configured tree holds: modes, owners, a hard link, a symlink, a FIFO, a
 * sparse file, an xattr, a read-only directory, nanosecond mtimes. */
static inline void make_tree(const char *d)
{
	char *a;

	sh(xasprintf("set -e; cd %s; mkdir -p etc usr/bin ro var/lib; printf 'x\\n' >etc/a;"
	   "head -c 10000 /dev/urandom >usr/bin/prog; chmod 4755 usr/bin/prog;"
	   "ln usr/bin/prog usr/bin/prog2; ln -s ../etc/a usr/bin/link; mkfifo var/lib/fifo;"
	   "truncate -s 1M var/lib/sparse; printf 'data' | dd of=var/lib/sparse bs=1 seek=500000 "
	   "conv=notrunc 2>/dev/null; chown 7:8 etc/a; touch ro/f; chmod 0555 ro;"
	   "touch -h -d '2020-01-02 03:04:05.123456789' usr/bin/link etc/a ro", d));
	a = xasprintf("%s/etc/a", d);
	ck_assert_int_eq(setxattr(a, "user.mki", "v", 1, 0), 0);
	ck_assert_int_eq(setxattr(d, "user.root", "r", 1, 0), 0);
	free(a);
}

/* Three packages' copyright texts: a DEP-5 file, none (-ENOENT), bytes with a NUL in them. */
static inline void fixture_texts(struct dep5_texts *t)
{
	dep5_texts_init(t, 3);
	buf_adds(&t->v[0], "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
		 "\nFiles: *\nLicense: Apache-2.0\n");
	t->err[1] = -ENOENT;
	buf_add(&t->v[2], "a\0b", 3);
}

static inline int write_layer(const char *tree, const char *file, struct staging *s)
{
	struct dep5_texts t;

	int rootfd = open(tree, O_PATH | O_DIRECTORY);
	int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644), ret;

	ck_assert_int_ge(rootfd, 0);
	ck_assert_int_ge(fd, 0);
	fixture_texts(&t);
	ret = layerfile_write(fd, rootfd, s, "lint line\n", &t, UINT64_MAX);
	dep5_texts_release(&t);
	close(fd);
	close(rootfd);
	return ret;
}

static inline int check_file(const char *file)
{
	int fd = open(file, O_RDONLY), ret;

	ck_assert_int_ge(fd, 0);
	ret = layerfile_check(fd, file);
	close(fd);
	return ret;
}

/* Restore `file` into the new directory DIR/SUB. */
static inline int restore_into(const char *dir, const char *file, const char *sub)
{
	struct staging back = { 0 };
	struct buf lint = { 0 };
	struct dep5_texts t = { 0 };
	char *dst = xasprintf("%s/%s", dir, sub);
	int fd, rootfd, ret;

	ck_assert_int_eq(mkdir(dst, 0755), 0);
	manifest_init(&back.manifest);
	fd = open(file, O_RDONLY);
	rootfd = open(dst, O_PATH | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(rootfd, 0);
	ret = layerfile_restore(fd, file, rootfd, &back, &lint, &t);
	close(fd);
	close(rootfd);
	dep5_texts_release(&t);
	staging_release(&back);
	buf_release(&lint);
	free(dst);
	return ret;
}

/* A new temp directory DIR (`dir` holds "/tmp/mki-layer-XXXXXX") with the tree DIR/src and its
 * layer DIR/layer; the layer's path (new string). */
static inline char *make_layer(char *dir)
{
	struct staging s = { 0 };
	char *src, *file;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	src = xasprintf("%s/src", dir);
	file = xasprintf("%s/layer", dir);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	make_tree(src);
	manifest_init(&s.manifest);
	ck_assert_int_eq(write_layer(src, file, &s), 0);
	manifest_release(&s.manifest);
	free(src);
	return file;
}

/* Flip one bit of `file` at `off`. */
static inline void flip(const char *file, off_t off)
{
	int fd = open(file, O_RDWR);
	char c;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &c, 1, off), 1);
	c ^= 1;
	ck_assert_int_eq(pwrite(fd, &c, 1, off), 1);
	close(fd);
}

static inline void remove_dir(const char *dir)
{
	sh(xasprintf("chmod -R u+w %s; rm -rf %s", dir, dir));
}

#endif
