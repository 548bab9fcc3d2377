/*
 * A recipe's board (board.h) on its disk section: the board's loaders as partitions outside the
 * table, in their slots, its table, console and size rounding as the disk's defaults, a
 * firmware's FAT partition first, and every
 * contradiction an error that quotes the board's rule, found before anything is downloaded.
 */
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "lib/err.h"
#include "recipe_parse.h"

#define MIB (1024 * 1024ull)

/* board.h's tables are enum disk_table's: one bit each in struct board's `tables`. */
_Static_assert((int)BOARD_TABLE_GPT == (int)DISK_GPT && (int)BOARD_TABLE_MBR == (int)DISK_MBR,
	       "board tables");

static const char *table_name(int table)
{
	return table == DISK_MBR ? "mbr" : "gpt";
}

/* board = "NAME": a known, supported board of the recipe's architecture, with a disk. */
int recipe_board_check(struct recipe_ctx *c, const config_setting_t *g,
			    const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, "board");
	const struct board *b;
	struct buf names = { 0 };
	const char *hint;
	int ret;

	if (!c->r->board)
		return 0;
	b = board_get(c->r->board);
	if (!b) {
		hint = board_suggest(c->r->board);
		if (hint)
			return recipe_fail(c, s, "unknown board '%s' (did you mean '%s'?)",
					   c->r->board, hint);
		board_list(&names);
		ret = recipe_fail(c, s, "unknown board '%s': the boards are %s", c->r->board,
				  names.p);
		buf_release(&names);
		return ret;
	}
	if (b->not_yet)
		return recipe_fail(c, s, "board '%s' (%s) is not yet supported: %s; %s",
				   b->name, b->soc, b->rule, b->not_yet);
	if (strcmp(c->r->arch, b->arch))
		return recipe_fail(c, s, "board '%s' (%s) runs %s, whose boot loader '%s' is "
				   "built for it: set architecture = \"%s\", not '%s'", b->name,
				   b->soc, b->arch, b->package, b->arch, c->r->arch);
	if (!recipe_member(g, "disk"))
		return recipe_fail(c, s, "board '%s' describes the disk its boot ROM reads: add a "
				   "disk section, such as disk = { partitions = ( { name = \"root\"; "
				   "type = \"root\"; contents = \"root\"; legacy_boot = true; } ); };",
				   b->name);
	return 0;
}

/* disk.table: the board's by default; one its ROM does not read past is refused. */
int recipe_board_check_table(struct recipe_ctx *c, const config_setting_t *g,
			    const struct recipe_key *k, void *base)
{
	const struct board *b = board_get(c->r->board);
	struct recipe_disk *d = base;

	if (!b)
		return 0;
	if (!recipe_member(g, "table")) {
		d->table = b->table;
		return 0;
	}
	if (b->tables & (1u << d->table))
		return 0;
	return recipe_fail(c, recipe_member(g, "table"), "board '%s' needs table = \"%s\", not "
			   "\"%s\": %s", b->name, table_name(b->table), table_name(d->table),
			   b->rule);
}

static void set_loader(struct recipe_partition *p, const struct board_loader *l, int line)
{
	memset(p, 0, sizeof(*p));
	p->name = xstrdup(l->name);
	recipe_disk_set_type(p, "raw");
	p->size = l->slot;
	p->offset = l->offset;
	p->contents = PART_FILE;
	p->path = xstrdup(l->path);
	p->format = PART_FS_NONE;
	p->line = line;
}

/* A partition the recipe names as the board's loader must be that loader, in its slot. */
static int check_own_loader(struct recipe_ctx *c, const config_setting_t *g, const struct board *b,
			    const struct board_loader *l, struct recipe_partition *p)
{
	if (p->table_entry || p->contents != PART_FILE || strcmp(p->path, l->path) ||
	    p->offset != l->offset || (p->size && p->size != l->slot))
		return recipe_fail(c, g, "partition '%s' is the boot loader slot of board '%s': "
				   "file:/%s at byte %llu, %llu bytes, outside the table (%s); "
				   "remove the partition, the board writes it", p->name, b->name,
				   l->path, (unsigned long long)l->offset,
				   (unsigned long long)l->slot, b->rule);
	p->size = l->slot;
	return 0;
}

