/*
 * The inode and directory tables: every inode that is not a directory in path order (regular
 * files' inodes come from the block processor), then the directories deepest first - reverse
 * path order puts every subdirectory before its parent, so each directory's entries know the
 * references of their inodes - and the tables after them. Inode numbers are fixed first: the
 * non-directories 1..M in path order, the directories after them, the root last.
 */
#include "squashfs_ctx.h"

#include <linux/limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"

static uint16_t type_bits(char type)
{
	switch (type) {
	case MF_DIR: return S_IFDIR;
	case MF_SYMLINK: return S_IFLNK;
	case MF_CHR: return S_IFCHR;
	case MF_BLK: return S_IFBLK;
	case MF_FIFO: return S_IFIFO;
	case MF_SOCK: return S_IFSOCK;
	default: return S_IFREG;
	}
}

/* Non-directories 1..M in path order, directories M+1..N deepest first: the root is N. */
static void number_inodes(struct squashfs_ctx *w)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < w->t->n; i++)
		if (w->t->v[i].e->type != MF_DIR && w->t->v[i].e->type != MF_HARDLINK)
			w->num[i] = ++n;
	for (i = w->t->n; i-- > 0;)
		if (w->t->v[i].e->type == MF_DIR)
			w->num[i] = ++n;
	w->super.inode_count = n;
}

static int set_xattrs(struct squashfs_ctx *w, size_t i, uint32_t *idx)
{
	const struct manifest_entry *e = w->t->v[i].e;
	size_t k;
	int ret;

	*idx = NO_XATTR;
	if (!e->n_xattrs)
		return 0;
	ret = sqfs_xattr_writer_begin(w->xw, 0);
	for (k = 0; !ret && k < e->n_xattrs; k++) {
		/* a package's tar may declare any size; the kernel returns none past this */
		if (e->xattrs[k].len > XATTR_SIZE_MAX) {
			log_error("'/%s' has the extended attribute '%s' of %zu bytes, more than the "
				  "%d Linux can read back: remove it in a hook", e->path,
				  e->xattrs[k].name, e->xattrs[k].len, XATTR_SIZE_MAX);
			return -MKI_E_IMAGE;
		}
		ret = sqfs_xattr_writer_add(w->xw, e->xattrs[k].name, e->xattrs[k].value,
					    e->xattrs[k].len);
		if (ret == SQFS_ERROR_UNSUPPORTED) {
			log_error("'/%s' has the extended attribute '%s', which squashfs "
				  "cannot hold (only user., trusted. and security.): remove it "
				  "in a hook or write ext4", e->path, e->xattrs[k].name);
			return -MKI_E_IMAGE;
		}
	}
	if (!ret)
		ret = sqfs_xattr_writer_end(w->xw, idx);
	return ret ? squashfs_fail(w, ret, "record extended attributes") : 0;
}

/* The inode of a node that is neither a directory nor a regular file. */
static sqfs_inode_generic_t *other_inode(const struct manifest_entry *e)
{
	size_t len = e->type == MF_SYMLINK ? strlen(e->target) : 0;
	sqfs_inode_generic_t *in = xcalloc(1, sizeof(*in) + len);

	switch (e->type) {
	case MF_SYMLINK:
		in->base.type = SQFS_INODE_SLINK;
		in->data.slink.nlink = 1;
		in->data.slink.target_size = (sqfs_u32)len;
		in->payload_bytes_available = in->payload_bytes_used = (sqfs_u32)len;
		memcpy(in->extra, e->target, len);
		break;
	case MF_CHR:
	case MF_BLK:
		in->base.type = e->type == MF_CHR ? SQFS_INODE_CDEV : SQFS_INODE_BDEV;
		in->data.dev.nlink = 1;
		/* the kernel's new_encode_dev: minor's low byte, major, minor's high bits */
		in->data.dev.devno = (e->minor & 0xff) | (e->major & 0xfff) << 8 |
				     (e->minor & ~0xffu) << 12;
		break;
	default:
		in->base.type = e->type == MF_FIFO ? SQFS_INODE_FIFO : SQFS_INODE_SOCKET;
		in->data.ipc.nlink = 1;
		break;
	}
	return in;
}

static void set_nlink(sqfs_inode_generic_t *in, uint32_t nlink)
{
	switch (in->base.type) {
	case SQFS_INODE_EXT_FILE: in->data.file_ext.nlink = nlink; break;
	case SQFS_INODE_EXT_SLINK: in->data.slink_ext.nlink = nlink; break;
	case SQFS_INODE_EXT_BDEV:
	case SQFS_INODE_EXT_CDEV: in->data.dev_ext.nlink = nlink; break;
	case SQFS_INODE_EXT_FIFO:
	case SQFS_INODE_EXT_SOCKET: in->data.ipc_ext.nlink = nlink; break;
	case SQFS_INODE_DIR: in->data.dir.nlink = nlink; break;
	case SQFS_INODE_EXT_DIR: in->data.dir_ext.nlink = nlink; break;
	case SQFS_INODE_SLINK: in->data.slink.nlink = nlink; break;
	case SQFS_INODE_BDEV:
	case SQFS_INODE_CDEV: in->data.dev.nlink = nlink; break;
	case SQFS_INODE_FIFO:
	case SQFS_INODE_SOCKET: in->data.ipc.nlink = nlink; break;
	default: break; /* a basic file has none: one with more links was made extended */
	}
}

