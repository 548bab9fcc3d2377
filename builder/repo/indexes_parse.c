/* Indexes, parsing: the clearsigned text and the fields of a Release file (no I/O). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
		strv_push(&ri->archs, v); /* split below */
	else if (!strcasecmp(key, "Components"))
		strv_push(&ri->comps, v);
	else if (!strcasecmp(key, "Acquire-By-Hash"))
		ri->by_hash = !strcasecmp(v, "yes");
	else if (!strcasecmp(key, "No-Support-for-Architecture-all"))
		ri->no_all = !strcasecmp(v, "Packages");
}

static void split_words(struct strv *v)
{
	struct strv out = { 0 };
	const char *s = v->n ? v->v[0] : "";

	while (*s) {
		size_t n;

		s += strspn(s, " \t");
		n = strcspn(s, " \t");
		if (n)
			strv_push_take(&out, xstrndup(s, n));
		s += n;
	}
	strv_release(v);
	*v = out;
}

/* One deb822 stanza; only SHA256's continuation lines are of interest. */
int indexes_parse_release(const char *text, struct release_info *ri, int *bad_line)
{
	const char *p = text;
	int in_sha = 0, lineno = 0, ret = 0;

	while (*p && !ret) {
		size_t n = strcspn(p, "\n");
		char *line = xstrndup(p, n), *colon;

		p += n + (p[n] == '\n');
		*bad_line = ++lineno;
		if (line[0] == ' ' || line[0] == '\t') {
			if (in_sha && line[strspn(line, " \t")])
				ret = parse_sha_line(ri, line);
		} else if (!line[0]) {
			ret = *p ? -MKI_E_PARSE : 0; /* a second stanza */
		} else if ((colon = strchr(line, ':'))) {
			*colon = 0;
			in_sha = !strcmp(line, "SHA256");
			set_field(ri, line, colon + 1 + strspn(colon + 1, " \t"));
		} else {
			ret = -MKI_E_PARSE;
		}
		free(line);
	}
	split_words(&ri->archs);
	split_words(&ri->comps);
	return ret;
}

const struct rel_entry *indexes_rel_find(const struct release_info *ri, const char *path)
{
	size_t i;

	for (i = 0; i < ri->n; i++)
		if (!strcmp(ri->v[i].path, path))
			return &ri->v[i];
	return NULL;
}
