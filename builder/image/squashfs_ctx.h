/*
 * The squashfs writer's state, shared by squashfs.c (the writers, the data, the superblock) and
 * squashfs_tree.c (inodes, directories and the tables after them). libsquashfs's types stay in
 * the module.
 */
#ifndef MKI_SQUASHFS_CTX_H
#define MKI_SQUASHFS_CTX_H

#include <stdint.h>

#include <sqfs/block_processor.h>
#include <sqfs/block_writer.h>
#include <sqfs/dir_writer.h>
#include <sqfs/error.h>
#include <sqfs/frag_table.h>
#include <sqfs/id_table.h>
#include <sqfs/inode.h>
#include <sqfs/meta_writer.h>
#include <sqfs/super.h>
#include <sqfs/xattr_writer.h>

#include "imgtree.h"
#include "squashfs_internal.h"

#define BLOCK_SIZE SQFS_DEFAULT_BLOCK_SIZE /* 128 KiB */
#define DEV_BLOCK 4096u                     /* the image is padded to it; dm-verity's block */
#define MAX_THREADS 16u
#define NO_XATTR 0xffffffffu

struct squashfs_ctx {
	const struct imgtree *t;
	const char *name;               /* what messages call the output */
	struct squashfs_io io;
	sqfs_compressor_t *cmp, *uncmp;
	sqfs_super_t super;
	sqfs_block_writer_t *bw;
	sqfs_frag_table_t *frag;
	sqfs_block_processor_t *proc;
	sqfs_id_table_t *ids;
	sqfs_xattr_writer_t *xw;
	sqfs_meta_writer_t *im, *dm;    /* the inode table; the directory table (kept in memory) */
	sqfs_dir_writer_t *dw;
	sqfs_inode_generic_t **file;    /* per node: a regular file's inode, the processor's */
	uint32_t *num;                  /* per node carrying an inode: its number */
	uint64_t *ref;                  /* per node carrying an inode: where it is written */
	uint8_t *buf;
};

/** Log a libsquashfs failure `sq` while doing `what`; returns the code to return. */
int squashfs_fail(struct squashfs_ctx *w, int sq, const char *what);
/** A timestamp as squashfs holds it: clamped to 0 .. 2^32 - 1. */
uint32_t squashfs_clamp_time(int64_t t);
/**
 * After the data: number the inodes, write the inode and directory tables, then the fragment,
 * id and xattr tables. 0 or a logged negative code.
 */
int squashfs_tree_write(struct squashfs_ctx *w);

#endif
