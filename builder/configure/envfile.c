/*
 * Shell assignment files read as sh (POSIX, dash) reads them and written back whole
 * (envfile.h). The scanner follows sh's token recognition: a backslash escapes the next byte (a
 * backslash-newline joins lines), single quotes hold everything up to the next one, double
 * quotes end at an unescaped one and may hold $(...) and `...`, an unquoted '#' at the start of
 * a word comments to the end of the line, and an unquoted newline ends the statement. What it
 * does not evaluate (parameter expansion, command substitution) only marks a value as computed.
 */
#include "envfile.h"

#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/x.h"

#define DEPTH_MAX 32 /* nested $( ) and quotes: a hostile file cannot exhaust the stack */
#define KEYS_MAX 16

struct scan {
	const char *t, *file;
	size_t len, pos;
	unsigned line;
	int expands; /* a $ or ` sh evaluates: the value is computed, not read */
	int error;
};

static int env_name_char(int c)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int at(const struct scan *s, size_t off)
{
	return s->pos + off < s->len ? (unsigned char)s->t[s->pos + off] : -1;
}

static int fail(struct scan *s, unsigned line, const char *what)
{
	if (!s->error)
		log_error("%s:%u: %s: sh could not read the file as mkimage would write it; fix "
			  "the package or hook that wrote it", s->file, line, what);
	s->error = 1;
	return -MKI_E_IMAGE;
}

/* Consume one byte, counting lines; append it to `val` when given. */
static void take(struct scan *s, struct buf *val)
{
	if (s->t[s->pos] == '\n')
		s->line++;
	if (val)
		buf_add(val, s->t + s->pos, 1);
	s->pos++;
}

static int scan_nested(struct scan *s, int close, int depth);

/* After an opening '\'': everything up to the next one, literally. */
static int scan_single(struct scan *s, struct buf *val)
{
	unsigned line = s->line;

	while (at(s, 0) >= 0 && at(s, 0) != '\'')
		take(s, val);
	if (at(s, 0) < 0)
		return fail(s, line, "a single quote opened here is never closed");
	s->pos++;
	return 0;
}

/* After a '$': ${...}, $(...) or a plain expansion; the value is computed. */
static int scan_dollar(struct scan *s, int depth)
{
	s->expands = 1;
	if (at(s, 0) == '(') {
		s->pos++;
		return scan_nested(s, ')', depth + 1);
	}
	if (at(s, 0) == '{') {
		s->pos++;
		return scan_nested(s, '}', depth + 1);
	}
	return 0;
}

/* After an opening '"': up to the closing one; inside, \ escapes only $ ` " \ and newline. */
static int scan_double(struct scan *s, struct buf *val, int depth)
{
	unsigned line = s->line;
	int c;

	while ((c = at(s, 0)) >= 0 && c != '"' && !s->error) {
		if (c == '\\' && at(s, 1) == '\n') {
			s->pos++;
			take(s, NULL);
		} else if (c == '\\' && at(s, 1) >= 0 && strchr("$`\"\\", at(s, 1))) {
			s->pos++;
			take(s, val);
		} else if (c == '$') {
			s->pos++;
			scan_dollar(s, depth);
		} else if (c == '`') {
			s->pos++;
			s->expands = 1;
			scan_nested(s, '`', depth + 1);
		} else {
			take(s, val);
		}
	}
	if (s->error)
		return -MKI_E_IMAGE;
	if (c < 0)
		return fail(s, line, "a double quote opened here is never closed");
	s->pos++;
	return 0;
}

/* Inside $( ), ${ } or ` `: quotes and nesting followed up to `close`; nothing kept. */
static int scan_nested(struct scan *s, int close, int depth)
{
	unsigned line = s->line;
	int c, open = 0;

	if (depth > DEPTH_MAX)
		return fail(s, line, "quotes and substitutions nest too deep");
	while ((c = at(s, 0)) >= 0 && !s->error && (c != close || open)) {
		s->pos++;
		if (c == '\\' && at(s, 0) >= 0)
			take(s, NULL);
		else if (c == '\'' && close != '`')
			scan_single(s, NULL);
		else if (c == '"')
			scan_double(s, NULL, depth + 1);
		else if (c == '$')
			scan_dollar(s, depth);
		else if (c == '\n')
			s->line++;
		else if (close == ')' && c == '(')
			open++;
		else if (close == ')' && c == ')')
			open--;
	}
	if (s->error)
		return -MKI_E_IMAGE;
	if (c < 0)
		return fail(s, line, close == '`' ? "a command substitution ` opened here is never "
						    "closed" : "a $( or ${ opened here is never closed");
	s->pos++;
	return 0;
}

