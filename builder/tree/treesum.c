#include "treesum.h"

#include <stdlib.h>
#include <string.h>

#include "lib/str.h"
#include "lib/x.h"

#define TREESUM_DEPTH 3        /* components a group keeps: "usr/share/doc" */
#define TREESUM_GROUPS 4096    /* groups of TREESUM_DEPTH; then coarser ones */
#define TREESUM_COARSE 256     /* more groups of one component, then the root takes the rest */
#define TREESUM_SLOTS 8192     /* a power of two above both together */

void treesum_init(struct treesum *t, const struct limits *l)
{
	memset(t, 0, sizeof(*t));
	t->max_entries = runlimits_get(l, LIMIT_STAGING_ENTRIES);
	t->max_bytes = runlimits_get(l, LIMIT_STAGING_SIZE);
	t->slots = xcalloc(TREESUM_SLOTS, sizeof(*t->slots));
}

/* FNV-1a of the first `n` bytes of `s`. */
static size_t hash(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return (size_t)h;
}

/* The slot of group `dir` (its first `n` bytes): found, or the free one it would take. */
static struct treesum_group *slot(const struct treesum *t, const char *dir, size_t n)
{
	size_t i = hash(dir, n) & (TREESUM_SLOTS - 1);

	while (t->slots[i].dir && (strlen(t->slots[i].dir) != n || memcmp(t->slots[i].dir, dir, n)))
		i = (i + 1) & (TREESUM_SLOTS - 1);
	return &t->slots[i];
}

/* Length of `rel`'s directory cut to `depth` components: "a/b/c/d/e", 3 -> 5 ("a/b/c"). */
static size_t group_len(const char *rel, unsigned depth)
{
	const char *last = strrchr(rel, '/'), *p = rel;
	size_t dir = last ? (size_t)(last - rel) : 0;
	unsigned k = 0;

	while (k < depth && (size_t)(p - rel) < dir) {
		const char *slash = memchr(p, '/', dir - (size_t)(p - rel));

		k++;
		if (!slash)
			return dir;
		p = slash + 1;
	}
	return p == rel ? 0 : (size_t)(p - rel) - 1;
}

static struct treesum_group *group_of(struct treesum *t, const char *rel)
{
	size_t n = group_len(rel, TREESUM_DEPTH);
	struct treesum_group *g = slot(t, rel, n);

	if (!g->dir && t->n_groups >= TREESUM_GROUPS) {
		n = group_len(rel, 1);
		g = slot(t, rel, n);
		if (!g->dir && t->n_groups >= TREESUM_GROUPS + TREESUM_COARSE)
			g = slot(t, rel, n = 0);
	}
	if (!g->dir) {
		g->dir = xstrndup(rel, n);
		t->n_groups++;
	}
	return g;
}

int treesum_add(struct treesum *t, const char *rel, uint64_t entries, uint64_t bytes)
{
	struct treesum_group *g = group_of(t, rel);

	g->entries += entries;
	g->bytes += bytes;
	t->entries += entries;
	t->bytes += bytes;
	return treesum_over(t);
}

int treesum_over(const struct treesum *t)
{
	if (t->entries > t->max_entries)
		return LIMIT_STAGING_ENTRIES;
	if (t->bytes > t->max_bytes)
		return LIMIT_STAGING_SIZE;
	return -1;
}

/* 1 when `a` ranks before `b`: more of `by`, then the bytewise smaller name. */
static int ranks_before(const struct treesum_group *a, const struct treesum_group *b, int by)
{
	uint64_t x = by == LIMIT_STAGING_SIZE ? a->bytes : a->entries;
	uint64_t y = by == LIMIT_STAGING_SIZE ? b->bytes : b->entries;

	return x != y ? x > y : strcmp(a->dir, b->dir) < 0;
}

/* The best group ranking after `prev` (NULL: the first), or NULL. */
static const struct treesum_group *next_best(const struct treesum *t, int by,
					     const struct treesum_group *prev)
{
	const struct treesum_group *best = NULL;
	size_t i;

	for (i = 0; i < TREESUM_SLOTS; i++) {
		const struct treesum_group *g = &t->slots[i];

		if (g->dir && (!prev || ranks_before(prev, g, by)) &&
		    (!best || ranks_before(g, best, by)))
			best = g;
	}
	return best;
}

void treesum_top(const struct treesum *t, int by, size_t n, struct buf *out)
{
	const struct treesum_group *g = NULL;
	size_t i;

	for (i = 0; i < n && (g = next_best(t, by, g)); i++) {
		buf_adds(out, i ? ", '/" : "'/");
		buf_add_escaped(out, g->dir);
		if (by == LIMIT_STAGING_SIZE)
			buf_addf(out, "' (%.1f MiB)", (double)g->bytes / (1 << 20));
		else
			buf_addf(out, "' (%llu entries)", (unsigned long long)g->entries);
	}
}

void treesum_release(struct treesum *t)
{
	size_t i;

	for (i = 0; t->slots && i < TREESUM_SLOTS; i++)
		free(t->slots[i].dir);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
