/*
 * The ext4 modules' suites: a writer (struct ext4fs) on the fixture's tree with its empty
 * filesystem created in a whole-file sink, so each module's functions can be called alone.
 */
#ifndef MKI_UNIT_EXT4_FIXTURE_H
#define MKI_UNIT_EXT4_FIXTURE_H

#include "image/ext4fs.h"
#include "image/imgtree_internal.h"
#include "image/sink.h"
#include "image_fixture.h"

static char fx_ext4[] = "ext4";

struct ext4_fixture {
	struct fixture f;
	struct sink k;
	struct ext4fs w;
};

/* Index of `path` in the tree. */
static inline size_t ex_node(struct ext4_fixture *x, const char *path)
{
	long i = imgtree_find(&x->f.t, path);

	ck_assert_msg(i >= 0, "no node '%s'", path);
	return (size_t)i;
}

/* The tree of x->f (set up, possibly changed), sized and created empty: w.fs is open. */
static inline void ex_create(struct ext4_fixture *x)
{
	fx_tree(&x->f);
	sink_init_file(&x->k, x->f.out);
	ext4fs_init(&x->w, &x->f.t, &x->f.p, &x->k);
	x->w.buf = xmalloc(COPY_BLOCKS * BLOCK_SIZE);
	ck_assert_int_eq(ext4fs_estimate(&x->w), 0);
	ck_assert_int_eq(ext4fs_create(&x->w), 0);
	x->w.ino[0] = EXT2_ROOT_INO;
}

/* Read node `path`'s inode from the open filesystem. */
static inline ext2_ino_t ex_inode(struct ext4_fixture *x, const char *path,
				  struct ext2_inode_large *in)
{
	ext2_ino_t ino = x->w.ino[ex_node(x, path)];

	ck_assert_uint_ne(ino, 0);
	memset(in, 0, sizeof(*in));
	ck_assert_int_eq(ext2fs_read_inode_full(x->w.fs, ino, (struct ext2_inode *)in,
						sizeof(*in)), 0);
	return ino;
}

/* Close the filesystem and the sink (the image is kept as x->f.out when `commit`). */
static inline void ex_release(struct ext4_fixture *x, int commit)
{
	if (commit)
		ck_assert_int_eq(sink_commit(&x->k), 0);
	ext4fs_release(&x->w);
	sink_release(&x->k);
}

#endif
