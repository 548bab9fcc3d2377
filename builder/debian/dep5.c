#include "dep5.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "deb822.h"
#include "lib/beneath.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/x.h"

/*
 * Bounds on one copyright file (Debian's largest, perl's, has 200 Files paragraphs and about 30
 * distinct licences); past them the file declares nothing rather than cost unbounded time.
 */
#define MAX_PARAGRAPHS 4096
#define MAX_TOKENS 256	/* words of one License line */
#define MAX_LEAVES 8192 /* short names in all Files paragraphs together */
#define MAX_TERMS 256	/* distinct terms of the result, distinct LicenseRefs of one file */
#define MAX_REFS 4096	/* LicenseRefs of one document */
#define MAX_ID 100	/* characters of a LicenseRef's idstring before any "-N" suffix */

/* ---- the copyright file: its License fields ---- */

/* One License field: its first line (the short names) and the rest (the licence text). */
struct license {
	char *first;
	char *text; /* NULL when the field is one line */
};

struct copyright {
	struct license *files; /* of the Files paragraphs, in file order */
	size_t n_files, alloc_files;
	struct license *alone; /* of the stand-alone License paragraphs */
	size_t n_alone, alloc_alone;
};

static void licenses_free(struct license *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].first);
		free(v[i].text);
	}
	free(v);
}

static void copyright_release(struct copyright *c)
{
	licenses_free(c->files, c->n_files);
	licenses_free(c->alone, c->n_alone);
}

/* Debian's URL for the format, http or https, with or without the final '/'. */
static int is_format_1_0(const char *v)
{
	static const char path[] = "://www.debian.org/doc/packaging-manuals/copyright-format/1.0";

	if (!v)
		return 0;
	if (!strncmp(v, "https", 5))
		v += 5;
	else if (!strncmp(v, "http", 4))
		v += 4;
	else
		return 0;
	if (strncmp(v, path, sizeof(path) - 1))
		return 0;
	v += sizeof(path) - 1;
	return !strcmp(v, "") || !strcmp(v, "/");
}

/* The text after a License field's first line; a continuation line "." stands for a blank line. */
static char *license_text(const char *s)
{
	struct buf b = { 0 };

	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		if (len != 1 || *s != '.')
			buf_add(&b, s, len);
		if (!nl)
			break;
		buf_adds(&b, "\n");
		s = nl + 1;
	}
	return buf_detach(&b);
}

static void license_init(struct license *l, const char *value)
{
	const char *nl = strchr(value, '\n');

	l->first = xstrndup(value, nl ? (size_t)(nl - value) : strlen(value));
	l->text = nl && nl[1] ? license_text(nl + 1) : NULL;
}

/* Keep one paragraph after the header. NULL, or why the file is refused. */
static const char *add_paragraph(struct copyright *c, const struct deb822 *d)
{
	const char *files = deb822_get(d, "Files"), *lic = deb822_get(d, "License");

	if (c->n_files + c->n_alone >= MAX_PARAGRAPHS)
		return "too many paragraphs";
	if (!lic)
		return files ? "a Files paragraph has no License field"
			     : "a paragraph has neither Files nor License";
	if (!*lic || *lic == '\n')
		return "a License field has no short name";
	if (files) {
		ALLOC_GROW(c->files, c->n_files + 1, c->alloc_files);
		license_init(&c->files[c->n_files++], lic);
	} else {
		ALLOC_GROW(c->alone, c->n_alone + 1, c->alloc_alone);
		license_init(&c->alone[c->n_alone++], lic);
	}
	return NULL;
}

/*
 * Whether the header paragraph has a Format line at all: a free-form copyright file (libc6's,
 * most older ones) is told apart before it is parsed, so it is "not machine-readable", not
 * "malformed".
 */
static int has_format_line(const char *s, const char *end)
{
	int header = 0;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *eol = nl ? nl : end, *p = s;

		while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p == eol && header)
			return 0; /* a blank line ends the header */
		if (p < eol && *s != '#') {
			header = 1;
			if (eol - s >= 7 && !strncasecmp(s, "Format:", 7))
				return 1;
		}
		s = eol + 1;
	}
	return 0;
}