/* Owner, mode, time, number, links and xattrs of node i into `in`, then `in` to the table. */
static int write_inode(struct squashfs_ctx *w, size_t i, sqfs_inode_generic_t *in, uint32_t nlink)
{
	const struct manifest_entry *e = w->t->v[i].e;
	sqfs_u64 block;
	sqfs_u32 offset, xattr;
	int ret = set_xattrs(w, i, &xattr);

	if (ret)
		return ret;
	if (nlink > 1 && (in->base.type == SQFS_INODE_FILE))
		ret = sqfs_inode_make_extended(in);
	if (!ret && xattr != NO_XATTR)
		ret = sqfs_inode_set_xattr_index(in, xattr);
	set_nlink(in, nlink);
	in->base.mode = (sqfs_u16)(type_bits(e->type) | (e->mode & 07777));
	in->base.mod_time = squashfs_clamp_time(w->t->v[i].mtime);
	in->base.inode_number = w->num[i];
	if (!ret)
		ret = sqfs_id_table_id_to_index(w->ids, e->uid, &in->base.uid_idx);
	if (!ret)
		ret = sqfs_id_table_id_to_index(w->ids, e->gid, &in->base.gid_idx);
	sqfs_meta_writer_get_position(w->im, &block, &offset);
	w->ref[i] = block << 16 | offset;
	if (!ret)
		ret = sqfs_meta_writer_write_inode(w->im, in);
	return ret ? squashfs_fail(w, ret, "write an inode") : 0;
}

static int write_others(struct squashfs_ctx *w)
{
	sqfs_inode_generic_t *in;
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < w->t->n; i++) {
		char type = w->t->v[i].e->type;

		if (type == MF_DIR || type == MF_HARDLINK)
			continue;
		in = type == MF_REG ? w->file[i] : other_inode(w->t->v[i].e);
		w->file[i] = NULL;
		ret = write_inode(w, i, in, w->t->v[i].nlink);
		free(in);
	}
	return ret;
}

/* The children of every directory, in path order (name order within a directory). */
struct kids {
	size_t *parent, *head, *next, *tail;
};

#define NONE ((size_t)-1)

static void kids_init(struct kids *c, const struct imgtree *t)
{
	size_t i, p;

	c->parent = xcalloc(t->n, sizeof(size_t));
	c->head = xmalloc(t->n * sizeof(size_t));
	c->next = xmalloc(t->n * sizeof(size_t));
	c->tail = xmalloc(t->n * sizeof(size_t));
	memset(c->head, 0xff, t->n * sizeof(size_t));
	memset(c->next, 0xff, t->n * sizeof(size_t));
	for (i = 1; i < t->n; i++) {
		p = c->parent[i] = imgtree_parent(t, i);
		if (c->head[p] == NONE)
			c->head[p] = i;
		else
			c->next[c->tail[p]] = i;
		c->tail[p] = i;
	}
}

static void kids_release(struct kids *c)
{
	free(c->parent);
	free(c->head);
	free(c->next);
	free(c->tail);
}

/* Directory d's entries, then its inode: nlink 2 + its subdirectories. */
static int write_dir(struct squashfs_ctx *w, size_t d, const struct kids *c)
{
	const struct imgtree *t = w->t;
	sqfs_inode_generic_t *in;
	uint32_t subdirs = 0;
	size_t i, o;
	uint16_t mode;
	int ret = sqfs_dir_writer_begin(w->dw, 0);

	for (i = c->head[d]; !ret && i != NONE; i = c->next[i]) {
		o = t->v[i].e->type == MF_HARDLINK ? t->v[i].link : i;
		subdirs += t->v[i].e->type == MF_DIR;
		mode = type_bits(t->v[o].e->type) | (t->v[o].e->mode & 07777);
		ret = sqfs_dir_writer_add_entry(w->dw, imgtree_name(t, i), w->num[o], w->ref[o],
						mode);
	}
	if (!ret)
		ret = sqfs_dir_writer_end(w->dw);
	if (ret)
		return squashfs_fail(w, ret, "write a directory");
	in = sqfs_dir_writer_create_inode(w->dw, 0, NO_XATTR,
					  d ? w->num[c->parent[d]] : w->super.inode_count + 1);
	if (!in)
		return squashfs_fail(w, SQFS_ERROR_ALLOC, "write a directory");
	ret = write_inode(w, d, in, 2 + subdirs);
	free(in);
	return ret;
}

int squashfs_tree_write(struct squashfs_ctx *w)
{
	struct kids c;
	size_t i;
	int ret;

	number_inodes(w);
	w->super.inode_table_start = w->io.size;
	ret = write_others(w);
	kids_init(&c, w->t);
	for (i = w->t->n; !ret && i-- > 0;) {
		if (w->t->v[i].e->type == MF_DIR)
			ret = write_dir(w, i, &c);
		if (!ret && err_interrupted())
			ret = -MKI_E_INTERRUPTED;
	}
	kids_release(&c);
	if (ret)
		return ret;
	if ((ret = sqfs_meta_writer_flush(w->im)) || (ret = sqfs_meta_writer_flush(w->dm)))
		return squashfs_fail(w, ret, "write the inode table");
	w->super.root_inode_ref = w->ref[0];
	w->super.directory_table_start = w->io.size;
	ret = sqfs_meta_write_write_to_file(w->dm);
	if (!ret)
		ret = sqfs_frag_table_write(w->frag, &w->io.base, &w->super, w->cmp);
	if (!ret)
		ret = sqfs_id_table_write(w->ids, &w->io.base, &w->super, w->cmp);
	if (!ret)
		ret = sqfs_xattr_writer_flush(w->xw, &w->io.base, &w->super, w->cmp);
	return ret ? squashfs_fail(w, ret, "write the tables") : 0;
}
