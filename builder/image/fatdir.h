/*
 * FAT directory entries: names as FAT holds them (UTF-16 long names, 8.3 short names generated
 * without collisions), case folding, the on-disk 32-byte entries and FAT's timestamps. Pure data
 * in, bytes out: nothing here reads the tree or writes the image.
 */
#ifndef MKI_FATDIR_H
#define MKI_FATDIR_H

#include <stddef.h>
#include <stdint.h>

#define FATDIR_ENTRY 32
#define FATDIR_NAME_MAX 255      /* UTF-16 units of a long name */
#define FATDIR_ATTR_VOLUME 0x08
#define FATDIR_ATTR_DIR 0x10
#define FATDIR_ATTR_ARCHIVE 0x20

/** One name in a directory, as fatdir_encode writes it. */
struct fatdir_entry {
	uint8_t name[11];      /* the short name, space-padded, no dot */
	const uint16_t *lname; /* the long name, or NULL when the short name says it all */
	size_t llen;           /* UTF-16 units of lname */
	uint8_t attr;
	uint32_t cluster;      /* first cluster, 0 for an empty file */
	uint32_t size;         /* files: bytes; directories: 0 */
	int64_t mtime;         /* seconds since the epoch, UTC; clamped to FAT's range */
};

/** A set of short names (one directory's), for collision-free generation. */
struct fatdir_set {
	uint8_t (*v)[11];
	size_t cap, n;
	uint8_t last[11]; /* the basis fatdir_generate last tailed, and its next N to try */
	unsigned next;
};

/**
 * Decode the UTF-8 name `name` into `u16` (room for FATDIR_NAME_MAX units), setting `*len`.
 * Returns 0, -EILSEQ (not UTF-8), -EINVAL (a character FAT cannot hold: control, "*\/:<>?\|,
 * or a trailing dot or space) or -ENAMETOOLONG (over 255 units). Not logged.
 */
int fatdir_decode(const char *name, uint16_t *u16, size_t *len);
/** The reason fatdir_decode returned `err`, for a message ("holds ..."). */
const char *fatdir_decode_error(int err);
/** 1 and `out` set when `name` is a valid upper-case 8.3 name (it needs no long name), else 0. */
int fatdir_short_name(const char *name, uint8_t out[11]);
/**
 * 1 and `out` set when `name` becomes a short name by upper-casing alone ("readme.txt"): a
 * lookup of `name` matches that short name, so no other entry of its directory may have it.
 */
int fatdir_lossless(const char *name, uint8_t out[11]);
/**
 * The short name of a name that needs a long one, unique in `used` (and added to it): the
 * name itself upper-cased when only its case changes and it is free, else NAME~N.EXT with the
 * smallest free N (names in a row sharing a basis go on from the last N instead of searching
 * from 1 again). Returns 0 or -EEXIST when every N up to 999999 is taken.
 */
int fatdir_generate(const char *name, struct fatdir_set *used, uint8_t out[11]);
/** A UTF-16 unit folded to upper case (ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic). */
uint16_t fatdir_fold(uint16_t c);
/** The checksum of a short name that ties long-name entries to it. */
uint8_t fatdir_checksum(const uint8_t name[11]);
/** 32-byte entries a name takes: its long-name entries plus the short one. */
size_t fatdir_slots(size_t llen);
/** Write `e`'s entries (fatdir_slots of them) at `out`; returns the number written. */
size_t fatdir_encode(uint8_t *out, const struct fatdir_entry *e);
/** FAT's date and time (2-second units) and the extra hundredths for `t`, clamped 1980..2107. */
void fatdir_time(int64_t t, uint16_t *date, uint16_t *time, uint8_t *hundredths);

void fatdir_set_init(struct fatdir_set *s, size_t expected);
/** 1 when `name` was added, 0 when it was already there. */
int fatdir_set_add(struct fatdir_set *s, const uint8_t name[11]);
int fatdir_set_has(const struct fatdir_set *s, const uint8_t name[11]);
void fatdir_set_release(struct fatdir_set *s);

#endif
