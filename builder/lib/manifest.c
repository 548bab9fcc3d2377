#include "manifest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fsutil.h"
#include "log.h"
#include "manifest_internal.h"

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void manifest_init(struct manifest *m)
{
	memset(m, 0, sizeof(*m));
}

struct manifest_entry *manifest_add_copy(struct manifest *m, const char *path,
					 const struct manifest_entry *src)
{
	struct manifest_entry *e = manifest_add(m, path);
	size_t i;

	e->type = src->type;
	e->mode = src->mode;
	e->uid = src->uid;
	e->gid = src->gid;
	e->mtime = src->mtime;
	e->major = src->major;
	e->minor = src->minor;
	e->size = src->size;
	for (i = 0; i < src->n_xattrs; i++)
		manifest_set_xattr(e, src->xattrs[i].name, src->xattrs[i].value, src->xattrs[i].len);
	return e;
}

void manifest_xattrs_free(struct manifest_xattr *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

static void entry_free(struct manifest_entry *e)
{
	manifest_xattrs_free(e->xattrs, e->n_xattrs);
	free(e->path);
	free(e->target);
	strv_release(&e->owners);
	free(e);
}

void manifest_release(struct manifest *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		entry_free(m->v[i]);
	free(m->v);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* Slot of `path`, or of the empty slot where it would go. */
static size_t find_slot(const struct manifest *m, const char *path)
{
	size_t i = (size_t)fnv1a(path) & (m->n_slots - 1);

	while (m->slots[i] && strcmp(m->v[m->slots[i] - 1]->path, path))
		i = (i + 1) & (m->n_slots - 1);
	return i;
}

static void reindex(struct manifest *m)
{
	size_t i;

	if (m->n_slots < 64)
		m->n_slots = 64;
	while (m->n_slots < m->n * 2 + 2)
		m->n_slots *= 2;
	free(m->slots);
	m->slots = xcalloc(m->n_slots, sizeof(*m->slots));
	for (i = 0; i < m->n; i++)
		m->slots[find_slot(m, m->v[i]->path)] = i + 1;
}

struct manifest_entry *manifest_get(const struct manifest *m, const char *path)
{
	size_t s;

	if (!m->n_slots)
		return NULL;
	s = find_slot(m, path);
	return m->slots[s] ? m->v[m->slots[s] - 1] : NULL;
}

struct manifest_entry *manifest_add(struct manifest *m, const char *path)
{
	struct manifest_entry *e = manifest_get(m, path);

	if (e)
		return e;
	if ((m->n + 1) * 2 + 2 > m->n_slots)
		reindex(m);
	e = xcalloc(1, sizeof(*e));
	e->path = xstrdup(path);
	ALLOC_GROW(m->v, m->n + 1, m->alloc);
	m->v[m->n++] = e;
	m->slots[find_slot(m, path)] = m->n;
	return e;
}

void manifest_remove(struct manifest *m, const char *path)
{
	struct manifest_entry *e = manifest_get(m, path);
	size_t i;

	if (!e)
		return;
	for (i = 0; i < m->n && m->v[i] != e; i++)
		;
	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
	entry_free(e);
	reindex(m);
}

static int xattr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct manifest_xattr *)a)->name, ((const struct manifest_xattr *)b)->name);
}

void manifest_set_xattr(struct manifest_entry *e, const char *name, const void *value, size_t len)
{
	struct manifest_xattr *x = NULL;
	size_t i;

	for (i = 0; i < e->n_xattrs; i++)
		if (!strcmp(e->xattrs[i].name, name))
			x = &e->xattrs[i];
	if (!x) {
		e->xattrs = xrealloc(e->xattrs, (e->n_xattrs + 1) * sizeof(*e->xattrs));
		x = &e->xattrs[e->n_xattrs++];
		x->name = xstrdup(name);
	} else {
		free(x->value);
	}
	x->value = xmalloc(len);
	memcpy(x->value, value, len);
	x->len = len;
	qsort(e->xattrs, e->n_xattrs, sizeof(*e->xattrs), xattr_cmp);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct manifest_entry *x = *(struct manifest_entry *const *)a;
	const struct manifest_entry *y = *(struct manifest_entry *const *)b;

	return strcmp(x->path, y->path);
}

void manifest_sort(struct manifest *m)
{
	qsort(m->v, m->n, sizeof(*m->v), entry_cmp);
	reindex(m);
}

char *manifest_normalize(const char *path)
{
	struct buf b = { 0 };
	const char *p = path, *end;

	buf_adds(&b, "");
	while (*p) {
		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		if (end - p == 2 && !strncmp(p, "..", 2)) {
			buf_release(&b);
			return NULL;
		}
		if (end > p && !(end - p == 1 && *p == '.')) {
			if (b.len)
				buf_adds(&b, "/");
			buf_add(&b, p, (size_t)(end - p));
		}
		p = end;
	}
	return buf_detach(&b);
}

