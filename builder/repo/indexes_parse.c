/* Indexes, parsing: the clearsigned text and the fields of a Release file (no I/O). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "debian/deb822.h"
#include "indexes_ctx.h"
#include "lib/err.h"
#include "lib/hash.h"

void indexes_info_release(struct release_info *ri)
{
	size_t i;

	free(ri->date);
	free(ri->valid_until);
	free(ri->suite);
	free(ri->codename);
	strv_release(&ri->archs);
	strv_release(&ri->comps);
	for (i = 0; i < ri->n; i++)
		free(ri->v[i].path);
	free(ri->v);
	memset(ri, 0, sizeof(*ri));
}

/* --- clearsigned text ---------------------------------------------------------------------- */

static const char *next_line(const char *p, const char *end, size_t *len)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	*len = nl ? (size_t)(nl - p) : (size_t)(end - p);
	if (*len && p[*len - 1] == '\r')
		(*len)--;
	return nl ? nl + 1 : end;
}

static int line_is(const char *p, size_t len, const char *s)
{
	return len == strlen(s) && !memcmp(p, s, len);
}

static int only_space(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return 0;
	return 1;
}

int indexes_signed_text(const char *msg, size_t len, struct buf *out)
{
	const char *p = msg, *end = msg + len, *line;
	size_t n;
	int in_sig = 0;

	out->len = 0;
	p = next_line(p, end, &n);
	if (!line_is(msg, n, "-----BEGIN PGP SIGNED MESSAGE-----"))
		return -MKI_E_PARSE;
	/* Armor headers ("Hash: SHA256") up to the empty line. */
	do {
		if (p >= end)
			return -MKI_E_PARSE;
		line = p;
		p = next_line(p, end, &n);
	} while (n);
	while (p < end) {
		line = p;
		p = next_line(p, end, &n);
		if (!in_sig && line_is(line, n, "-----BEGIN PGP SIGNATURE-----")) {
			in_sig = 1;
		} else if (in_sig && line_is(line, n, "-----END PGP SIGNATURE-----")) {
			if (!only_space(p, end))
				return -MKI_E_PARSE;
			if (!out->p)
				buf_adds(out, "");
			return 0;
		} else if (!in_sig) {
			if (n && line[0] == '-') {
				if (n < 2 || line[1] != ' ')
					return -MKI_E_PARSE;
				line += 2;
				n -= 2;
			}
			buf_add(out, line, n);
			buf_add(out, "\n", 1);
		}
	}
	return -MKI_E_PARSE;
}

/* --- Release fields ------------------------------------------------------------------------ */

int indexes_parse_date(const char *s, int64_t *t)
{
	struct tm tm = { 0 };
	const char *rest = strptime(s, "%a, %d %b %Y %H:%M:%S", &tm);
	long off = 0;

	if (!rest)
		rest = strptime(s, "%d %b %Y %H:%M:%S", &tm);
	if (!rest)
		return -MKI_E_PARSE;
	rest += strspn(rest, " ");
	if ((rest[0] == '+' || rest[0] == '-') && strlen(rest) == 5 &&
	    strspn(rest + 1, "0123456789") == 4) {
		off = ((rest[1] - '0') * 10 + (rest[2] - '0')) * 3600 +
		      ((rest[3] - '0') * 10 + (rest[4] - '0')) * 60;
		off = rest[0] == '-' ? -off : off;
	} else if (*rest && strcmp(rest, "UTC") && strcmp(rest, "GMT") && strcmp(rest, "Z")) {
		return -MKI_E_PARSE;
	}
	*t = (int64_t)timegm(&tm) - off;
	return 0;
}

int64_t indexes_newest_date(const struct indexes *ix)
{
	int64_t newest = 0, t;
	size_t i;

	for (i = 0; i < ix->n_releases; i++)
		if (ix->releases[i].use != INDEX_OMITTED && ix->releases[i].date &&
		    !indexes_parse_date(ix->releases[i].date, &t) && t > newest)
			newest = t;
	return newest;
}

