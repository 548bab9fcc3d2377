/*
 * Board profiles (board.c): what a board's boot ROM and boot loader ask of the disk, one row a
 * board. A recipe's `board = "NAME";` takes its disk's defaults from the row and is held to its
 * rules (recipe_disk.c): where each boot loader image sits and how large it may be, which
 * partition tables the ROM reads past, the serial console, the device tree U-Boot hands the
 * kernel, how the disk's size is rounded, or the FAT partition a firmware reads its files from.
 * Adding a board is a row here and a test (builder/README.md, "Board profiles").
 */
#ifndef MKI_BOARD_H
#define MKI_BOARD_H

#include <stdint.h>

#include "lib/buf.h"

#define BOARD_LOADERS 2

/* A boot loader image written raw outside the table (a partition with in_table = false). */
struct board_loader {
	const char *name;   /* the partition's name: "spl", "idbloader", "u-boot" */
	const char *path;   /* the file in the tree, relative: "usr/lib/u-boot/B/u-boot.img" */
	uint64_t offset;    /* the byte the ROM (or the loader before it) reads it from */
	uint64_t slot;      /* the bytes it may take, up to whatever reads the disk next */
};

#define BOARD_FAT_FILES 10

/*
 * A firmware that reads its files from the first partition, a FAT one, which a package of the
 * plan fills from its kernel hooks into a directory of the tree (raspi-firmware's
 * /boot/firmware); no loader is written outside the table.
 */
struct board_fat {
	const char *dir;      /* the tree's directory the partition holds: "boot/firmware" */
	const char *files[BOARD_FAT_FILES]; /* what the firmware reads there; a NULL ends them */
	const char *config;   /* the firmware's configuration there, naming the kernel and initrd */
	const char *cmdline;  /* the kernel's command line there, root= and console= set */
	const char *defaults; /* the package's settings, whose hooks write the two: ROOTPART,
				 CONSOLES (sh assignments) set to the same */
	const char *extra;    /* the file of the parameters the hooks add to the command line */
};

enum board_size_round {
	BOARD_ROUND_MIB,  /* the disk's size a multiple of 1 MiB, as every disk */
	BOARD_ROUND_POW2, /* a power of two (QEMU's SD card model refuses any other size) */
};

/* The tables, numbered as recipe.h's enum disk_table (recipe_board.c holds them equal). */
enum board_table { BOARD_TABLE_GPT, BOARD_TABLE_MBR };
/* Which tables the ROM reads past, a bit each; `table` in struct board is the default. */
#define BOARD_GPT (1u << BOARD_TABLE_GPT)
#define BOARD_MBR (1u << BOARD_TABLE_MBR)

struct board {
	const char *name;     /* board = "NAME" */
	const char *soc;      /* the SoC family, as messages name it */
	const char *arch;     /* the Debian architecture the loader package and kernel are built for */
	const char *package;  /* the package shipping the loaders; NULL: none */
	struct board_loader loaders[BOARD_LOADERS]; /* in disk order; a NULL name ends them */
	unsigned tables;      /* BOARD_GPT | BOARD_MBR: the tables the ROM and loader accept */
	enum board_table table; /* the default */
	const char *console;  /* the serial console's device: "ttyS0" */
	const char *baud;     /* its speed: "115200" */
	const char *fdt;      /* the kernel's device tree (U_BOOT_FDT); NULL: U-Boot's own */
	enum board_size_round round;
	const char *rule;     /* the ROM's rule, quoted by the errors that hold a recipe to it */
	const char *not_yet;  /* NULL: supported; else what is missing, for the error */
	struct board_fat fat; /* a NULL dir: none */
};

/** The profile of board `name`, or NULL. */
const struct board *board_get(const char *name);
/** The board whose name is closest to `name` (a typo's), or NULL when none is close. */
const char *board_suggest(const char *name);
/** The boards' names as messages list them ("\"a\", \"b\" or \"c\"") appended to `out`. */
void board_list(struct buf *out);
/** The number of rows, and row `i` (for the manual's list and the tests). */
size_t board_count(void);
const struct board *board_at(size_t i);
/** `size` rounded up as `round` asks: a multiple of 1 MiB, or the next power of two. */
uint64_t board_round_size(enum board_size_round round, uint64_t size);

#endif