/* Read every paragraph of `data`. NULL, or why it is not a usable copyright-format 1.0 file. */
static const char *load(struct copyright *c, const char *data, size_t len, const char *origin)
{
	struct deb822 d;
	const char *why = NULL;
	int ret, header = 1;

	if (!has_format_line(data, data + len))
		return "not machine-readable (no copyright-format 1.0 'Format' header)";
	if (deb822_open_mem(&d, origin, data, len))
		return "cannot be read";
	deb822_set_quiet(&d);
	while (!why && (ret = deb822_next(&d)) == 1) {
		if (header && !is_format_1_0(deb822_get(&d, "Format")))
			why = "not copyright-format 1.0 (another 'Format')";
		else if (!header)
			why = add_paragraph(c, &d);
		header = 0;
	}
	if (!why && ret < 0)
		why = "not parseable as deb822 paragraphs";
	else if (!why && header)
		why = "empty";
	else if (!why && !c->n_files)
		why = "no Files paragraph";
	deb822_close(&d);
	return why;
}

/* ---- a License line: "GPL-2+ or Artistic, and BSD-3-clause with Font exception" ---- */

enum tok { T_NAME, T_AND, T_OR, T_WITH, T_COMMA };
enum op { OP_LEAF, OP_AND, OP_OR };

struct token {
	enum tok kind;
	const char *s;
	size_t len;
};

/* A node of one License line's tree; a leaf's strings point into the line. */
struct node {
	enum op op;
	int l, r;	  /* children of AND and OR */
	const char *name; /* a leaf's short name */
	size_t name_len;
	const char *exc; /* its exception's keywords ("OpenSSL"), or NULL */
	size_t exc_len;
};

struct expr {
	struct token t[MAX_TOKENS]; /* the line's tokens */
	size_t n, i;		    /* how many, the next one to parse */
	struct node *nodes;
	size_t n_nodes, alloc_nodes;
};

static int word_is(const struct token *t, const char *w)
{
	return t->len == strlen(w) && !strncasecmp(t->s, w, t->len);
}

static enum tok classify(const struct token *t)
{
	if (t->len == 1 && *t->s == ',')
		return T_COMMA;
	if (word_is(t, "and"))
		return T_AND;
	if (word_is(t, "or"))
		return T_OR;
	return word_is(t, "with") ? T_WITH : T_NAME;
}

/* Split `s` into words and commas. -1 for too many or a character no short name has. */
static int tokenize(struct expr *x, const char *s)
{
	x->n = x->i = 0;
	while (*s) {
		struct token *t = &x->t[x->n];
		size_t n = *s == ',' ? 1 : strcspn(s, " \t,");

		if (*s == ' ' || *s == '\t') {
			s++;
			continue;
		}
		if (x->n == MAX_TOKENS)
			return -1;
		t->s = s;
		t->len = n;
		t->kind = classify(t);
		if (t->kind == T_NAME && (memchr(s, '(', n) || memchr(s, ')', n)))
			return -1; /* not DEP-5 syntax: grouping is by comma */
		x->n++;
		s += n;
	}
	return 0;
}

static int node_new(struct expr *x, enum op op, int l, int r)
{
	struct node *nd;

	ALLOC_GROW(x->nodes, x->n_nodes + 1, x->alloc_nodes);
	nd = &x->nodes[x->n_nodes];
	memset(nd, 0, sizeof(*nd));
	nd->op = op;
	nd->l = l;
	nd->r = r;
	return (int)x->n_nodes++;
}

static int leaf_new(struct expr *x, const char *name, size_t len)
{
	int i = node_new(x, OP_LEAF, -1, -1);

	x->nodes[i].name = name;
	x->nodes[i].name_len = len;
	return i;
}

static const struct token *peek(const struct expr *x)
{
	return x->i < x->n ? &x->t[x->i] : NULL;
}

