/*
 * The update group's rows (recipe_keys[]): the signed bundle a device running the image accepts
 * as its next root. What only the whole group can check - the disk's root slots, the keys
 * required - is its finish, run after the disk's (the update row follows the disk's), so the
 * partitions are known.
 */
#include "recipe_parse.h"

#include <inttypes.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/str.h"

#define MAX_SLOTS 8

int recipe_update_shown(const struct recipe_key *k, const void *base, int digest)
{
	return ((const struct recipe *)base)->update.set;
}

/* The private key's file is where the signature comes from, not what the image or bundle is. */
int recipe_update_shown_key(const struct recipe_key *k, const void *base, int digest)
{
	return !digest && ((const struct recipe_update *)base)->key;
}

/* The certificate: none when the bundle is signed offline. */
int recipe_update_shown_cert(const struct recipe_key *k, const void *base, int digest)
{
	return ((const struct recipe_update *)base)->cert != NULL;
}

/*
 * compatible and version land in the bundle's manifest, an ini file RAUC reads with GKeyFile,
 * which would cut a value at a newline and trim its leading spaces: printable ASCII, no space
 * at either end.
 */
int recipe_update_check_text(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base)
{
	const char *v = *(char *const *)recipe_cfield(base, k->offset), *p;

	if (!v)
		return 0;
	for (p = v; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			break;
	if (!*v || *p || v[0] == ' ' || p[-1] == ' ' || strlen(v) > 256)
		return recipe_fail(c, recipe_member(g, k->name), "'update.%s' must be 1 to 256 "
				   "printable ASCII characters, without a space at either end",
				   k->name);
	return 0;
}

/*
 * The bundle formats mkimage writes: RAUC's. Another (SWUpdate's .swu, a Mender artifact) is a
 * name here and a writer beside image/rauc.c taking the same slot image and keys.
 */
int recipe_update_check_format(struct recipe_ctx *c, const config_setting_t *g,
			       const struct recipe_key *k, void *base)
{
	const char *f = ((const struct recipe_update *)base)->format;

	if (!f || !strcmp(f, "rauc"))
		return 0;
	return recipe_fail(c, recipe_member(g, k->name), "'update.format' \"%s\": not yet "
			   "supported; the bundle formats mkimage writes are: \"rauc\"", f);
}

/* sign: where the bundle is signed. */
int recipe_update_check_sign(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base)
{
	const char *v = ((const struct recipe_update *)base)->sign;

	if (!v || !strcmp(v, "build") || !strcmp(v, "offline"))
		return 0;
	return recipe_fail(c, recipe_member(g, k->name), "'update.sign' \"%s\": it must be "
			   "\"build\" (signed with cert and key) or \"offline\" (the content and "
			   "the manifest to sign, apart)", v);
}

int recipe_update_check_attempts(struct recipe_ctx *c, const config_setting_t *g,
				 const struct recipe_key *k, void *base)
{
	if (((const struct recipe_update *)base)->boot_attempts)
		return 0;
	return recipe_fail(c, recipe_member(g, k->name), "'update.boot_attempts' must be 1 to 9: "
			   "the boots a new slot gets before U-Boot falls back to the other");
}

/* cert, key, keyring: a PEM file beside the recipe, read by the build (image/raucsign.h). */
int recipe_update_parse_path(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);
	char what[32];

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return recipe_fail(c, s, "'update.%s' must be a string: a PEM file", k->name);
	snprintf(what, sizeof(what), "update %s", k->name);
	return recipe_get_path(c, s, what, recipe_field(base, k->offset));
}

static int find_partition(const struct recipe_disk *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n_partitions; i++)
		if (!strcmp(d->partitions[i].name, name))
			return (int)i;
	return -1;
}

/* The partitions' names, for a message naming what the layout has. */
static char *partition_names(const struct recipe_disk *d)
{
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < d->n_partitions; i++)
		buf_addf(&b, "%s'%s'", i ? ", " : "", d->partitions[i].name);
	return buf_detach(&b);
}

