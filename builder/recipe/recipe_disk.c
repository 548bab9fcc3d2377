/*
 * The recipe's disk section: the partition table and what each partition holds. The rows are
 * in recipe_keys.c's table; this file reads the values a type alone cannot and checks what spans
 * keys and partitions, so that a layout that cannot be written fails here, before anything is
 * downloaded, with the recipe's file and line.
 */
#include <stdlib.h>
#include <string.h>

#include "debian/arch.h"
#include "fstype.h"
#include "lib/err.h"
#include "recipe_parse.h"

#define MIB (1024 * 1024ull)
#define GPT_NAME_MAX 36 /* UTF-16 code units in a GPT partition entry's name */

/* The types a recipe may name; root depends on the primary architecture (root_types). */
static const struct part_type {
	const char *name;
	const char *guid;
	unsigned mbr;
	enum partition_format fs; /* the default for a tree's contents or an empty partition */
} part_types[] = {
	{ "esp", "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", 0xef, PART_FS_VFAT },
	{ "xbootldr", "bc13c2ff-59e6-4262-a352-b275fd6f7172", 0xea, PART_FS_VFAT },
	{ "root", NULL, 0x83, PART_FS_EXT4 },
	{ "linux", "0fc63daf-8483-4772-8e79-3d69d8477de4", 0x83, PART_FS_EXT4 },
	{ "swap", "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f", 0x82, PART_FS_NONE },
	{ "raw", "8da63339-0007-60c0-c436-083ac8230908", 0xda, PART_FS_NONE },
	{ "root-verity", NULL, 0xda, PART_FS_NONE },
	{ NULL, NULL, 0, PART_FS_NONE },
};

/*
 * The Discoverable Partitions Specification's root and root-verity partition types per
 * architecture.
 */
static const struct {
	const char *arch;
	const char *root;
	const char *verity;
} root_types[] = {
	{ "amd64", "4f68bce3-e8cd-4db1-96e7-fbcaf984b709",
	  "2c7357ed-ebd2-46d9-aec1-23d437ec2bf5" },
	{ "i386", "44479540-f297-41b2-9af7-d131d5f0458a",
	  "d13c5d3b-b5d1-422a-b29f-9454fdc89d76" },
	{ "arm64", "b921b045-1df0-41c3-af44-4c6f280d3fae",
	  "df3300ce-d69f-4c92-978c-9bfb0f38d820" },
	{ "armhf", "69dad710-2ce4-4e3c-b16c-21a1d49abed3",
	  "7386cdf2-203c-47a9-a498-f2ecce45a2d6" },
	{ "armel", "69dad710-2ce4-4e3c-b16c-21a1d49abed3",
	  "7386cdf2-203c-47a9-a498-f2ecce45a2d6" },
	{ "riscv64", "72ec70a6-cf74-40e6-bd49-4bda08e8f224",
	  "b6ed5582-440b-4209-b8da-5ff7c419ea3d" },
	{ "ppc64el", "c31c45e6-3f39-412e-80fb-4809c4980599",
	  "906bd944-4589-4aae-a4e4-dd983917446a" },
	{ "s390x", "5eead9a9-fe09-4a1e-a1d7-520d00531306",
	  "b325bfbe-c7be-4ab8-8357-139e652d2f6b" },
	{ "loong64", "77055800-792c-4f94-b39a-98c91b762bb6",
	  "f3393b22-e9af-4613-a948-9d3bfbd0c535" },
	{ "mips64el", "700bda43-7a34-4507-b179-eeb93d7a7ca3",
	  "16b417f8-3e06-4f57-8dd2-9b5232f41aa6" },
};

#define TYPE_NAMES "\"esp\", \"xbootldr\", \"root\", \"root-verity\", \"linux\", \"swap\", \"raw\""