/* "with KEYWORD... exception" after a short name. 0, or -1 when malformed. */
static int parse_exception(struct expr *x, struct node *leaf)
{
	const struct token *first = NULL, *last = NULL, *t;

	for (x->i++; (t = peek(x)) && t->kind == T_NAME && !word_is(t, "exception"); x->i++) {
		if (!first)
			first = t;
		last = t;
	}
	if (!t || !word_is(t, "exception") || !first)
		return -1;
	x->i++;
	leaf->exc = first->s;
	leaf->exc_len = (size_t)(last->s + last->len - first->s);
	return 0;
}

/* A short name with its exception. DEP-5 calls Perl's licence "GPL-1+ or Artistic-1". */
static int parse_term(struct expr *x)
{
	const struct token *t = peek(x);
	int i;

	if (!t || t->kind != T_NAME)
		return -1;
	x->i++;
	if (word_is(t, "Perl") && !(peek(x) && peek(x)->kind == T_WITH))
		return node_new(x, OP_OR, leaf_new(x, "GPL-1+", 6), leaf_new(x, "Artistic-1", 10));
	i = leaf_new(x, t->s, t->len);
	if (peek(x) && peek(x)->kind == T_WITH && parse_exception(x, &x->nodes[i]))
		return -1;
	return i;
}

/* `and` binds tighter than `or` (A or B and C = A or (B and C)). */
static int parse_binary(struct expr *x, enum tok kind)
{
	int l = kind == T_OR ? parse_binary(x, T_AND) : parse_term(x);

	while (l >= 0 && peek(x) && peek(x)->kind == kind) {
		int r;

		x->i++;
		r = kind == T_OR ? parse_binary(x, T_AND) : parse_term(x);
		l = r < 0 ? -1 : node_new(x, kind == T_OR ? OP_OR : OP_AND, l, r);
	}
	return l;
}

/* A comma ends a group: "A or B, and C" = (A or B) and C. The root node, or -1. */
static int parse_line(struct expr *x, const char *line)
{
	int l;

	if (tokenize(x, line))
		return -1;
	l = parse_binary(x, T_OR);
	while (l >= 0 && peek(x) && peek(x)->kind == T_COMMA) {
		const struct token *op;
		int r;

		x->i++;
		op = peek(x);
		if (!op || (op->kind != T_AND && op->kind != T_OR))
			return -1;
		x->i++;
		r = parse_binary(x, T_OR);
		l = r < 0 ? -1 : node_new(x, op->kind == T_OR ? OP_OR : OP_AND, l, r);
	}
	return x->i == x->n ? l : -1;
}

/* ---- short names to SPDX ---- */

/*
 * copyright-format 1.0's standard short names (and their versions SPDX knows): FAMILY-VERSION
 * with trailing ".0"s dropped ("2.0" = "2"), "" for the name without a version (the lowest one);
 * `later` is the "+" form where SPDX spells it out, else "+" is appended to `id`.
 */
