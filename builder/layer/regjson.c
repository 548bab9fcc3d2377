/* A small bounded JSON reader (regjson.h). */
#include "regjson.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/str.h"

struct rp {
	const char *p, *end;
	int depth;
};

static int parse_value(struct rp *r, struct regjson *out);

static void skip_ws(struct rp *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int hex4(struct rp *r, unsigned *out)
{
	unsigned v = 0;
	int i;

	if (r->end - r->p < 4)
		return -EBADMSG;
	for (i = 0; i < 4; i++) {
		char c = *r->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -EBADMSG;
	}
	*out = v;
	return 0;
}

static void add_utf8(struct buf *b, unsigned c)
{
	char u[4];
	size_t n;

	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12);
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18);
		u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	buf_add(b, u, n);
}

/* \uXXXX, a surrogate pair as one code point; U+0000 is refused (our strings are C strings). */
static int unicode_escape(struct rp *r, struct buf *b)
{
	unsigned c, lo;

	if (hex4(r, &c))
		return -EBADMSG;
	if (c >= 0xd800 && c < 0xdc00) {
		if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
			return -EBADMSG;
		r->p += 2;
		if (hex4(r, &lo) || lo < 0xdc00 || lo >= 0xe000)
			return -EBADMSG;
		c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
	} else if ((c >= 0xdc00 && c < 0xe000) || !c) {
		return -EBADMSG;
	}
	add_utf8(b, c);
	return 0;
}

static int escape(struct rp *r, struct buf *b)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *at;

	if (r->p >= r->end)
		return -EBADMSG;
	if (*r->p == 'u') {
		r->p++;
		return unicode_escape(r, b);
	}
	at = strchr(from, *r->p);
	if (!at || !*r->p)
		return -EBADMSG;
	buf_add(b, &to[at - from], 1);
	r->p++;
	return 0;
}

static int parse_string(struct rp *r, char **out)
{
	struct buf b = { 0 };
	int ret = 0;

	r->p++; /* the opening quote */
	while (!ret) {
		if (r->p >= r->end || (unsigned char)*r->p < 0x20) {
			ret = -EBADMSG;
		} else if (*r->p == '"') {
			r->p++;
			break;
		} else if (*r->p == '\\') {
			r->p++;
			ret = escape(r, &b);
		} else {
			buf_add(&b, r->p++, 1);
		}
	}
	if (ret) {
		buf_release(&b);
		return ret;
	}
	*out = b.p ? buf_detach(&b) : xstrdup("");
	return 0;
}

static int parse_number(struct rp *r, struct regjson *out)
{
	const char *start = r->p;

	if (r->p < r->end && *r->p == '-')
		r->p++;
	while (r->p < r->end && strchr("0123456789.eE+-", *r->p) && *r->p)
		r->p++;
	if (r->p == start || r->p - start > 64)
		return -EBADMSG;
	out->type = REGJSON_NUM;
	out->s = xstrndup(start, (size_t)(r->p - start));
	return 0;
}

static int parse_word(struct rp *r, struct regjson *out)
{
	static const struct { const char *w; enum regjson_type t; int b; } words[] = {
		{ "true", REGJSON_BOOL, 1 }, { "false", REGJSON_BOOL, 0 }, { "null", REGJSON_NULL, 0 },
	};
	size_t i, n;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		n = strlen(words[i].w);
		if ((size_t)(r->end - r->p) >= n && !memcmp(r->p, words[i].w, n)) {
			r->p += n;
			out->type = words[i].t;
			out->b = words[i].b;
			return 0;
		}
	}
	return parse_number(r, out);
}

static int has_key(const struct regjson *o, const char *key)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return 1;
	return 0;
}

/* One more element of the array or object `out`; `key` (taken) names it in an object. */
static int parse_member(struct rp *r, struct regjson *out, char *key)
{
	size_t alloc = out->n;
	int ret;

	out->v = xrealloc(out->v, (alloc + 1) * sizeof(*out->v));
	memset(&out->v[out->n], 0, sizeof(*out->v));
	if (out->type == REGJSON_OBJ) {
		out->keys = xrealloc(out->keys, (alloc + 1) * sizeof(*out->keys));
		out->keys[out->n] = key;
	}
	ret = parse_value(r, &out->v[out->n]);
	out->n++;
	return ret;
}

static int parse_key(struct rp *r, const struct regjson *o, char **key)
{
	skip_ws(r);
	if (r->p >= r->end || *r->p != '"' || parse_string(r, key))
		return -EBADMSG;
	skip_ws(r);
	if (has_key(o, *key) || r->p >= r->end || *r->p != ':') {
		free(*key);
		return -EBADMSG;
	}
	r->p++;
	return 0;
}

static int parse_container(struct rp *r, struct regjson *out, char close)
{
	char *key = NULL;
	int ret = 0;

	if (++r->depth > REGJSON_DEPTH)
		return -EBADMSG;
	out->type = close == '}' ? REGJSON_OBJ : REGJSON_ARR;
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return 0;
	}
	for (;;) {
		if (close == '}' && (ret = parse_key(r, out, &key)))
			return ret;
		ret = parse_member(r, out, key);
		skip_ws(r);
		if (ret || r->p >= r->end)
			return -EBADMSG;
		if (*r->p++ == close)
			break;
		if (r->p[-1] != ',')
			return -EBADMSG;
	}
	r->depth--;
	return 0;
}

static int parse_value(struct rp *r, struct regjson *out)
{
	skip_ws(r);
	if (r->p >= r->end)
		return -EBADMSG;
	switch (*r->p) {
	case '{':
		return parse_container(r, out, '}');
	case '[':
		return parse_container(r, out, ']');
	case '"':
		out->type = REGJSON_STR;
		return parse_string(r, &out->s);
	default:
		return parse_word(r, out);
	}
}

int regjson_parse(const char *text, size_t len, struct regjson *out)
{
	struct rp r = { text, text + len, 0 };
	int ret;

	memset(out, 0, sizeof(*out));
	ret = parse_value(&r, out);
	skip_ws(&r);
	if (!ret && r.p != r.end)
		ret = -EBADMSG;
	if (ret)
		regjson_release(out);
	return ret;
}

void regjson_release(struct regjson *j)
{
	size_t i;

	for (i = 0; i < j->n; i++) {
		regjson_release(&j->v[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->v);
	free(j->keys);
	free(j->s);
	memset(j, 0, sizeof(*j));
}

const struct regjson *regjson_get(const struct regjson *j, const char *key)
{
	size_t i;

	if (!j || j->type != REGJSON_OBJ)
		return NULL;
	for (i = 0; i < j->n; i++)
		if (!strcmp(j->keys[i], key))
			return &j->v[i];
	return NULL;
}

const char *regjson_str(const struct regjson *j, const char *key)
{
	const struct regjson *v = regjson_get(j, key);

	return v && v->type == REGJSON_STR ? v->s : NULL;
}

int regjson_u64(const struct regjson *j, const char *key, uint64_t *out)
{
	const struct regjson *v = regjson_get(j, key);
	char *end;

	if (!v || v->type != REGJSON_NUM || v->s[0] < '0' || v->s[0] > '9')
		return -EBADMSG;
	errno = 0;
	*out = strtoull(v->s, &end, 10);
	return errno || *end ? -EBADMSG : 0;
}
