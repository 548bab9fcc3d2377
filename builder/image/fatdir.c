/* FAT directory entries: long and short names, the 32-byte entries, timestamps. */
#include "fatdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fatfs.h"
#include "lib/str.h"

#define FAT_EPOCH_MIN 315532800LL  /* 1980-01-01 00:00:00 UTC */
#define FAT_EPOCH_MAX 4354819199LL /* 2107-12-31 23:59:59 UTC */
#define LFN_UNITS 13
#define TAIL_MAX 999999u

/* One code point from `*s`, advancing it; -1 for bytes that are not UTF-8 (strictly). */
static long utf8_next(const unsigned char **s)
{
	const unsigned char *p = *s;
	long c = p[0], min;
	int n, i;

	if (c < 0x80) {
		*s = p + 1;
		return c;
	}
	if ((c & 0xe0) == 0xc0)
		n = 1, c &= 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		n = 2, c &= 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		n = 3, c &= 0x07, min = 0x10000;
	else
		return -1;
	for (i = 1; i <= n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*s = p + n + 1;
	return c;
}

static int forbidden(long c)
{
	return c < 0x20 || c == 0x7f || (c < 0x80 && strchr("\"*/:<>?\\|", (int)c));
}

int fatdir_decode(const char *name, uint16_t *u16, size_t *len)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n = 0;
	long c = 0;

	while (*s) {
		c = utf8_next(&s);
		if (c < 0)
			return -EILSEQ;
		if (forbidden(c))
			return -EINVAL;
		if (n + (c > 0xffff ? 2 : 1) > FATDIR_NAME_MAX)
			return -ENAMETOOLONG;
		if (c > 0xffff) {
			u16[n++] = (uint16_t)(0xd800 + ((c - 0x10000) >> 10));
			u16[n++] = (uint16_t)(0xdc00 + ((c - 0x10000) & 0x3ff));
		} else {
			u16[n++] = (uint16_t)c;
		}
	}
	if (!n || c == '.' || c == ' ')
		return -EINVAL;
	*len = n;
	return 0;
}

const char *fatdir_decode_error(int err)
{
	switch (err) {
	case -EILSEQ: return "bytes that are not UTF-8";
	case -ENAMETOOLONG: return "more than 255 UTF-16 units";
	default: return "a character FAT cannot hold (control, \"*/:<>?\\|) or ends in a dot "
			"or a space";
	}
}

/* Characters a short name may hold as they are (upper-case ASCII, digits, some punctuation). */
static int short_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c > 0x20 && c < 0x7f && strchr("!#$%&'()-@^_`{}~", c));
}

int fatdir_short_name(const char *name, uint8_t out[11])
{
	const char *dot = strchr(name, '.');
	size_t base = dot ? (size_t)(dot - name) : strlen(name), ext = dot ? strlen(dot + 1) : 0;
	size_t i;

	if (!base || base > 8 || (dot && (!ext || ext > 3)))
		return 0;
	for (i = 0; i < base; i++)
		if (!short_char((unsigned char)name[i]))
			return 0;
	for (i = 0; i < ext; i++)
		if (!short_char((unsigned char)dot[1 + i]))
			return 0;
	memset(out, ' ', 11);
	memcpy(out, name, base);
	if (dot)
		memcpy(out + 8, dot + 1, ext);
	return 1;
}

/*
 * Map [s, end) into `out` (at most `room` characters): upper-cased, spaces and dots dropped,
 * anything a short name cannot hold as '_'. Returns the count; `*lossy` is set when anything
 * was more than upper-cased.
 */
static size_t map_part(const char *s, const char *end, uint8_t *out, size_t room, int *lossy)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	long c;

	while (p < (const unsigned char *)end) {
		c = utf8_next(&p);
		if (c < 0)
			break; /* fatdir_decode accepted the name, so this cannot happen */
		if (c == ' ' || c == '.') {
			*lossy = 1;
			continue;
		}
		if (c >= 'a' && c <= 'z')
			c -= 'a' - 'A';
		if (!short_char((int)c) || c >= 0x80) {
			c = '_';
			*lossy = 1;
		}
		if (n == room) {
			*lossy = 1;
			break;
		}
		out[n++] = (uint8_t)c;
	}
	return n;
}

/* The basis name: Windows' rules (leading dots and spaces dropped, the last dot the extension). */
static int basis(const char *name, uint8_t out[11])
{
	const char *s = name, *dot;
	int lossy = 0;

	while (*s == '.' || *s == ' ')
		s++;
	lossy = s != name;
	dot = strrchr(s, '.');
	memset(out, ' ', 11);
	map_part(s, dot ? dot : s + strlen(s), out, 8, &lossy);
	if (dot)
		map_part(dot + 1, dot + strlen(dot), out + 8, 3, &lossy);
	return lossy;
}

static void with_tail(const uint8_t base[11], unsigned n, uint8_t out[11])
{
	char tail[16];
	size_t len = (size_t)snprintf(tail, sizeof(tail), "~%u", n), keep = 0;

	while (keep < 8 - len && base[keep] != ' ')
		keep++;
	memcpy(out, base, 11);
	memset(out + keep, ' ', 8 - keep);
	memcpy(out + keep, tail, len);
}

int fatdir_lossless(const char *name, uint8_t out[11])
{
	return !basis(name, out);
}

