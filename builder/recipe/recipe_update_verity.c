/*
 * The update group of a disk whose root is verified by dm-verity (recipe_update.c calls in):
 * a slot is not one partition but a run of them, which the bundle carries as RAUC child slots
 * of the root's - the root's data (squashfs), its hash tree right after it and, when U-Boot
 * boots the slots through the boot selection, the slot's boot partition right before it
 * (kernel, initrd and the extlinux.conf whose append carries the root hash: U-Boot cannot read
 * a squashfs, and the hash cannot live in the filesystem it hashes). Slot A's run holds the
 * image; the others' are empty partitions at least as large.
 */
#include "recipe_parse.h"

#include <inttypes.h>
#include <libconfig.h>
#include <string.h>

#include "lib/err.h"

static int find(const struct recipe_disk *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n_partitions; i++)
		if (!strcmp(d->partitions[i].name, name))
			return (int)i;
	return -1;
}

/* The root's hash tree right after it; no other partition verified. */
int recipe_update_check_verity_root(struct recipe_ctx *c, const config_setting_t *g,
				    struct recipe_update *u, const struct recipe_disk *d)
{
	const struct recipe_partition *root = &d->partitions[u->root];
	size_t i;

	for (i = 0; i < d->n_partitions; i++)
		if (d->partitions[i].contents == PART_VERITY && d->partitions[i].verity_of != u->root)
			return recipe_fail(c, g, "'update': not yet supported: a dm-verity hash "
					   "tree (partition '%s') of a partition other than the root "
					   "'%s'", d->partitions[i].name, root->name);
	if (u->root + 1 >= d->n_partitions || d->partitions[u->root + 1].contents != PART_VERITY)
		return recipe_fail(c, g, "'update': the verified root '%s' must be followed by "
				   "its hash tree's partition (contents = \"verity:%s\"): each slot "
				   "is its data partition and, right after it, its hash partition",
				   root->name, root->name);
	if (!d->partitions[u->root + 1].size)
		return recipe_fail(c, g, "'update': the hash partition '%s' needs a fixed 'size' "
				   "(such as \"16M\"): every slot's hash partition must hold the "
				   "next version's tree", d->partitions[u->root + 1].name);
	return 0;
}

/* Slot partition `k`'s child at `at` (k - 1 or k + 1) for partition `model` of the image's. */
static int check_child(struct recipe_ctx *c, const config_setting_t *g,
		       const struct recipe_disk *d, size_t k, int at, size_t model,
		       const char *what)
{
	const struct recipe_partition *s = &d->partitions[k], *m = &d->partitions[model], *p;

	if (at < 0 || (size_t)at >= d->n_partitions)
		return recipe_fail(c, g, "'update': slot '%s' has no %s %s it: a verified root's "
				   "slot is [boot,] data, hash partition, in that order", s->name,
				   what, at < (int)k ? "before" : "after");
	p = &d->partitions[at];
	if ((size_t)at == model)
		return 0;
	if (p->contents != PART_EMPTY || p->format != PART_FS_NONE)
		return recipe_fail(c, g, "'update': partition '%s', the %s of slot '%s', must be "
				   "empty (no 'contents' or 'format'): the update writes it",
				   p->name, what, s->name);
	if (!p->size || p->grow || p->size < m->size)
		return recipe_fail(c, g, "'update': partition '%s', the %s of slot '%s', must have "
				   "a fixed size of at least the %" PRIu64 " bytes of '%s', whose "
				   "image the bundle carries", p->name, what, s->name, m->size,
				   m->name);
	return 0;
}

/* Slot A's boot partition: the one holding /boot, of fixed size, a filesystem RAUC writes. */
static int boot_model(struct recipe_ctx *c, const config_setting_t *g,
		      const struct recipe_update *u, const struct recipe_disk *d, size_t *out)
{
	const struct recipe_partition *p;

	if (u->root == 0 || d->partitions[u->root - 1].contents != PART_SUBTREE ||
	    strcmp(d->partitions[u->root - 1].path, "boot"))
		return recipe_fail(c, g, "'update' of a verified root booted by extlinux: right "
				   "before the root '%s' must be its slot's boot partition, such as "
				   "{ name = \"boot-a\"; type = \"linux\"; size = \"128M\"; contents = "
				   "\"/boot\"; } (U-Boot cannot read a squashfs)",
				   d->partitions[u->root].name);
	p = &d->partitions[u->root - 1];
	*out = u->root - 1;
	if (p->format != PART_FS_EXT4 && p->format != PART_FS_VFAT)
		return recipe_fail(c, g, "'update': the boot partition '%s' must be ext4 or vfat, "
				   "a filesystem U-Boot reads and RAUC writes", p->name);
	return 0;
}

int recipe_update_check_verity_slots(struct recipe_ctx *c, const config_setting_t *g,
				     struct recipe_update *u, const struct recipe_disk *d)
{
	const config_setting_t *s = recipe_member(g, "slots");
	int boots = d->bootloader == DISK_BOOT_EXTLINUX, ret = 0, k;
	size_t i, boot = 0;

	if (boots)
		ret = boot_model(c, g, u, d, &boot);
	for (i = 0; !ret && i < u->slots.n; i++) {
		k = find(d, u->slots.v[i]);
		ret = check_child(c, s ? s : g, d, (size_t)k, k + 1, u->root + 1, "hash partition");
		if (!ret && boots)
			ret = check_child(c, s ? s : g, d, (size_t)k, k - 1, boot, "boot partition");
	}
	return ret;
}

int recipe_update_child(const struct recipe *r, size_t slot, enum recipe_update_part which)
{
	if (!r->update.set || !r->update.verity)
		return -1;
	if (which == UPDATE_PART_HASH)
		return (int)slot + 1;
	return r->disk.bootloader == DISK_BOOT_EXTLINUX ? (int)slot - 1 : -1;
}