static const struct spdx_name {
	const char *family, *version, *id, *later;
} spdx_names[] = {
	{ "Apache", "", "Apache-1.0", NULL },
	{ "Apache", "1", "Apache-1.0", NULL },
	{ "Apache", "1.1", "Apache-1.1", NULL },
	{ "Apache", "2", "Apache-2.0", NULL },
	{ "Artistic", "", "Artistic-1.0", NULL },
	{ "Artistic", "1", "Artistic-1.0", NULL },
	{ "Artistic", "2", "Artistic-2.0", NULL },
	{ "BSD-2-clause", "", "BSD-2-Clause", NULL },
	{ "BSD-3-clause", "", "BSD-3-Clause", NULL },
	{ "BSD-4-clause", "", "BSD-4-Clause", NULL },
	{ "ISC", "", "ISC", NULL },
	{ "CC-BY", "1", "CC-BY-1.0", NULL },
	{ "CC-BY", "2", "CC-BY-2.0", NULL },
	{ "CC-BY", "2.5", "CC-BY-2.5", NULL },
	{ "CC-BY", "3", "CC-BY-3.0", NULL },
	{ "CC-BY", "4", "CC-BY-4.0", NULL },
	{ "CC-BY-SA", "1", "CC-BY-SA-1.0", NULL },
	{ "CC-BY-SA", "2", "CC-BY-SA-2.0", NULL },
	{ "CC-BY-SA", "2.5", "CC-BY-SA-2.5", NULL },
	{ "CC-BY-SA", "3", "CC-BY-SA-3.0", NULL },
	{ "CC-BY-SA", "4", "CC-BY-SA-4.0", NULL },
	{ "CC-BY-ND", "1", "CC-BY-ND-1.0", NULL },
	{ "CC-BY-ND", "2", "CC-BY-ND-2.0", NULL },
	{ "CC-BY-ND", "2.5", "CC-BY-ND-2.5", NULL },
	{ "CC-BY-ND", "3", "CC-BY-ND-3.0", NULL },
	{ "CC-BY-ND", "4", "CC-BY-ND-4.0", NULL },
	{ "CC-BY-NC", "1", "CC-BY-NC-1.0", NULL },
	{ "CC-BY-NC", "2", "CC-BY-NC-2.0", NULL },
	{ "CC-BY-NC", "2.5", "CC-BY-NC-2.5", NULL },
	{ "CC-BY-NC", "3", "CC-BY-NC-3.0", NULL },
	{ "CC-BY-NC", "4", "CC-BY-NC-4.0", NULL },
	{ "CC-BY-NC-SA", "1", "CC-BY-NC-SA-1.0", NULL },
	{ "CC-BY-NC-SA", "2", "CC-BY-NC-SA-2.0", NULL },
	{ "CC-BY-NC-SA", "2.5", "CC-BY-NC-SA-2.5", NULL },
	{ "CC-BY-NC-SA", "3", "CC-BY-NC-SA-3.0", NULL },
	{ "CC-BY-NC-SA", "4", "CC-BY-NC-SA-4.0", NULL },
	{ "CC-BY-NC-ND", "1", "CC-BY-NC-ND-1.0", NULL },
	{ "CC-BY-NC-ND", "2", "CC-BY-NC-ND-2.0", NULL },
	{ "CC-BY-NC-ND", "2.5", "CC-BY-NC-ND-2.5", NULL },
	{ "CC-BY-NC-ND", "3", "CC-BY-NC-ND-3.0", NULL },
	{ "CC-BY-NC-ND", "4", "CC-BY-NC-ND-4.0", NULL },
	{ "CC0", "", "CC0-1.0", NULL },
	{ "CC0", "1", "CC0-1.0", NULL },
	{ "CDDL", "", "CDDL-1.0", NULL },
	{ "CDDL", "1", "CDDL-1.0", NULL },
	{ "CDDL", "1.1", "CDDL-1.1", NULL },
	{ "CPL", "", "CPL-1.0", NULL },
	{ "CPL", "1", "CPL-1.0", NULL },
	{ "EFL", "", "EFL-1.0", NULL },
	{ "EFL", "1", "EFL-1.0", NULL },
	{ "EFL", "2", "EFL-2.0", NULL },
	{ "Expat", "", "MIT", NULL },
	{ "GPL", "", "GPL-1.0-only", "GPL-1.0-or-later" },
	{ "GPL", "1", "GPL-1.0-only", "GPL-1.0-or-later" },
	{ "GPL", "2", "GPL-2.0-only", "GPL-2.0-or-later" },
	{ "GPL", "3", "GPL-3.0-only", "GPL-3.0-or-later" },
	{ "LGPL", "", "LGPL-2.0-only", "LGPL-2.0-or-later" },
	{ "LGPL", "2", "LGPL-2.0-only", "LGPL-2.0-or-later" },
	{ "LGPL", "2.1", "LGPL-2.1-only", "LGPL-2.1-or-later" },
	{ "LGPL", "3", "LGPL-3.0-only", "LGPL-3.0-or-later" },
	{ "AGPL", "3", "AGPL-3.0-only", "AGPL-3.0-or-later" },
	{ "GFDL", "1.1", "GFDL-1.1-only", "GFDL-1.1-or-later" },
	{ "GFDL", "1.2", "GFDL-1.2-only", "GFDL-1.2-or-later" },
	{ "GFDL", "1.3", "GFDL-1.3-only", "GFDL-1.3-or-later" },
	{ "GFDL-NIV", "1.1", "GFDL-1.1-no-invariants-only", "GFDL-1.1-no-invariants-or-later" },
	{ "GFDL-NIV", "1.2", "GFDL-1.2-no-invariants-only", "GFDL-1.2-no-invariants-or-later" },
	{ "GFDL-NIV", "1.3", "GFDL-1.3-no-invariants-only", "GFDL-1.3-no-invariants-or-later" },
	{ "LPPL", "1", "LPPL-1.0", NULL },
	{ "LPPL", "1.1", "LPPL-1.1", NULL },
	{ "LPPL", "1.2", "LPPL-1.2", NULL },
	{ "LPPL", "1.3a", "LPPL-1.3a", NULL },
	{ "LPPL", "1.3c", "LPPL-1.3c", NULL },
	{ "MPL", "1", "MPL-1.0", NULL },
	{ "MPL", "1.1", "MPL-1.1", NULL },
	{ "MPL", "2", "MPL-2.0", NULL },
	{ "Python", "", "Python-2.0", NULL },
	{ "Python", "2", "Python-2.0", NULL },
	{ "QPL", "", "QPL-1.0", NULL },
	{ "QPL", "1", "QPL-1.0", NULL },
	{ "W3C", "", "W3C", NULL },
	{ "Zlib", "", "Zlib", NULL },
	{ "Zope", "1.1", "ZPL-1.1", NULL },
	{ "Zope", "2", "ZPL-2.0", NULL },
	{ "Zope", "2.1", "ZPL-2.1", NULL },
};