/* The recipe's own partitions stay out of the loaders' slots. */
static int check_slots(struct recipe_ctx *c, const config_setting_t *g, const struct board *b,
		       const struct recipe_disk *d)
{
	const struct board_loader *l;
	size_t i;

	for (i = 0; i < d->n_partitions; i++) {
		const struct recipe_partition *p = &d->partitions[i];

		for (l = b->loaders; l < b->loaders + BOARD_LOADERS && l->name; l++) {
			if (!strcmp(p->name, l->name) || !p->offset)
				continue;
			if (p->offset < l->offset + l->slot &&
			    (p->offset + (p->size ? p->size : 1) > l->offset))
				return recipe_fail(c, recipe_disk_part_setting(g, d, i), "partition '%s' at byte "
						   "%llu lies in the slot of %s on board '%s' (bytes "
						   "%llu to %llu): %s", p->name,
						   (unsigned long long)p->offset, l->name, b->name,
						   (unsigned long long)l->offset,
						   (unsigned long long)(l->offset + l->slot), b->rule);
		}
	}
	return 0;
}

/* A GPT's entry array, 128 bytes an entry after the first 1024 bytes, ends before the loader. */
static int check_gpt_room(struct recipe_ctx *c, const config_setting_t *g, const struct board *b,
			  const struct recipe_disk *d)
{
	uint64_t first = b->loaders[0].name ? b->loaders[0].offset : 0;
	size_t i, entries = 0;

	if (d->table != DISK_GPT || !first)
		return 0;
	for (i = 0; i < d->n_partitions; i++)
		entries += d->partitions[i].table_entry;
	if (first < 1024 || (first - 1024) / 128 >= entries)
		return 0;
	return recipe_fail(c, recipe_member(g, "table"), "board '%s': a GPT's entries for %zu "
			   "partitions would overlap the %s at byte %llu (%s): use table = \"mbr\" "
			   "or fewer partitions", b->name, entries, b->loaders[0].name,
			   (unsigned long long)first, b->rule);
}

static int board_console(struct recipe_ctx *c, const config_setting_t *g, const struct board *b,
			 struct recipe_disk *d)
{
	size_t n = strlen(b->console);

	if (!d->console) {
		d->console = xasprintf("%s,%s", b->console, b->baud);
		return 0;
	}
	if (!strncmp(d->console, b->console, n) && (!d->console[n] || d->console[n] == ','))
		return 0;
	return recipe_fail(c, recipe_member(g, "console"), "board '%s' (%s) has its serial "
			   "console on %s, not '%s': set console = \"%s,%s\" or leave it out",
			   b->name, b->soc, b->console, d->console, b->console, b->baud);
}

/* A fixed size the board's rounding keeps; "auto" is rounded by the disk writer. */
static int board_size(struct recipe_ctx *c, const config_setting_t *g, const struct board *b,
		      struct recipe_disk *d)
{
	uint64_t want = board_round_size(b->round, d->size);

	d->size_round = b->round;
	if (b->round != BOARD_ROUND_POW2 || !d->size || want == d->size)
		return 0;
	return recipe_fail(c, recipe_member(g, "size"), "board '%s': the disk's size must be a "
			   "power of two, such as \"%lluM\" (%s)", b->name,
			   (unsigned long long)(want / MIB), b->rule);
}

/* The loaders the recipe does not name, put in front of its partitions (`add` of them). */
static void prepend_loaders(const config_setting_t *g, const struct board *b,
			    struct recipe_disk *d, size_t add)
{
	const config_setting_t *bs = recipe_member(config_setting_parent(g), "board");
	const struct board_loader *l;
	size_t i = 0, j;

	d->partitions = xrealloc(d->partitions, (d->n_partitions + add) * sizeof(*d->partitions));
	memmove(d->partitions + add, d->partitions, d->n_partitions * sizeof(*d->partitions));
	d->n_partitions += add;
	d->n_board = add;
	for (l = b->loaders; l < b->loaders + BOARD_LOADERS && l->name; l++) {
		for (j = add; j < d->n_partitions && strcmp(d->partitions[j].name, l->name); j++)
			;
		if (j == d->n_partitions)
			set_loader(&d->partitions[i++], l, bs ? config_setting_source_line(bs) : 0);
	}
}