static const struct part_type *find_type(const char *name)
{
	const struct part_type *t;

	for (t = part_types; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

void recipe_disk_set_type(struct recipe_partition *p, const char *name)
{
	const struct part_type *t = find_type(name);

	free(p->type);
	p->type = xstrdup(name);
	p->mbr_type = t->mbr;
	memcpy(p->type_guid, t->guid, 37);
}

static int is_guid(const char *s)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	size_t i;

	for (i = 0; shape[i]; i++) {
		if (shape[i] == '-' ? s[i] != '-' : !strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
			return 0;
	}
	return s[i] == 0;
}

/* "root" or "root-verity": the primary architecture's type. */
static int resolve_root(struct recipe_ctx *c, const config_setting_t *s, struct recipe_partition *p)
{
	int verity = !strcmp(p->type, "root-verity");
	size_t i;

	for (i = 0; i < sizeof(root_types) / sizeof(*root_types); i++) {
		if (!strcmp(root_types[i].arch, c->r->arch)) {
			memcpy(p->type_guid, verity ? root_types[i].verity : root_types[i].root,
			       37);
			return 0;
		}
	}
	return recipe_fail(c, s, "partition type \"%s\" has no Discoverable Partitions type for "
			   "architecture '%s': give the type GUID instead", p->type, c->r->arch);
}

/* type: a name, a GUID (GPT) or "0xNN" (an MBR system id). */
int recipe_disk_parse_type(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base)
{
	struct recipe_partition *p = base;
	const config_setting_t *s = recipe_member(g, "type");
	const struct part_type *t;
	char *end;
	int ret = recipe_get_str(c, g, "type", &p->type);

	if (ret)
		return ret;
	if (!p->type)
		return recipe_fail(c, g, "a partition needs a 'type': %s or a type GUID", TYPE_NAMES);
	t = find_type(p->type);
	if (t) {
		p->mbr_type = t->mbr;
		if (t->guid)
			memcpy(p->type_guid, t->guid, 37);
		return t->guid || c->r->disk.table == DISK_MBR ? 0 : resolve_root(c, s, p);
	}
	if (is_guid(p->type)) {
		for (size_t i = 0; i < 36; i++)
			p->type_guid[i] = (char)(p->type[i] | (p->type[i] >= 'A' ? 0x20 : 0));
		return 0;
	}
	if (!strncmp(p->type, "0x", 2) && p->type[2]) {
		unsigned long v = strtoul(p->type + 2, &end, 16);

		if (!*end && v > 0 && v < 256) {
			p->mbr_type = (unsigned)v;
			return 0;
		}
	}
	return recipe_fail(c, s, "partition type '%s' is not known: use %s, a type GUID "
			   "(\"0fc63daf-8483-4772-8e79-3d69d8477de4\") or on MBR a system id (\"0x83\")",
			   p->type, TYPE_NAMES);
}

/* Sizes and offsets: "auto" (0) or a size; a partition's size may also be "grow". */
int recipe_disk_parse_size(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base)
{
	uint64_t *v = (uint64_t *)((char *)base + k->offset);
	int may_grow = k->section == RECIPE_IN_PARTITIONS && !strcmp(k->name, "size");
	char *text = NULL;
	int ret = recipe_get_str(c, g, k->name, &text);

	*v = 0;
	if (ret || !text || !strcmp(text, "auto"))
		goto out;
	if (may_grow && !strcmp(text, "grow"))
		((struct recipe_partition *)base)->grow = 1;
	else if (recipe_parse_size(text, v) || !*v)
		ret = recipe_fail(c, recipe_member(g, k->name), "'%s' must be \"auto\"%s or a size "
				  "like \"512M\" or \"2G\", not '%s'", k->name,
				  may_grow ? ", \"grow\"" : "", text);
out:
	free(text);
	return ret;
}

void recipe_disk_fmt_size(struct buf *b, const struct recipe_key *k, const void *base, int digest)
{
	const struct recipe_partition *p = base;

	if (p->grow)
		buf_adds(b, "\"grow\"");
	else if (p->size)
		buf_addf(b, "\"%llu\"", (unsigned long long)p->size);
	else
		buf_adds(b, "\"auto\"");
}

/* A directory of the tree, normalized to "boot/efi"; NULL when it is not one. */
static char *tree_dir(const char *s)
{
	struct buf b = { 0 };
	const char *p = s, *e;

	if (s[0] != '/')
		return NULL;
	while (*p) {
		while (*p == '/')
			p++;
		e = p + strcspn(p, "/");
		if (e == p)
			break;
		if ((e - p == 1 && p[0] == '.') || (e - p == 2 && !strncmp(p, "..", 2))) {
			buf_release(&b);
			return NULL;
		}
		buf_addf(&b, "%s%.*s", b.len ? "/" : "", (int)(e - p), p);
		p = e;
	}
	return b.p ? b.p : xstrdup("");
}

/*
 * contents: "root", "/boot/efi", "file:/usr/lib/u-boot/x/u-boot-sunxi-with-spl.bin" or
 * "verity:NAME" (partition NAME's hash tree; NAME is found once every partition is read).
 */
int recipe_disk_parse_contents(struct recipe_ctx *c, const config_setting_t *g,
			       const struct recipe_key *k, void *base)
{
	struct recipe_partition *p = base;
	const config_setting_t *s = recipe_member(g, "contents");
	char *text = NULL;
	int ret = recipe_get_str(c, g, "contents", &text);

	p->contents = PART_EMPTY;
	if (ret || !text)
		goto out;
	if (!strcmp(text, "root")) {
		p->contents = PART_ROOT;
	} else if (!strncmp(text, "file:", 5)) {
		p->contents = PART_FILE;
		p->path = tree_dir(text + 5);
	} else if (!strncmp(text, "verity:", 7)) {
		p->contents = PART_VERITY;
		if (!text[7])
			ret = recipe_fail(c, s, "contents = \"verity:NAME\" needs the name of the "
					  "partition whose hash tree it holds, such as "
					  "\"verity:root\"");
		else
			p->path = xstrdup(text + 7);
		goto out;
	} else {
		p->contents = PART_SUBTREE;
		p->path = tree_dir(text);
	}
	if (p->contents != PART_ROOT && (!p->path || !p->path[0]))
		ret = recipe_fail(c, s, "partition contents must be \"root\", a directory of the "
				  "tree such as \"/boot/efi\" or \"file:/PATH\", absolute and without "
				  "'.' or '..', not '%s'", text);
out:
	free(text);
	return ret;
}

/* Nothing is written as nothing: the normalized form reads back as the same recipe. */
int recipe_disk_shown_contents(const struct recipe_key *k, const void *base, int digest)
{
	return ((const struct recipe_partition *)base)->contents != PART_EMPTY;
}

void recipe_disk_fmt_contents(struct buf *b, const struct recipe_key *k, const void *base,
			      int digest)
{
	const struct recipe_partition *p = base;

	switch (p->contents) {
	case PART_ROOT: buf_adds(b, "\"root\""); break;
	case PART_SUBTREE: buf_addf(b, "\"/%s\"", p->path); break;
	case PART_FILE: buf_addf(b, "\"file:/%s\"", p->path); break;
	case PART_VERITY:
		buf_adds(b, "\"verity:");
		buf_add_escaped(b, p->path);
		buf_adds(b, "\"");
		break;
	default: buf_adds(b, "\"\""); break;
	}
}


/* format: given, or what the type and contents call for. Read after type and contents. */
int recipe_disk_parse_format(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base)
{
	struct recipe_partition *p = base;
	const struct part_type *t = find_type(p->type);
	struct buf names = { 0 };
	char *text = NULL;
	int ret = recipe_get_str(c, g, "format", &text);

	if (ret)
		return ret;
	if (!text) {
		p->format = p->contents == PART_FILE || p->contents == PART_VERITY ? PART_FS_NONE
			  : t ? t->fs : PART_FS_NONE;
		if (p->contents == PART_EMPTY && t && t->fs == PART_FS_EXT4)
			p->format = PART_FS_NONE; /* a slot: written by the update agent */
		if (p->format == PART_FS_NONE && (p->contents == PART_ROOT ||
						  p->contents == PART_SUBTREE))
			p->format = PART_FS_EXT4;
		return 0;
	}
	if (fstype_find(text, &p->format)) {
		fstype_list(&names, 1);
		ret = recipe_fail(c, recipe_member(g, "format"), "partition 'format' must be %s, "
				  "not '%s'", names.p, text);
	}
	buf_release(&names);
	free(text);
	return ret;
}

/* compression: read after format; a squashfs partition's only. */
int recipe_disk_check_compression(struct recipe_ctx *c, const config_setting_t *g,
				  const struct recipe_key *k, void *base)
{
	const struct recipe_partition *p = base;
	const config_setting_t *m = recipe_member(g, "compression");

	if (m && !fstype_get(p->format)->compressed)
		return recipe_fail(c, m, "partition '%s' has 'compression' but format \"%s\": it "
				   "applies to format = \"squashfs\" only (remove it or change the "
				   "format)", p->name ? p->name : "", fstype_get(p->format)->name);
	return 0;
}

void recipe_disk_fmt_format(struct buf *b, const struct recipe_key *k, const void *base,
			    int digest)
{
	buf_addf(b, "\"%s\"", fstype_get(((const struct recipe_partition *)base)->format)->name);
}

int recipe_disk_parse_output(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base)
{
	struct recipe_disk *d = base;
	char *out = NULL;
	int ret = recipe_get_str(c, g, "output", &out);

	if (!ret && out)
		d->output = recipe_resolve_output(c->r->dir, out);
	free(out);
	return ret;
}

int recipe_disk_shown(const struct recipe_key *k, const void *base, int digest)
{
	return ((const struct recipe *)base)->disk.set;
}

/* Where the disk is written is not what it is: left out of the digest. */
int recipe_disk_shown_output(const struct recipe_key *k, const void *base, int digest)
{
	return !digest && ((const struct recipe_disk *)base)->output;
}

/* ---- one partition ------------------------------------------------------------------------- */

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static int check_name(struct recipe_ctx *c, const config_setting_t *g, struct recipe_partition *p)
{
	const char *s;

	if (!p->name || !p->name[0])
		return recipe_fail(c, g, "a partition needs a 'name' (its GPT name, such as \"root\")");
	for (s = p->name; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return recipe_fail(c, recipe_member(g, "name"),
					   "partition name '%s' holds a control character", p->name);
	if (utf8_chars(p->name) > GPT_NAME_MAX)
		return recipe_fail(c, recipe_member(g, "name"), "partition name '%s' is longer than "
				   "GPT's %d characters", p->name, GPT_NAME_MAX);
	return 0;
}

static int check_label(struct recipe_ctx *c, const config_setting_t *g, struct recipe_partition *p)
{
	const struct fstype *fs = fstype_get(p->format);
	size_t max = fs->label_max;
	const char *s;

	if (fs->tree && !max && p->label)
		return recipe_fail(c, recipe_member(g, "label"), "partition '%s' is %s, which "
				   "has no label: remove 'label' (name it by its partition name or "
				   "PARTUUID)", p->name, fs->name);
	if (fs->tree && !max)
		return 0;

	if (!p->label && p->contents != PART_ROOT && fs->tree) {
		p->label = xstrdup(p->name);
		if (strlen(p->label) > max)
			p->label[max] = 0; /* a default is cut, a label given is checked */
	}
	if (!p->label)
		return 0;
	if (!fs->tree)
		return recipe_fail(c, recipe_member(g, "label"), "partition '%s' has no filesystem "
				   "to hold the label '%s'", p->name, p->label);
	if (strlen(p->label) > max)
		return recipe_fail(c, recipe_member(g, "label"), "label '%s' of partition '%s' is "
				   "%zu bytes; %s labels hold at most %zu", p->label, p->name,
				   strlen(p->label), fs->name, max);
	for (s = p->label; fs->label_bad && *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || strchr(fs->label_bad, *s))
			return recipe_fail(c, recipe_member(g, "label"), "label '%s' of partition "
					   "'%s' holds '%c', which a FAT label cannot", p->label,
					   p->name, *s);
	return 0;
}

static int check_contents(struct recipe_ctx *c, const config_setting_t *g,
			  const struct recipe_partition *p)
{
	const struct fstype *fs = fstype_get(p->format);
	const config_setting_t *s = recipe_member(g, "contents");
	struct buf names = { 0 };
	int ret;

	if (p->contents == PART_FILE && fs->tree)
		return recipe_fail(c, s, "partition '%s' holds a file written raw: it has no "
				   "filesystem (leave 'format' out or set \"none\")", p->name);
	if (p->contents == PART_VERITY && fs->tree)
		return recipe_fail(c, s, "partition '%s' holds a hash tree: it has no filesystem "
				   "(leave 'format' out or set \"none\")", p->name);
	if ((p->contents == PART_ROOT || p->contents == PART_SUBTREE) && !fs->tree) {
		fstype_list(&names, 0);
		ret = recipe_fail(c, s, "partition '%s' holds a tree: it needs a filesystem "
				  "(format = %s)", p->name, names.p);
		buf_release(&names);
		return ret;
	}
	if (p->contents == PART_ROOT && fs->tree && !fs->posix)
		return recipe_fail(c, recipe_member(g, "format"), "the root partition '%s' must be "
				   "ext4 or squashfs: FAT holds no owners, modes or symbolic links",
				   p->name);
	if (!strcmp(p->type, "swap") && p->contents != PART_EMPTY)
		return recipe_fail(c, s, "swap partition '%s' cannot hold contents", p->name);
	return 0;
}

static int check_placement(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_partition *p)
{
	const config_setting_t *o = recipe_member(g, "offset");

	if (p->offset % 512)
		return recipe_fail(c, o, "offset of partition '%s' is not a multiple of 512 bytes",
				   p->name);
	if (!p->table_entry) {
		if (!p->offset)
			return recipe_fail(c, g, "partition '%s' is outside the table (in_table = "
					   "false): it needs a fixed 'offset', such as \"8K\"", p->name);
		if (p->grow || p->legacy_boot || p->read_only)
			return recipe_fail(c, g, "partition '%s' is outside the table: it cannot "
					   "grow or carry table attributes", p->name);
		return 0;
	}
	if (p->offset % MIB)
		return recipe_fail(c, o, "offset of partition '%s' is not aligned to 1 MiB: "
				   "partitions in the table start on 1 MiB boundaries", p->name);
	if (p->size % MIB)
		return recipe_fail(c, recipe_member(g, "size"), "size of partition '%s' is not a "
				   "multiple of 1 MiB: partitions in the table are 1 MiB aligned",
				   p->name);
	if (p->min_size && (p->size || p->grow))
		return recipe_fail(c, recipe_member(g, "min_size"), "'min_size' of partition '%s' "
				   "applies only to size = \"auto\"", p->name);
	return 0;
}

int recipe_disk_finish_partition(struct recipe_ctx *c, const config_setting_t *g, void *base)
{
	struct recipe_partition *p = base;
	int ret = check_name(c, g, p);

	if (!ret)
		ret = check_contents(c, g, p);
	if (!ret)
		ret = check_label(c, g, p);
	if (!ret)
		ret = check_placement(c, g, p);
	if (!ret && c->r->disk.table == DISK_MBR && !p->mbr_type)
		ret = recipe_fail(c, recipe_member(g, "type"), "partition '%s': an MBR table needs a "
				  "type name or a system id such as \"0x83\", not a GUID", p->name);
	if (!ret && c->r->disk.table == DISK_MBR && p->read_only)
		ret = recipe_fail(c, recipe_member(g, "read_only"), "partition '%s': an MBR table "
				  "has no read-only attribute (use table = \"gpt\")", p->name);
	if (!ret && c->r->disk.table == DISK_GPT && !p->type_guid[0])
		ret = recipe_fail(c, recipe_member(g, "type"), "partition '%s': a GPT needs a type "
				  "name or a type GUID, not the MBR system id '%s'", p->name, p->type);
	return ret;
}

/* ---- the whole disk ------------------------------------------------------------------------ */

const config_setting_t *recipe_disk_part_setting(const config_setting_t *g,
						 const struct recipe_disk *d, size_t i)
{
	const config_setting_t *l = recipe_member(g, "partitions");

	if (i < d->n_board) /* a board's loader: the disk's setting stands for it */
		return g;
	return l ? config_setting_get_elem(l, (unsigned)(i - d->n_board)) : g;
}

/* Names and subtrees unique; one root; at most one grows, the last in the table. */
static int check_partition_set(struct recipe_ctx *c, const config_setting_t *g,
			       const struct recipe_disk *d)
{
	size_t i, j, roots = 0, entries = 0, last = 0;

	for (i = 0; i < d->n_partitions; i++) {
		const struct recipe_partition *p = &d->partitions[i];

		for (j = 0; j < i; j++) {
			const struct recipe_partition *q = &d->partitions[j];

			if (!strcmp(p->name, q->name))
				return recipe_fail(c, recipe_disk_part_setting(g, d, i), "partition name '%s' is "
						   "used twice (line %d)", p->name, q->line);
			if (p->contents == PART_SUBTREE && q->contents == PART_SUBTREE &&
			    !strcmp(p->path, q->path))
				return recipe_fail(c, recipe_disk_part_setting(g, d, i), "partitions '%s' and '%s' "
						   "both hold '/%s'", q->name, p->name, p->path);
		}
		roots += p->contents == PART_ROOT;
		if (p->table_entry) {
			entries++;
			last = i;
		}
	}
	if (roots != 1)
		return recipe_fail(c, g, "a disk needs exactly one partition with contents = "
				   "\"root\", not %zu", roots);
	if (d->table == DISK_MBR && entries > 4)
		return recipe_fail(c, g, "an MBR table holds 4 partitions, not %zu: use table = "
				   "\"gpt\"", entries);
	for (i = 0; i < d->n_partitions; i++) {
		if (!d->partitions[i].grow)
			continue;
		if (i != last)
			return recipe_fail(c, recipe_disk_part_setting(g, d, i), "only the last partition can have "
					   "size = \"grow\", not '%s'", d->partitions[i].name);
		if (!d->size)
			return recipe_fail(c, recipe_disk_part_setting(g, d, i), "partition '%s' grows to the disk's "
					   "size: give the disk a fixed 'size', such as \"4G\"",
					   d->partitions[i].name);
	}
	return 0;
}

/* Partitions placed by hand never overlap each other (the rest is checked with the sizes). */
static int check_fixed_overlaps(struct recipe_ctx *c, const config_setting_t *g,
				const struct recipe_disk *d)
{
	size_t i, j;

	for (i = 0; i < d->n_partitions; i++) {
		const struct recipe_partition *p = &d->partitions[i];

		if (!p->offset || !p->size)
			continue;
		if (d->size && p->offset + p->size > d->size)
			return recipe_fail(c, recipe_disk_part_setting(g, d, i), "partition '%s' ends past the "
					   "disk's size", p->name);
		for (j = 0; j < i; j++) {
			const struct recipe_partition *q = &d->partitions[j];

			if (q->offset && q->size && p->offset < q->offset + q->size &&
			    q->offset < p->offset + p->size)
				return recipe_fail(c, recipe_disk_part_setting(g, d, i), "partition '%s' overlaps "
						   "'%s' (line %d)", p->name, q->name, q->line);
		}
	}
	return 0;
}

/*
 * A verity partition names a partition before it (written first: the tree hashes its bytes), one
 * that cannot change under the tree: a read-only filesystem or raw bytes, hashed by one tree.
 */
static int check_verity_of(struct recipe_ctx *c, const config_setting_t *g,
			   struct recipe_disk *d, size_t i)
{
	struct recipe_partition *p = &d->partitions[i];
	const config_setting_t *s = recipe_member(recipe_disk_part_setting(g, d, i), "contents");
	const struct fstype *fs;
	size_t j, k;

	for (j = 0; j < d->n_partitions && strcmp(d->partitions[j].name, p->path); j++)
		;
	if (j == d->n_partitions)
		return recipe_fail(c, s, "partition '%s' holds the hash tree of '%s', which is "
				   "not a partition of the disk: name one in contents = "
				   "\"verity:NAME\"", p->name, p->path);
	if (d->partitions[j].contents == PART_VERITY)
		return recipe_fail(c, s, "partition '%s' holds the hash tree of '%s', which "
				   "holds a hash tree itself: name the data partition", p->name,
				   p->path);
	if (j > i)
		return recipe_fail(c, s, "partition '%s' holds the hash tree of '%s', which comes "
				   "after it (line %d): place the hash partition after its data "
				   "partition", p->name, p->path, d->partitions[j].line);
	fs = fstype_get(d->partitions[j].format);
	if (fs->tree && !fs->read_only)
		return recipe_fail(c, s, "partition '%s' holds the hash tree of '%s', which is %s: "
				   "verity needs a read-only filesystem: format = \"squashfs\"",
				   p->name, p->path, fs->name);
	if (d->partitions[j].contents == PART_EMPTY)
		return recipe_fail(c, s, "partition '%s' holds the hash tree of '%s', which is "
				   "empty: give it contents (\"file:/PATH\" or a squashfs tree)",
				   p->name, p->path);
	for (k = 0; k < i; k++)
		if (d->partitions[k].contents == PART_VERITY && d->partitions[k].verity_of == j)
			return recipe_fail(c, s, "partitions '%s' (line %d) and '%s' both hold the "
					   "hash tree of '%s': one is enough",
					   d->partitions[k].name, d->partitions[k].line, p->name,
					   p->path);
	p->verity_of = j;
	return 0;
}

static int check_verity(struct recipe_ctx *c, const config_setting_t *g, struct recipe_disk *d)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < d->n_partitions; i++)
		if (d->partitions[i].contents == PART_VERITY)
			ret = check_verity_of(c, g, d, i);
	return ret;
}

/* The EFI name of the primary architecture: BOOT<NAME>.EFI, systemd-boot<name>.efi. */
static const char *efi_arch(const char *arch)
{
	static const char *const map[][2] = {
		{ "amd64", "x64" }, { "i386", "ia32" }, { "arm64", "aa64" }, { "armhf", "arm" },
		{ "riscv64", "riscv64" }, { "loong64", "loongarch64" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(*map); i++)
		if (!strcmp(map[i][0], arch))
			return map[i][1];
	return NULL;
}

static int check_bootloader(struct recipe_ctx *c, const config_setting_t *g,
			    const struct recipe_disk *d)
{
	const config_setting_t *s = recipe_member(g, "bootloader");
	size_t i;

	if (d->bootloader != DISK_BOOT_SYSTEMD_BOOT)
		return 0;
	if (!efi_arch(c->r->arch))
		return recipe_fail(c, s, "systemd-boot has no EFI build for architecture '%s'",
				   c->r->arch);
	for (i = 0; i < d->n_partitions; i++)
		if (!strcmp(d->partitions[i].type, "esp") &&
		    d->partitions[i].contents == PART_SUBTREE)
			return 0;
	return recipe_fail(c, s, "bootloader = \"systemd-boot\" needs a partition of type \"esp\" "
			   "holding a directory of the tree, such as contents = \"/boot/efi\"");
}

/*
 * A verified root's boot entry carries its root hash, known once the root is written: the
 * partition holding the entry is written after the others, in a place settled before (a
 * partition of its own, with a fixed size).
 */
static int check_verified_boot(struct recipe_ctx *c, const config_setting_t *g,
			       const struct recipe_disk *d)
{
	const struct recipe_partition *p = NULL;
	const char *what = d->bootloader == DISK_BOOT_EXTLINUX ? "/boot (extlinux.conf)" : "the ESP";
	size_t i;

	if (d->bootloader == DISK_BOOT_NONE || recipe_disk_root_verity(c->r) < 0)
		return 0;
	for (i = 0; i < d->n_partitions; i++)
		if (d->partitions[i].contents == PART_SUBTREE &&
		    (d->bootloader == DISK_BOOT_EXTLINUX ? !strcmp(d->partitions[i].path, "boot")
							  : !strcmp(d->partitions[i].type, "esp")))
			p = &d->partitions[i];
	if (!p)
		return recipe_fail(c, recipe_member(g, "bootloader"), "the root is verified by "
				   "dm-verity, and its boot entry carries the root hash: %s must be a "
				   "partition of its own, such as { name = \"boot\"; type = \"linux\"; "
				   "size = \"256M\"; contents = \"/boot\"; }", what);
	if (!p->size)
		return recipe_fail(c, g, "partition '%s' holds the boot entry of a root verified by "
				   "dm-verity and is written after the root (the entry carries the "
				   "root hash): give it a fixed 'size', such as \"256M\"", p->name);
	return 0;
}

/*
 * The image section describes the root partition's filesystem: image.format is its format, or
 * "ext4" (the default) when the partition says squashfs.
 */
static int check_image_format(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_disk *d)
{
	const char *f = c->r->image.format;
	size_t i;

	for (i = 0; i < d->n_partitions; i++)
		if (d->partitions[i].contents == PART_ROOT &&
		    d->partitions[i].format == PART_FS_SQUASHFS)
			return !strcmp(f, "ext4") || !strcmp(f, "squashfs") ? 0 :
			       recipe_fail(c, g, "the disk's root partition is squashfs: image.format "
					   "must be \"squashfs\", not '%s'", f);
	if (strcmp(f, "ext4"))
		return recipe_fail(c, g, "a disk's root partition is ext4 unless its 'format' says "
				   "\"squashfs\": image.format must be \"ext4\", not '%s'", f);
	return 0;
}


int recipe_disk_finish(struct recipe_ctx *c, const config_setting_t *g, void *base)
{
	struct recipe_disk *d = base;
	int ret;

	d->set = g != NULL;
	if (!d->set)
		return 0;
	if (!d->n_partitions)
		return recipe_fail(c, g, "'disk' needs 'partitions': ( { name = \"root\"; type = "
				   "\"root\"; contents = \"root\"; } )");
	ret = check_image_format(c, g, d);
	if (!ret)
		ret = recipe_board_apply(c, g, d);
	if (ret)
		return ret;
	if (d->size % MIB)
		return recipe_fail(c, recipe_member(g, "size"), "the disk's 'size' must be a "
				   "multiple of 1 MiB");
	ret = check_partition_set(c, g, d);
	if (!ret)
		ret = check_fixed_overlaps(c, g, d);
	if (!ret)
		ret = check_verity(c, g, d);
	if (!ret)
		ret = check_bootloader(c, g, d);
	if (!ret)
		ret = check_verified_boot(c, g, d);
	return ret;
}

const char *recipe_disk_efi_arch(const char *arch)
{
	return efi_arch(arch);
}

int recipe_disk_root_verity(const struct recipe *r)
{
	const struct recipe_disk *d = &r->disk;
	size_t i;

	for (i = 0; d->set && i < d->n_partitions; i++)
		if (d->partitions[i].contents == PART_VERITY &&
		    d->partitions[d->partitions[i].verity_of].contents == PART_ROOT)
			return (int)i;
	return -1;
}