/* No slots written: every partition of type "root", in disk order. */
static void default_slots(struct recipe_update *u, const struct recipe_disk *d)
{
	size_t i;

	for (i = 0; i < d->n_partitions; i++)
		if (d->partitions[i].type && !strcmp(d->partitions[i].type, "root"))
			strv_push(&u->slots, d->partitions[i].name);
}

/* One slot: a partition of the layout, of fixed size, room for the root's filesystem. */
static int check_slot(struct recipe_ctx *c, const config_setting_t *s, const struct recipe_disk *d,
		      const char *name, const struct recipe_partition *root)
{
	int i = find_partition(d, name);
	const struct recipe_partition *p;
	char *names;

	if (i < 0) {
		names = partition_names(d);
		recipe_fail(c, s, "update slot '%s' is not a partition of the disk's layout (its "
			    "partitions: %s)", name, names);
		free(names);
		return -MKI_E_RECIPE;
	}
	p = &d->partitions[i];
	if (!root->size || !p->size || p->grow)
		return recipe_fail(c, s, "update slot '%s': not yet supported: a slot of size "
				   "\"auto\" or \"grow\"; give every root slot the same fixed 'size' "
				   "(such as \"1536M\")", root->size ? name : root->name);
	if (p->size < root->size)
		return recipe_fail(c, s, "update slot '%s' (%" PRIu64 " bytes) is smaller than the "
				   "root partition '%s' (%" PRIu64 " bytes) whose filesystem the bundle "
				   "carries: make the slots the same size", name, p->size, root->name,
				   root->size);
	if (p->contents != PART_ROOT && p->contents != PART_EMPTY)
		return recipe_fail(c, s, "update slot '%s' holds other contents: a root slot is "
				   "the root partition or an empty one", name);
	return 0;
}

static int check_slots(struct recipe_ctx *c, const config_setting_t *g, struct recipe_update *u,
		       const struct recipe_disk *d)
{
	const config_setting_t *s = recipe_member(g, "slots");
	const struct recipe_partition *root = &d->partitions[u->root];
	size_t i, j;
	int ret = 0, has_root = 0;

	if (!u->slots.n)
		default_slots(u, d);
	if (u->slots.n < 2 || u->slots.n > MAX_SLOTS)
		return recipe_fail(c, s ? s : g, "'update' needs 2 to %d root slots (partitions "
				   "of the disk's layout), not %zu: an A/B update writes the slot the "
				   "device is not running", MAX_SLOTS, u->slots.n);
	for (i = 0; !ret && i < u->slots.n; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(u->slots.v[i], u->slots.v[j]))
				return recipe_fail(c, s, "update slot '%s' is named twice",
						   u->slots.v[i]);
		ret = check_slot(c, s ? s : g, d, u->slots.v[i], root);
		has_root |= !strcmp(u->slots.v[i], root->name);
	}
	if (!ret && !has_root)
		ret = recipe_fail(c, s ? s : g, "the update slots must include the root partition "
				  "'%s', the slot the image boots from", root->name);
	return ret;
}

static int require(struct recipe_ctx *c, const config_setting_t *g, const void *v,
		   const char *key, const char *what)
{
	if (v)
		return 0;
	return recipe_fail(c, g, "'update' needs '%s': %s", key, what);
}

/* The root partition, its filesystem one a bundle can carry (verified: recipe_update_verity.c). */
static int check_root(struct recipe_ctx *c, const config_setting_t *g, struct recipe_update *u,
		      const struct recipe_disk *d)
{
	size_t i;

	for (i = 0; i < d->n_partitions; i++) {
		if (d->partitions[i].contents == PART_ROOT)
			u->root = i;
		u->verity |= d->partitions[i].contents == PART_VERITY;
	}
	if (u->verity)
		return recipe_update_check_verity_root(c, g, u, d);
	if (d->partitions[u->root].format != PART_FS_EXT4)
		return recipe_fail(c, g, "'update': not yet supported: a root partition ('%s') "
				   "that is not ext4", d->partitions[u->root].name);
	return 0;
}