/* A FAT partition's MBR types: FAT16 (LBA) 0x0e and FAT32 0x0b, 0x0c (LBA). */
static int fat_type(unsigned t)
{
	return t == 0x0b || t == 0x0c || t == 0x0e;
}

/* The first partition of the table, or NULL. */
static const struct recipe_partition *first_in_table(const struct recipe_disk *d, size_t *at)
{
	for (*at = 0; *at < d->n_partitions; (*at)++)
		if (d->partitions[*at].table_entry)
			return &d->partitions[*at];
	return NULL;
}

/*
 * A firmware reading a FAT partition (board.h, struct board_fat): that partition first, holding
 * the directory its package fills; the firmware boots the kernel, with the command line the
 * package's hooks write, so no boot loader, no disk.cmdline and a root they can name.
 */
static int check_fat(struct recipe_ctx *c, const config_setting_t *g, const struct board *b,
		     struct recipe_disk *d)
{
	const struct recipe_partition *p;
	size_t i;

	if (!b->fat.dir)
		return 0;
	p = first_in_table(d, &i);
	if (!p || p->contents != PART_SUBTREE || strcmp(p->path, b->fat.dir) ||
	    p->format != PART_FS_VFAT || !fat_type(p->mbr_type))
		return recipe_fail(c, p ? recipe_disk_part_setting(g, d, i) : g, "board '%s' "
				   "needs its first partition FAT, holding /%s: make it { name = "
				   "\"firmware\"; type = \"0x0c\"; contents = \"/%s\"; format = "
				   "\"vfat\"; size = \"256M\"; } (%s)", b->name, b->fat.dir,
				   b->fat.dir, b->rule);
	if (d->bootloader != DISK_BOOT_NONE)
		return recipe_fail(c, recipe_member(g, "bootloader"), "board '%s': its firmware "
				   "boots the kernel, with no boot loader: remove 'bootloader' (%s)",
				   b->name, b->rule);
	if (recipe_member(g, "cmdline"))
		return recipe_fail(c, recipe_member(g, "cmdline"), "board '%s': /%s/%s is written "
				   "by %s's hooks, which add the parameters of /%s: put them there "
				   "(an overlay), not in disk.cmdline", b->name, b->fat.dir,
				   b->fat.cmdline, b->package, b->fat.extra);
	for (i = 0; i < d->n_partitions; i++)
		if (d->partitions[i].contents == PART_VERITY)
			return recipe_fail(c, recipe_disk_part_setting(g, d, i), "board '%s' does "
					   "not support a verified root yet: %s's cmdline.txt names "
					   "the root partition itself", b->name, b->package);
	free(d->cmdline); /* its default: unused, and the normalized recipe leaves it out */
	d->cmdline = NULL;
	return 0;
}

/* The board's defaults and rules on the disk: its loaders first, in their slots. */
int recipe_board_apply(struct recipe_ctx *c, const config_setting_t *g, struct recipe_disk *d)
{
	const struct board *b = board_get(c->r->board);
	const struct board_loader *l;
	size_t i, add = 0;
	int ret;

	if (!b)
		return 0;
	ret = board_console(c, g, b, d);
	if (!ret)
		ret = board_size(c, g, b, d);
	for (l = b->loaders; !ret && l < b->loaders + BOARD_LOADERS && l->name; l++) {
		for (i = 0; i < d->n_partitions && strcmp(d->partitions[i].name, l->name); i++)
			;
		if (i < d->n_partitions)
			ret = check_own_loader(c, recipe_disk_part_setting(g, d, i), b, l,
					       &d->partitions[i]);
		else
			add++;
	}
	if (!ret)
		ret = check_slots(c, g, b, d);
	if (!ret)
		ret = check_fat(c, g, b, d);
	if (ret)
		return ret;
	if (add)
		prepend_loaders(g, b, d, add);
	return check_gpt_room(c, g, b, d);
}