static int parse_sha_line(struct release_info *ri, const char *line)
{
	char sha[80], path[1024];
	unsigned long long size;
	struct rel_entry *e;

	if (sscanf(line, " %79s %llu %1023s", sha, &size, path) != 3 || !hash_sha256_hex_valid(sha))
		return -MKI_E_PARSE;
	ALLOC_GROW(ri->v, ri->n + 1, ri->alloc);
	e = &ri->v[ri->n++];
	e->path = xstrdup(path);
	e->size = size;
	memcpy(e->sha256, sha, 65);
	return 0;
}

/* The SHA256 field, one entry a line after its first (empty) one; `line` is the field's line. */
static int parse_sha_list(struct release_info *ri, const char *v, unsigned long line,
			  int *bad_line)
{
	char *copy = xstrdup(v), *l, *next;
	int ret = 0;

	for (l = copy; !ret && l; l = next, line++) {
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		if (l[strspn(l, " \t")])
			ret = parse_sha_line(ri, l);
		if (ret)
			*bad_line = (int)line;
	}
	free(copy);
	return ret;
}

/* Push the blank-separated words of `v` onto `out`. */
static void split_words(const char *v, struct strv *out)
{
	while (*v) {
		size_t n;

		v += strspn(v, " \t\n");
		n = strcspn(v, " \t\n");
		if (n)
			strv_push_take(out, xstrndup(v, n));
		v += n;
	}
}

static void set_field(struct release_info *ri, const char *key, const char *v)
{
	if (!strcasecmp(key, "Date"))
		ri->date = xstrdup(v);
	else if (!strcasecmp(key, "Valid-Until"))
		ri->valid_until = xstrdup(v);
	else if (!strcasecmp(key, "Suite"))
		ri->suite = xstrdup(v);
	else if (!strcasecmp(key, "Codename"))
		ri->codename = xstrdup(v);
	else if (!strcasecmp(key, "Architectures"))
		split_words(v, &ri->archs);
	else if (!strcasecmp(key, "Components"))
		split_words(v, &ri->comps);
	else if (!strcasecmp(key, "Acquire-By-Hash"))
		ri->by_hash = !strcasecmp(v, "yes");
	else if (!strcasecmp(key, "No-Support-for-Architecture-all"))
		ri->no_all = !strcasecmp(v, "Packages");
}

/* The fields of the stanza `d` holds into `ri`. */
static int take_fields(const struct deb822 *d, struct release_info *ri, int *bad_line)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < d->n_fields; i++) {
		const struct deb822_field *f = &d->fields[i];

		if (!strcasecmp(f->name, "SHA256"))
			ret = parse_sha_list(ri, f->value, f->line, bad_line);
		else
			set_field(ri, f->name, f->value);
	}
	return ret;
}

/* One stanza, read by the deb822 reader; a second one is refused at the blank line before it. */
int indexes_parse_release(const char *text, struct release_info *ri, int *bad_line)
{
	struct deb822 d;
	unsigned long end;
	int ret;

	if ((ret = deb822_open_mem(&d, "Release", text, strlen(text))))
		return ret;
	deb822_set_silent(&d); /* the caller words the message: "line N of the signed text" */
	ret = deb822_next(&d);
	end = d.line; /* the blank line that ended the stanza, if any */
	if (ret > 0)
		ret = take_fields(&d, ri, bad_line);
	if (!ret && (ret = deb822_next(&d)) > 0)
		*bad_line = (int)end;
	else if (ret < 0 && d.error)
		*bad_line = (int)d.error_line;
	deb822_close(&d);
	return ret ? -MKI_E_PARSE : 0;
}

const struct rel_entry *indexes_rel_find(const struct release_info *ri, const char *path)
{
	size_t i;

	for (i = 0; i < ri->n; i++)
		if (!strcmp(ri->v[i].path, path))
			return &ri->v[i];
	return NULL;
}