/* "with KEYWORD exception" keywords SPDX has an exception identifier for. */
static const struct spdx_exception {
	const char *keyword, *id;
} spdx_exceptions[] = {
	{ "Font", "Font-exception-2.0" },
	{ "Classpath", "Classpath-exception-2.0" },
	{ "Libtool", "Libtool-exception" },
	{ "Linux-syscall-note", "Linux-syscall-note" },
};

/* Length of the version at the end of `s` (after its last '-'), or 0: 2, 2.1, 1.3c, 2.0.0. */
static size_t version_len(const char *s, size_t n)
{
	size_t i = n;

	if (i && s[i - 1] >= 'a' && s[i - 1] <= 'z')
		i--;
	while (i && ((s[i - 1] >= '0' && s[i - 1] <= '9') || s[i - 1] == '.'))
		i--;
	if (i == n || i < 2 || s[i - 1] != '-' || s[i] < '0' || s[i] > '9' || s[n - 1] == '.' ||
	    memmem(s + i, n - i, "..", 2))
		return 0;
	return n - i;
}

/* The SPDX id of standard short name `s` ("+" included), or NULL. */
static const char *standard_id(const char *s, size_t n, int *plus)
{
	size_t vlen, flen, i;
	const char *v;

	*plus = n && s[n - 1] == '+';
	n -= (size_t)*plus;
	vlen = version_len(s, n);
	flen = vlen ? n - vlen - 1 : n;
	v = s + n - vlen;
	while (vlen >= 2 && v[vlen - 2] == '.' && v[vlen - 1] == '0')
		vlen -= 2; /* "2.0.0" = "2.0" = "2" */
	for (i = 0; i < sizeof(spdx_names) / sizeof(spdx_names[0]); i++) {
		const struct spdx_name *m = &spdx_names[i];

		if (strlen(m->family) != flen || strncasecmp(m->family, s, flen) ||
		    strlen(m->version) != vlen || strncasecmp(m->version, v, vlen))
			continue;
		if (*plus && m->later) {
			*plus = 0;
			return m->later;
		}
		return m->id;
	}
	return NULL;
}