static void put_escaped(FILE *f, const char *s)
{
	if (!*s) {
		fputs("%", f); /* the root: a lone '%' stands for the empty path */
		return;
	}
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= 0x20 || c >= 0x7f || c == '%')
			fprintf(f, "%%%02x", c);
		else
			fputc(c, f);
	}
}

static void put_entry(FILE *f, const struct manifest_entry *e)
{
	size_t i, j;

	put_escaped(f, e->path);
	fprintf(f, "\t%c\t%04o\t%" PRIu32 "\t%" PRIu32 "\t%" PRId64 "\t%" PRIu32 "\t%" PRIu32
		   "\t%" PRIu64 "\t",
		e->type, e->mode, e->uid, e->gid, e->mtime, e->major, e->minor, e->size);
	if (e->target)
		put_escaped(f, e->target);
	else
		fputc('-', f);
	fputc('\t', f);
	for (i = 0; i < e->owners.n; i++)
		fprintf(f, "%s%s", i ? "," : "", e->owners.v[i]);
	if (!e->owners.n)
		fputc('-', f);
	fputc('\t', f);
	for (i = 0; i < e->n_xattrs; i++) {
		fprintf(f, "%s%s=", i ? ";" : "", e->xattrs[i].name);
		for (j = 0; j < e->xattrs[i].len; j++)
			fprintf(f, "%02x", e->xattrs[i].value[j]);
	}
	if (!e->n_xattrs)
		fputc('-', f);
	fputc('\n', f);
}

int manifest_save(const struct manifest *m, const char *file)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);
	int ret;

	if (!f)
		return -errno;
	for (i = 0; i < m->n; i++)
		put_entry(f, m->v[i]);
	ret = fclose(f) ? -errno : fsutil_write_atomic(file, text, len);
	free(text);
	return ret;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode %XX escapes in place; -1 on a bad escape. */
static int unescape(char *s)
{
	char *w = s;

	if (!strcmp(s, "%")) {
		*s = 0;
		return 0;
	}
	for (; *s; s++) {
		if (*s != '%') {
			*w++ = *s;
			continue;
		}
		if (hexval(s[1]) < 0 || hexval(s[2]) < 0)
			return -1;
		*w++ = (char)(hexval(s[1]) * 16 + hexval(s[2]));
		s += 2;
	}
	*w = 0;
	return 0;
}

static int parse_xattrs(struct manifest_entry *e, char *s)
{
	char *item, *save = NULL, *eq;
	uint8_t *val;
	size_t n, i;

	if (!strcmp(s, "-"))
		return 0;
	for (item = strtok_r(s, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
		eq = strchr(item, '=');
		if (!eq || strlen(eq + 1) % 2)
			return -1;
		*eq = 0;
		n = strlen(eq + 1) / 2;
		val = xmalloc(n);
		for (i = 0; i < n; i++) {
			int hi = hexval(eq[1 + 2 * i]), lo = hexval(eq[2 + 2 * i]);

			if (hi < 0 || lo < 0) {
				free(val);
				return -1;
			}
			val[i] = (uint8_t)(hi * 16 + lo);
		}
		manifest_set_xattr(e, item, val, n);
		free(val);
	}
	return 0;
}

static int parse_line(struct manifest *m, char *line)
{
	char *f[12], *save = NULL, *o, *osave = NULL;
	struct manifest_entry *e;
	int n = 0;

	for (f[n] = strtok_r(line, "\t\n", &save); f[n] && n < 11; f[++n] = strtok_r(NULL, "\t\n", &save))
		;
	if (n != 11 || !f[11] || strtok_r(NULL, "\t\n", &save) || strlen(f[1]) != 1 || unescape(f[0]))
		return -1;
	e = manifest_add(m, f[0]);
	e->type = f[1][0];
	e->mode = (uint32_t)strtoul(f[2], NULL, 8) & 07777;
	e->uid = (uint32_t)strtoul(f[3], NULL, 10);
	e->gid = (uint32_t)strtoul(f[4], NULL, 10);
	e->mtime = strtoll(f[5], NULL, 10);
	e->major = (uint32_t)strtoul(f[6], NULL, 10);
	e->minor = (uint32_t)strtoul(f[7], NULL, 10);
	e->size = strtoull(f[8], NULL, 10);
	if (strcmp(f[9], "-")) {
		if (unescape(f[9]))
			return -1;
		e->target = xstrdup(f[9]);
	}
	if (strcmp(f[10], "-"))
		for (o = strtok_r(f[10], ",", &osave); o; o = strtok_r(NULL, ",", &osave))
			strv_push(&e->owners, o);
	return parse_xattrs(e, f[11]);
}

int manifest_load(struct manifest *m, const char *file)
{
	FILE *f = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (parse_line(m, line)) {
			log_error("%s:%u: malformed manifest line", file, lineno);
			ret = -MKI_E_PARSE;
			break;
		}
	}
	free(line);
	fclose(f);
	return ret;
}