/*
 * With disk.bootloader = "systemd-boot", the ESP is the boot selection
 * (configure/bootcfg_ab_sdboot.c): systemd-boot reads kernels only from it, so each slot's
 * kernel is copied there from the slot's own /boot, and its entry's boot counter does the
 * fallback. Slot A is the factory's root: the one entry the disk starts with.
 */
static int check_select_sdboot(struct recipe_ctx *c, const config_setting_t *g,
			       struct recipe_update *u, const struct recipe_disk *d)
{
	size_t i;
	int a = find_partition(d, u->slots.v[0]);

	if (u->slots.n != 2)
		return recipe_fail(c, g, "'update' with disk.bootloader = \"systemd-boot\" boots two "
				   "slots, A and B, not %zu: name two in 'update.slots'", u->slots.n);
	if (a != (int)u->root)
		return recipe_fail(c, g, "'update' with disk.bootloader = \"systemd-boot\": the first "
				   "slot ('%s', A) must be the root partition '%s', the slot the disk "
				   "boots first", u->slots.v[0], d->partitions[u->root].name);
	for (i = 0; i < d->n_partitions; i++) {
		const struct recipe_partition *p = &d->partitions[i];

		if (p->contents == PART_SUBTREE && !strcmp(p->path, "boot"))
			return recipe_fail(c, g, "'update': partition '%s' holds /boot, but each "
					   "root slot must carry its own kernel (an update replaces "
					   "it with the root, and the slot's kernel is copied to the "
					   "ESP): keep /boot on the root", p->name);
		if (p->contents == PART_VERITY)
			return recipe_fail(c, g, "'update' with disk.bootloader = \"systemd-boot\": not "
					   "yet supported: a root verified by dm-verity (partition '%s')",
					   p->name);
		if (u->select < 0 && p->type && !strcmp(p->type, "esp") &&
		    p->contents == PART_SUBTREE)
			u->select = (int)i;
	}
	if (u->select < 0)
		return recipe_fail(c, g, "'update' with disk.bootloader = \"systemd-boot\" needs "
				   "the ESP holding a directory of the tree, such as { name = \"esp\"; "
				   "type = \"esp\"; size = \"256M\"; contents = \"/boot/efi\"; }");
	if (!d->partitions[u->select].size || d->partitions[u->select].grow)
		return recipe_fail(c, g, "'update': the ESP '%s' needs a fixed 'size' with room for "
				   "both slots' kernels and initrds (such as \"256M\"): an update copies "
				   "the new slot's there", d->partitions[u->select].name);
	return 0;
}

/*
 * With disk.bootloader = "extlinux", the disk boots its slots through mkimage's boot selection:
 * U-Boot runs boot.scr from the partition holding /boot/select, which must be FAT (U-Boot
 * writes its attempt counter there with fatwrite; Debian's U-Boot builds cannot write ext4) and
 * the only one U-Boot's distro boot scans. Each slot carries its own /boot, kernel and
 * extlinux.conf, so that an update replaces the kernel with the root.
 */
