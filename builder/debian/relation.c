#include "relation.h"

#include <string.h>

#include "lib/err.h"

static int is_sp(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static int is_sep(char c)
{
	return c == ',' || c == '|';
}

static const char *skip_sp(const char *s, const char *end)
{
	while (s < end && is_sp(*s))
		s++;
	return s;
}

static const char *name_end(const char *s, const char *end)
{
	while (s < end && !is_sp(*s) && !is_sep(*s) && *s != '(' && *s != ':' && *s != '[' &&
	       *s != '<')
		s++;
	return s;
}

static const char *arch_end(const char *s, const char *end)
{
	while (s < end && !is_sp(*s) && !is_sep(*s) && *s != '(' && *s != '[')
		s++;
	return s;
}

static const char *version_end(const char *s, const char *end)
{
	while (s < end && !is_sp(*s) && !is_sep(*s) && *s != ')')
		s++;
	return s;
}

static int parse_op(const char **s, const char *end)
{
	static const struct { const char *op; enum relation_op rop; } ops[] = {
		{ "<<", RELATION_LT }, { "<=", RELATION_LE }, { ">>", RELATION_GT },
		{ ">=", RELATION_GE }, { "=", RELATION_EQ },
		{ "<", RELATION_LE }, { ">", RELATION_GE }, /* obsolete forms, as dpkg reads them */
	};
	size_t i, n;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		n = strlen(ops[i].op);
		if ((size_t)(end - *s) >= n && !memcmp(*s, ops[i].op, n)) {
			*s += n;
			return (int)ops[i].rop;
		}
	}
	return -1;
}

/* "(op version)" at `p`, which is '('. The position after ')', or NULL with it->why. */
static const char *parse_version(struct relation_iter *it, const char *p, struct relation *r)
{
	const char *end = it->end;
	int op;

	p = skip_sp(p + 1, end);
	if ((op = parse_op(&p, end)) < 0)
		return (it->why = "unknown version operator", NULL);
	r->op = (enum relation_op)op;
	r->version = p = skip_sp(p, end);
	p = version_end(p, end);
	r->version_len = (size_t)(p - r->version);
	if (!r->version_len)
		return (it->why = "missing version", NULL);
	if (r->version_len >= RELATION_NAME_MAX)
		return (it->why = "version too long", NULL);
	p = skip_sp(p, end);
	if (p >= end || *p != ')')
		return (it->why = "missing ')' after the version", NULL);
	return p + 1;
}

/* Skip "[archs]" and "<profiles>" (source packages' restrictions). NULL if one is not closed. */
static const char *skip_restrictions(struct relation_iter *it, const char *p)
{
	const char *end = it->end;
	char close;

	for (p = skip_sp(p, end); p < end && (*p == '[' || *p == '<'); p = skip_sp(p, end)) {
		close = *p == '[' ? ']' : '>';
		while (++p < end && *p != close && !is_sep(*p))
			;
		if (p >= end || *p != close) {
			it->why = close == ']' ? "unterminated '['" : "unterminated '<'";
			return NULL;
		}
		p++;
	}
	return p;
}

/* One relation starting at `p`. The position after it, or NULL with it->why. */
static const char *parse_relation(struct relation_iter *it, const char *p, struct relation *r)
{
	const char *end = it->end;

	r->name = p = skip_sp(p, end);
	p = name_end(p, end);
	r->name_len = (size_t)(p - r->name);
	if (!r->name_len)
		return (it->why = "missing package name", NULL);
	if (r->name_len >= RELATION_NAME_MAX)
		return (it->why = "package name too long", NULL);
	if (p < end && *p == ':') {
		r->arch = ++p;
		p = arch_end(p, end);
		r->arch_len = (size_t)(p - r->arch);
		if (!r->arch_len)
			return (it->why = "missing architecture after ':'", NULL);
		if (r->arch_len >= RELATION_ARCH_MAX)
			return (it->why = "architecture qualifier too long", NULL);
	}
	p = skip_sp(p, end);
	if (p < end && *p == '(' && !(p = parse_version(it, p, r)))
		return NULL;
	if (!(p = skip_restrictions(it, p)))
		return NULL;
	if (p < end && !is_sep(*p))
		return (it->why = "unexpected text after a relation", NULL);
	return p;
}

void relation_iter_init(struct relation_iter *it, const char *value, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->p = value;
	it->end = value + len;
}

int relation_next(struct relation_iter *it, struct relation *r)
{
	const char *p = it->p;

	memset(r, 0, sizeof(*r));
	r->alt = it->in_group;
	if (!it->in_group) {
		/* empty groups ("a, , b", a trailing comma) carry nothing: skipped */
		while ((p = skip_sp(p, it->end)) < it->end && *p == ',')
			p++;
		if (p == it->end) {
			it->p = p;
			return 0;
		}
	}
	if (!(p = parse_relation(it, p, r))) {
		it->p = it->end; /* nothing more after an error */
		it->in_group = 0;
		return -MKI_E_PARSE;
	}
	it->in_group = p < it->end && *p == '|';
	it->p = p < it->end ? p + 1 : p;
	return 1;
}

int relation_op_holds(enum relation_op op, int cmp)
{
	switch (op) {
	case RELATION_LT:
		return cmp < 0;
	case RELATION_LE:
		return cmp <= 0;
	case RELATION_EQ:
		return cmp == 0;
	case RELATION_GE:
		return cmp >= 0;
	case RELATION_GT:
		return cmp > 0;
	default:
		return 1;
	}
}