/* NAME= at the statement's start: NAME's length, else 0. */
static size_t assignment_name(const struct scan *s)
{
	size_t n = 0;
	int c;

	while ((c = at(s, n)) >= 0 &&
	       (c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		(n && c >= '0' && c <= '9')))
		n++;
	return n && at(s, n) == '=' ? n : 0;
}

/*
 * The statement's words after NAME= (or all of it): `val` gets the first word as sh reads it;
 * returns 1 when more than that word is there (a second word, ';', '|'...), else 0, or <0.
 */
static int scan_words(struct scan *s, struct buf *val)
{
	int c, in_word = 1, ended = 0, other = 0;

	while ((c = at(s, 0)) >= 0 && c != '\n' && !s->error) {
		if (c == ' ' || c == '\t') {
			ended |= in_word;
			in_word = 0;
			s->pos++;
			continue;
		}
		if (c == '#' && !in_word) { /* a comment, to the end of the physical line */
			while (at(s, 0) >= 0 && at(s, 0) != '\n')
				s->pos++;
			continue;
		}
		other |= ended || strchr(";&|<>()", c);
		in_word = 1;
		s->pos++;
		if (c == '\\' && at(s, 0) == '\n')
			take(s, NULL);
		else if (c == '\\')
			at(s, 0) >= 0 ? take(s, val) : buf_adds(val, "\\");
		else if (c == '\'')
			scan_single(s, val);
		else if (c == '"')
			scan_double(s, val, 0);
		else if (c == '`')
			s->expands = 1, scan_nested(s, '`', 1);
		else if (c == '$')
			scan_dollar(s, 0);
		else
			buf_add(val, s->t + s->pos - 1, 1);
	}
	if (c == '\n')
		take(s, NULL);
	return s->error ? -MKI_E_IMAGE : other;
}

/* A "#NAME=" comment line's NAME, or NULL. */
static char *comment_key(const struct scan *s)
{
	struct scan c = *s;
	size_t n;

	c.pos++;
	n = assignment_name(&c);
	return n ? xstrndup(s->t + s->pos + 1, n) : NULL;
}

static int scan_statement(struct scan *s, struct envfile_stmt *st)
{
	struct buf val = { 0 };
	const char *name;
	size_t n;
	int r;

	while (at(s, 0) == ' ' || at(s, 0) == '\t')
		s->pos++;
	if (at(s, 0) < 0 || at(s, 0) == '\n' || at(s, 0) == '#') {
		st->kind = at(s, 0) == '#' ? ENVFILE_COMMENT : ENVFILE_BLANK;
		st->key = at(s, 0) == '#' ? comment_key(s) : NULL;
		while (at(s, 0) >= 0 && at(s, 0) != '\n')
			s->pos++;
		if (at(s, 0) == '\n')
			take(s, NULL);
		return 0;
	}
	name = s->t + s->pos;
	n = assignment_name(s);
	s->expands = 0;
	s->pos += n ? n + 1 : 0;
	buf_adds(&val, "");
	r = scan_words(s, &val);
	st->kind = r == 0 && n ? ENVFILE_ASSIGN : ENVFILE_OTHER;
	if (st->kind == ENVFILE_ASSIGN) {
		st->key = xstrndup(name, n);
		st->value = s->expands ? NULL : buf_detach(&val);
	}
	buf_release(&val);
	return r < 0 ? r : 0;
}

/* A NUL byte: sh (dash drops it, bash stops there) would not read what mkimage reads. */
static int check_nul(const char *text, size_t len, const char *file)
{
	const char *nul = memchr(text, 0, len), *p;
	unsigned line = 1;

	if (!nul)
		return 0;
	for (p = text; p < nul; p++)
		line += *p == '\n';
	log_error("%s:%u: a NUL byte: sh would not read the file as mkimage would write it; fix "
		  "the package or hook that wrote it", file, line);
	return -MKI_E_IMAGE;
}

int envfile_parse(const char *text, size_t len, const char *file, struct envfile *out)
{
	struct scan s = { .t = text, .file = file, .len = len, .line = 1 };
	int ret = check_nul(text, len, file);
	size_t cap = 0;

	out->v = NULL;
	out->n = 0;
	while (!ret && s.pos < len) {
		struct envfile_stmt *st;

		ALLOC_GROW(out->v, out->n + 1, cap);
		st = &out->v[out->n++];
		*st = (struct envfile_stmt){ .start = s.pos, .line = s.line };
		ret = scan_statement(&s, st);
		st->end = s.pos;
	}
	if (ret)
		envfile_release(out);
	return ret;
}