static int check_select(struct recipe_ctx *c, const config_setting_t *g, struct recipe_update *u,
			const struct recipe_disk *d)
{
	const struct recipe_partition *p;
	size_t i;

	u->select = -1;
	if (d->bootloader == DISK_BOOT_SYSTEMD_BOOT)
		return check_select_sdboot(c, g, u, d);
	if (d->bootloader != DISK_BOOT_EXTLINUX)
		return 0;
	if (u->slots.n != 2)
		return recipe_fail(c, g, "'update' with disk.bootloader = \"extlinux\" boots two "
				   "slots, A and B, not %zu: name two in 'update.slots'", u->slots.n);
	for (i = 0; i < d->n_partitions; i++) {
		p = &d->partitions[i];
		if (p->contents == PART_SUBTREE && !strcmp(p->path, "boot/select"))
			u->select = (int)i;
		else if (p->contents == PART_SUBTREE && !strcmp(p->path, "boot") && !u->verity)
			return recipe_fail(c, g, "'update': partition '%s' holds /boot, but each "
					   "root slot must carry its own kernel (an update replaces "
					   "it with the root): hold \"/boot/select\" there instead",
					   p->name);
	}
	if (u->select < 0)
		return recipe_fail(c, g, "'update' with disk.bootloader = \"extlinux\" needs the "
				   "boot selection partition: { name = \"boot\"; type = \"linux\"; "
				   "format = \"vfat\"; size = \"16M\"; contents = \"/boot/select\"; }");
	p = &d->partitions[u->select];
	if (p->format != PART_FS_VFAT)
		return recipe_fail(c, g, "'update': partition '%s' (/boot/select) must be format = "
				   "\"vfat\": U-Boot writes the boot attempts there, and Debian's "
				   "U-Boot builds write FAT, not ext4", p->name);
	for (i = 0; i < d->n_partitions; i++)
		if (d->partitions[i].legacy_boot && (int)i != u->select)
			return recipe_fail(c, g, "'update': partition '%s' is legacy_boot; with the "
					   "boot selection only '%s' (/boot/select) may be, or U-Boot "
					   "would boot a slot without counting",
					   d->partitions[i].name, p->name);
	return 0;
}

int recipe_update_finish(struct recipe_ctx *c, const config_setting_t *g, void *base)
{
	struct recipe_update *u = base;
	const struct recipe_disk *d = &c->r->disk;
	int ret;

	u->set = g != NULL;
	if (!u->set)
		return 0;
	u->sign_offline = u->sign && !strcmp(u->sign, "offline");
	if (!d->set)
		return recipe_fail(c, g, "'update' needs a 'disk' with root slots: the bundle "
				   "carries the root partition's filesystem for the other slot");
	ret = require(c, g, u->compatible, "compatible", "the string a device's updater must "
		      "match, such as \"acme-board\"");
	if (!ret)
		ret = require(c, g, u->version, "version", "the bundle's version, such as \"1.0\"");
	if (!ret && !u->sign_offline)
		ret = require(c, g, u->cert, "cert", "the signing certificate (PEM), or sign = "
			      "\"offline\"");
	if (!ret && !u->sign_offline)
		ret = require(c, g, u->key, "key", "the signing certificate's private key (PEM), "
			      "or sign = \"offline\"");
	if (!ret && u->sign_offline && (u->cert || u->key))
		ret = recipe_fail(c, recipe_member(g, u->cert ? "cert" : "key"), "'update.%s' "
				  "with sign = \"offline\": the build signs nothing; the signing "
				  "station holds the certificate and its key", u->cert ? "cert" : "key");
	if (!ret)
		ret = require(c, g, u->keyring, "keyring", "the CA certificates (PEM) devices trust");
	if (!ret)
		ret = check_root(c, g, u, d);
	if (!ret)
		ret = check_slots(c, g, u, d);
	if (!ret && u->verity)
		ret = recipe_update_check_verity_slots(c, g, u, d);
	return ret ? ret : check_select(c, g, u, d);
}

int recipe_update_boots(const struct recipe *r)
{
	return r->update.set && r->update.select >= 0;
}

size_t recipe_update_slots(const struct recipe *r, size_t *out, size_t max)
{
	size_t i, n = 0;
	int k;

	for (i = 0; r->update.set && i < r->update.slots.n && n < max; i++) {
		k = find_partition(&r->disk, r->update.slots.v[i]);
		if (k >= 0)
			out[n++] = (size_t)k;
	}
	return n;
}