int fatdir_generate(const char *name, struct fatdir_set *used, uint8_t out[11])
{
	uint8_t b[11];
	unsigned n;

	if (fatdir_lossless(name, b) && fatdir_set_add(used, b)) {
		memcpy(out, b, 11);
		return 0;
	}
	n = used->next && !memcmp(used->last, b, 11) ? used->next : 1;
	for (; n <= TAIL_MAX; n++) {
		with_tail(b, n, out);
		if (fatdir_set_add(used, out)) {
			memcpy(used->last, b, 11);
			used->next = n + 1;
			return 0;
		}
	}
	return -EEXIST;
}

uint16_t fatdir_fold(uint16_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 0xe0 && c <= 0xfe && c != 0xf7) ||
	    (c >= 0x3b1 && c <= 0x3c9 && c != 0x3c2) || (c >= 0x430 && c <= 0x44f))
		return c - 0x20;
	if (c == 0xff)
		return 0x178;
	if (c >= 0x450 && c <= 0x45f)
		return c - 0x50;
	if (((c >= 0x100 && c <= 0x137) || (c >= 0x14a && c <= 0x177)) && (c & 1))
		return c - 1;
	if (((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e)) && !(c & 1))
		return c - 1;
	return c;
}

uint8_t fatdir_checksum(const uint8_t name[11])
{
	uint8_t sum = 0;
	int i;

	for (i = 0; i < 11; i++)
		sum = (uint8_t)(((sum & 1) << 7) + (sum >> 1) + name[i]);
	return sum;
}

size_t fatdir_slots(size_t llen)
{
	return (llen + LFN_UNITS - 1) / LFN_UNITS + 1;
}

/* Long-name entry `ord` (1-based) of `count`: 13 units, the terminator, then 0xffff padding. */
static void encode_lfn(uint8_t *out, const struct fatdir_entry *e, size_t ord, size_t count)
{
	static const uint8_t at[LFN_UNITS] = { 1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30 };
	size_t j, u;

	memset(out, 0, FATDIR_ENTRY);
	out[0] = (uint8_t)(ord | (ord == count ? 0x40 : 0));
	out[11] = 0x0f;
	out[13] = fatdir_checksum(e->name);
	for (j = 0; j < LFN_UNITS; j++) {
		u = (ord - 1) * LFN_UNITS + j;
		fatfs_put16(out + at[j], u < e->llen ? e->lname[u] : u == e->llen ? 0 : 0xffff);
	}
}

size_t fatdir_encode(uint8_t *out, const struct fatdir_entry *e)
{
	size_t count = e->lname ? fatdir_slots(e->llen) - 1 : 0, k;
	uint16_t date, time;
	uint8_t hundredths;

	for (k = count; k >= 1; k--)
		encode_lfn(out + (count - k) * FATDIR_ENTRY, e, k, count);
	out += count * FATDIR_ENTRY;
	memset(out, 0, FATDIR_ENTRY);
	memcpy(out, e->name, 11);
	out[11] = e->attr;
	fatdir_time(e->mtime, &date, &time, &hundredths);
	out[13] = hundredths;
	fatfs_put16(out + 14, time);
	fatfs_put16(out + 16, date);
	fatfs_put16(out + 18, date);
	fatfs_put16(out + 20, e->cluster >> 16);
	fatfs_put16(out + 22, time);
	fatfs_put16(out + 24, date);
	fatfs_put16(out + 26, e->cluster & 0xffff);
	fatfs_put32(out + 28, e->size);
	return count + 1;
}

void fatdir_time(int64_t t, uint16_t *date, uint16_t *time, uint8_t *hundredths)
{
	time_t tt = (time_t)(t < FAT_EPOCH_MIN ? FAT_EPOCH_MIN : t > FAT_EPOCH_MAX ? FAT_EPOCH_MAX : t);
	struct tm tm;

	gmtime_r(&tt, &tm);
	*date = (uint16_t)(((tm.tm_year - 80) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday);
	*time = (uint16_t)((tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2));
	*hundredths = (uint8_t)((tm.tm_sec % 2) * 100);
}

/* --- the set of short names: open addressing over 11-byte keys ----------------------------- */

static size_t slot_of(const struct fatdir_set *s, const uint8_t name[11])
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < 11; i++)
		h = (h ^ name[i]) * 16777619u;
	for (i = h & (s->cap - 1); s->v[i][0] && memcmp(s->v[i], name, 11); i = (i + 1) & (s->cap - 1))
		;
	return i;
}

void fatdir_set_init(struct fatdir_set *s, size_t expected)
{
	memset(s, 0, sizeof(*s));
	s->cap = 16;
	while (s->cap < expected * 2 + 2)
		s->cap *= 2;
	s->v = xcalloc(s->cap, sizeof(*s->v));
}

static void grow(struct fatdir_set *s)
{
	struct fatdir_set bigger;
	size_t i;

	fatdir_set_init(&bigger, s->cap);
	for (i = 0; i < s->cap; i++)
		if (s->v[i][0])
			fatdir_set_add(&bigger, s->v[i]);
	memcpy(bigger.last, s->last, 11);
	bigger.next = s->next;
	fatdir_set_release(s);
	*s = bigger;
}

int fatdir_set_add(struct fatdir_set *s, const uint8_t name[11])
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap)
		grow(s);
	i = slot_of(s, name);
	if (s->v[i][0])
		return 0;
	memcpy(s->v[i], name, 11);
	s->n++;
	return 1;
}

int fatdir_set_has(const struct fatdir_set *s, const uint8_t name[11])
{
	return s->v[slot_of(s, name)][0] != 0;
}

void fatdir_set_release(struct fatdir_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