void envfile_release(struct envfile *e)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		free(e->v[i].key);
		free(e->v[i].value);
	}
	free(e->v);
	e->v = NULL;
	e->n = 0;
}

void envfile_quote(const char *v, struct buf *out)
{
	buf_adds(out, "\"");
	for (; *v; v++) {
		if (strchr("\"$`\\", *v))
			buf_adds(out, "\\");
		buf_add(out, v, 1);
	}
	buf_adds(out, "\"");
}

/* Whether `key` is a word of the statement's bytes (a command sh would run that may set it). */
static int mentions(const char *text, const struct envfile_stmt *st, const char *key)
{
	size_t n = strlen(key), i;

	for (i = st->start; i + n <= st->end; i++) {
		const char *p = text + i;

		if (memcmp(p, key, n))
			continue;
		if ((i == st->start || !env_name_char(p[-1])) &&
		    (i + n == st->end || !env_name_char(p[n])))
			return 1;
	}
	return 0;
}

/* What becomes of each statement: which key replaces it (index into kv), -1 keep, -2 drop. */
static int plan_keys(const char *text, const struct envfile *e, const char *file,
		     const char *const *kv, int *fate, size_t *placed)
{
	size_t i, k;

	for (k = 0; kv[k]; k += 2)
		placed[k / 2] = (size_t)-1;
	for (i = 0; i < e->n; i++) {
		const struct envfile_stmt *st = &e->v[i];

		fate[i] = -1;
		for (k = 0; kv[k]; k += 2) {
			if (st->kind == ENVFILE_OTHER && mentions(text, st, kv[k])) {
				log_error("%s:%u: '%s' is named in a statement mkimage cannot rewrite "
					  "(several commands, export, a compound command): make it "
					  "one line %s=\"...\" or remove it", file, st->line,
					  kv[k], kv[k]);
				return -MKI_E_IMAGE;
			}
			if (st->kind != ENVFILE_ASSIGN || strcmp(st->key, kv[k]))
				continue;
			fate[i] = placed[k / 2] == (size_t)-1 ? (int)k : -2;
			if (fate[i] >= 0)
				placed[k / 2] = i;
		}
	}
	/* a key never assigned takes the place of its first "#KEY=" example */
	for (k = 0; kv[k]; k += 2)
		for (i = 0; i < e->n && placed[k / 2] == (size_t)-1; i++)
			if (e->v[i].kind == ENVFILE_COMMENT && e->v[i].key &&
			    !strcmp(e->v[i].key, kv[k]) && fate[i] == -1) {
				fate[i] = (int)k;
				placed[k / 2] = i;
			}
	return 0;
}

static int check_values(const char *file, const char *const *kv)
{
	size_t k;
	const char *p;

	for (k = 0; kv[k]; k += 2)
		for (p = kv[k + 1]; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				log_error("cannot set %s in '%s': its value holds a control "
					  "character (\\x%02x)", kv[k], file, (unsigned char)*p);
				return -MKI_E_IMAGE;
			}
	return k / 2 <= KEYS_MAX ? 0 : -MKI_E_IMAGE;
}

static void put_assignment(const char *key, const char *value, struct buf *out)
{
	buf_addf(out, "%s=", key);
	envfile_quote(value, out);
	buf_adds(out, "\n");
}

int envfile_set(const char *text, size_t len, const char *file, const char *head,
		const char *const *kv, struct buf *out)
{
	struct envfile e = { 0 };
	size_t placed[KEYS_MAX], i, k;
	int *fate = NULL, ret = check_values(file, kv);

	if (!text) {
		text = head;
		len = strlen(head);
	}
	if (!ret)
		ret = envfile_parse(text, len, file, &e);
	fate = xcalloc(e.n + 1, sizeof(*fate));
	if (!ret)
		ret = plan_keys(text, &e, file, kv, fate, placed);
	buf_adds(out, "");
	for (i = 0; !ret && i < e.n; i++) {
		if (fate[i] >= 0)
			put_assignment(kv[fate[i]], kv[fate[i] + 1], out);
		else if (fate[i] == -1)
			buf_add(out, text + e.v[i].start, e.v[i].end - e.v[i].start);
		if (fate[i] == -1 && e.v[i].end == len && len && text[len - 1] != '\n')
			buf_adds(out, "\n");
	}
	for (k = 0; !ret && kv[k]; k += 2)
		if (placed[k / 2] == (size_t)-1)
			put_assignment(kv[k], kv[k + 1], out);
	free(fate);
	envfile_release(&e);
	return ret;
}