/* The SPDX form of a leaf when it uses standard names only, else NULL (a LicenseRef then). */
static char *spdx_leaf(const struct node *nd)
{
	const char *id, *exc = NULL;
	int plus;
	size_t i;

	id = standard_id(nd->name, nd->name_len, &plus);
	if (!id)
		return NULL;
	for (i = 0; nd->exc && i < sizeof(spdx_exceptions) / sizeof(spdx_exceptions[0]); i++)
		if (strlen(spdx_exceptions[i].keyword) == nd->exc_len &&
		    !strncasecmp(spdx_exceptions[i].keyword, nd->exc, nd->exc_len))
			exc = spdx_exceptions[i].id;
	if (nd->exc && !exc)
		return NULL;
	return xasprintf("%s%s%s%s", id, plus ? "+" : "", exc ? " WITH " : "", exc ? exc : "");
}

/* ---- the expression and its LicenseRefs ---- */

static const char public_domain_note[] =
	"Public domain: DEP-5's standard short name 'public-domain' declares that no licence is "
	"required for these files; the package's copyright file says which exemption applies.";

struct item {
	char *s;
	int compound; /* two or more terms joined by one operator: parenthesised inside another */
};

struct items {
	struct item *v;
	size_t n, alloc;
};

struct seen {
	char *key; /* a short name not in the table ("GPLv3+", "GPL-2+ with OpenSSL exception") */
	const char *id;
};

/* One copyright file being turned into an expression. */
struct render {
	const struct copyright *c;
	const char *origin;
	const struct dep5_refs *doc; /* the document's LicenseRefs so far */
	struct dep5_refs pending;    /* the ones this file adds, kept only if it succeeds */
	struct seen *seen;
	size_t n_seen, alloc_seen;
	int overflow; /* a MAX_* bound was hit: the file declares nothing */
};

static int ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* Short names compare without case and with any run of blanks as one space. */
static int same_name(const char *a, const char *b)
{
	for (;;) {
		if ((*a == ' ' || *a == '\t') && (*b == ' ' || *b == '\t')) {
			a += strspn(a, " \t");
			b += strspn(b, " \t");
		} else if (*a && ascii_lower(*a) == ascii_lower(*b)) {
			a++;
			b++;
		} else {
			return !*a && !*b;
		}
	}
}

/* `key`'s licence text: its stand-alone License paragraph, or a Files paragraph of it alone. */
static char *find_text(const struct render *rd, const char *key)
{
	const struct copyright *c = rd->c;
	size_t i;

	if (same_name(key, "public-domain"))
		return xstrdup(public_domain_note);
	for (i = 0; i < c->n_alone; i++)
		if (c->alone[i].text && same_name(c->alone[i].first, key))
			return xstrdup(c->alone[i].text);
	for (i = 0; i < c->n_files; i++)
		if (c->files[i].text && same_name(c->files[i].first, key))
			return xstrdup(c->files[i].text);
	return xasprintf("The machine-readable copyright file names this licence '%s' without "
			 "giving its text.", key);
}

/* "LicenseRef-" and `name` with what SPDX ids cannot hold made '-' ("+" made "-plus-"). */
static char *ref_base(const char *name)
{
	struct buf b = { 0 };
	const char *s;

	buf_adds(&b, "LicenseRef-");
	for (s = name; *s && b.len < 11 + MAX_ID; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.')
			buf_add(&b, s, 1);
		else if (c == '+')
			buf_adds(&b, b.p[b.len - 1] == '-' ? "plus-" : "-plus-");
		else if (b.p[b.len - 1] != '-')
			buf_adds(&b, "-");
	}
	while (b.p[b.len - 1] == '-')
		b.p[--b.len] = 0;
	if (b.len == 10)
		buf_adds(&b, "-unnamed");
	return buf_detach(&b);
}

static const struct dep5_ref *ref_find(const struct dep5_refs *r, const char *name,
				       const char *text, const char *id)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (id ? !strcmp(r->v[i].id, id)
		       : same_name(r->v[i].name, name) && !strcmp(r->v[i].text, text))
			return &r->v[i];
	return NULL;
}

/* The LicenseRef of `name` with `text` (taken): the document's or this file's, else a new one. */
static const char *ref_id(struct render *rd, const char *name, char *text)
{
	const struct dep5_ref *have = ref_find(rd->doc, name, text, NULL);
	struct dep5_ref *ref;
	char *base, *id;
	unsigned k = 2;

	if (!have)
		have = ref_find(&rd->pending, name, text, NULL);
	if (have || rd->doc->n + rd->pending.n >= MAX_REFS) {
		rd->overflow |= !have;
		free(text);
		return have ? have->id : "LicenseRef-unnamed";
	}
	base = ref_base(name);
	id = xstrdup(base);
	while (ref_find(rd->doc, NULL, NULL, id) || ref_find(&rd->pending, NULL, NULL, id)) {
		free(id);
		id = xasprintf("%s-%u", base, k++);
	}
	free(base);
	ALLOC_GROW(rd->pending.v, rd->pending.n + 1, rd->pending.alloc);
	ref = &rd->pending.v[rd->pending.n++];
	ref->id = id;
	ref->name = xstrdup(name);
	ref->text = text;
	ref->origin = xstrdup(rd->origin);
	return id;
}

/* A leaf outside the table: "NAME" or "NAME with KEYWORDS exception", as a LicenseRef. */
static char *ref_for(struct render *rd, const struct node *nd)
{
	char *key = nd->exc ? xasprintf("%.*s with %.*s exception", (int)nd->name_len, nd->name,
					(int)nd->exc_len, nd->exc)
			    : xstrndup(nd->name, nd->name_len);
	struct seen *sn;
	size_t i;

	for (i = 0; i < rd->n_seen; i++)
		if (same_name(rd->seen[i].key, key)) {
			free(key);
			return xstrdup(rd->seen[i].id);
		}
	if (rd->n_seen == MAX_TERMS) {
		rd->overflow = 1;
		free(key);
		return xstrdup("LicenseRef-unnamed");
	}
	ALLOC_GROW(rd->seen, rd->n_seen + 1, rd->alloc_seen);
	sn = &rd->seen[rd->n_seen++];
	sn->key = key;
	sn->id = ref_id(rd, key, find_text(rd, key));
	return xstrdup(sn->id);
}

static void items_add(struct render *rd, struct items *it, char *s, int compound)
{
	size_t i;

	for (i = 0; i < it->n; i++)
		if (!strcmp(it->v[i].s, s)) {
			free(s);
			return;
		}
	if (it->n == MAX_TERMS) {
		rd->overflow = 1;
		free(s);
		return;
	}
	ALLOC_GROW(it->v, it->n + 1, it->alloc);
	it->v[it->n].s = s;
	it->v[it->n++].compound = compound;
}

/* Join (and free) the items with `op`; one item stands alone. */
static char *items_join(struct items *it, enum op op, int *compound)
{
	struct buf b = { 0 };
	size_t i;

	*compound = it->n > 1 || (it->n == 1 && it->v[0].compound);
	for (i = 0; i < it->n; i++) {
		int paren = it->n > 1 && it->v[i].compound;

		buf_addf(&b, "%s%s%s%s", i ? (op == OP_AND ? " AND " : " OR ") : "",
			 paren ? "(" : "", it->v[i].s, paren ? ")" : "");
		free(it->v[i].s);
	}
	free(it->v);
	memset(it, 0, sizeof(*it));
	return buf_detach(&b);
}

static char *render(struct render *rd, const struct expr *x, int i, int *compound);

/* Flatten nested uses of `op` (A and (B and C) = A and B and C) into distinct items. */
static void collect(struct render *rd, const struct expr *x, int i, enum op op, struct items *it)
{
	const struct node *nd = &x->nodes[i];
	int compound;
	char *s;

	if (nd->op == op) {
		collect(rd, x, nd->l, op, it);
		collect(rd, x, nd->r, op, it);
		return;
	}
	s = render(rd, x, i, &compound);
	items_add(rd, it, s, compound);
}

static char *render(struct render *rd, const struct expr *x, int i, int *compound)
{
	const struct node *nd = &x->nodes[i];
	struct items it = { 0 };
	char *s;

	*compound = 0;
	if (nd->op == OP_LEAF) {
		s = spdx_leaf(nd);
		return s ? s : ref_for(rd, nd);
	}
	collect(rd, x, i, nd->op, &it);
	return items_join(&it, nd->op, compound);
}

static void refs_move(struct dep5_refs *to, struct dep5_refs *from)
{
	size_t i;

	for (i = 0; i < from->n; i++) {
		ALLOC_GROW(to->v, to->n + 1, to->alloc);
		to->v[to->n++] = from->v[i];
	}
	free(from->v);
	memset(from, 0, sizeof(*from));
}

/* Every Files paragraph's License into `all`. NULL, or why the file declares nothing. */
static const char *combine(struct render *rd, struct expr *x, struct items *all)
{
	size_t i, leaves = 0;

	for (i = 0; i < rd->c->n_files; i++) {
		int root, k;

		x->n_nodes = 0;
		root = parse_line(x, rd->c->files[i].first);
		if (root < 0) {
			log_debug("%s: License '%s' is not a DEP-5 licence expression", rd->origin,
				  rd->c->files[i].first);
			return "a License line cannot be parsed";
		}
		for (k = 0; k < (int)x->n_nodes; k++)
			leaves += x->nodes[k].op == OP_LEAF;
		if (leaves > MAX_LEAVES)
			return "too many licence names";
		collect(rd, x, root, OP_AND, all);
		if (rd->overflow)
			return "too many distinct licences";
	}
	return NULL;
}

char *dep5_expression(const char *data, size_t len, const char *origin, struct dep5_refs *refs)
{
	struct copyright c = { 0 };
	struct render rd = { .c = &c, .origin = origin, .doc = refs };
	struct expr *x = xcalloc(1, sizeof(*x));
	struct items all = { 0 };
	const char *why = load(&c, data, len, origin);
	char *expr = NULL;
	int compound;
	size_t i;

	if (!why)
		why = combine(&rd, x, &all);
	expr = items_join(&all, OP_AND, &compound);
	if (why) {
		log_debug("%s: %s: licence NOASSERTION", origin, why);
		free(expr);
		expr = NULL;
		dep5_refs_release(&rd.pending);
	}
	refs_move(refs, &rd.pending);
	for (i = 0; i < rd.n_seen; i++)
		free(rd.seen[i].key);
	free(rd.seen);
	free(x->nodes);
	free(x);
	copyright_release(&c);
	return expr;
}

int dep5_read(int rootfd, const char *package, struct buf *out, const char **kind)
{
	char *rel = xasprintf("usr/share/doc/%s/copyright", package);
	/* A FIFO planted there must not wait for a writer. */
	int fd = beneath_open_regular(rootfd, rel, 0, kind);

	free(rel);
	out->len = 0;
	if (fd < 0)
		return fd;
	return readfile_read_fd(fd, DEP5_MAX_SIZE, out, NULL);
}

void dep5_refs_release(struct dep5_refs *refs)
{
	size_t i;

	for (i = 0; i < refs->n; i++) {
		free(refs->v[i].id);
		free(refs->v[i].name);
		free(refs->v[i].text);
		free(refs->v[i].origin);
	}
	free(refs->v);
	memset(refs, 0, sizeof(*refs));
}

void dep5_texts_init(struct dep5_texts *t, size_t n)
{
	t->v = xcalloc(n + 1, sizeof(*t->v));
	t->err = xcalloc(n + 1, sizeof(*t->err));
	t->n = n;
}

void dep5_texts_release(struct dep5_texts *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		buf_release(&t->v[i]);
	free(t->v);
	free(t->err);
	memset(t, 0, sizeof(*t));
}
