/*
 * libconfig's traps in a recipe's text. libconfig joins adjacent string literals ("a" "b" is
 * "ab"), so a missing comma in a package list makes one unknown package that only the resolver
 * reports; and a list of groups written [ { ... } ] is a bare "syntax error". A small lexer
 * (comments, strings with escapes, names, punctuation) finds both before libconfig reads the text.
 */
#include "recipe_lint.h"

#include <string.h>

#include "lib/err.h"
#include "lib/log.h"

#define SHOWN 40 /* characters of a string a message quotes */

enum tok { TOK_NONE, TOK_STRING, TOK_NAME, TOK_PUNCT };

struct lexer {
	const char *file;
	const char *p;
	unsigned line;
	/* the current token */
	enum tok kind;
	const char *start;
	size_t len;
	unsigned tok_line;
};

/* Past blanks and the three comment forms; counts lines. */
static void skip_space(struct lexer *lx)
{
	for (;;) {
		const char *p = lx->p;

		if (*p == '\n')
			lx->line++;
		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\f') {
			lx->p++;
		} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
			lx->p += strcspn(p, "\n");
		} else if (p[0] == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");

			for (end = end ? end + 2 : p + strlen(p); lx->p < end; lx->p++)
				lx->line += *lx->p == '\n';
		} else {
			return;
		}
	}
}

/* A string literal's body, backslash escapes included; an unterminated one runs to the end. */
static void lex_string(struct lexer *lx)
{
	const char *p = lx->p + 1;

	while (*p && *p != '"') {
		if (*p == '\\' && p[1])
			p++;
		lx->line += *p == '\n';
		p++;
	}
	lx->kind = TOK_STRING;
	lx->start = lx->p + 1;
	lx->len = (size_t)(p - lx->p - 1);
	lx->p = *p ? p + 1 : p;
}

/* The next token; 0 at the end of the text. */
static int lex_next(struct lexer *lx)
{
	skip_space(lx);
	lx->tok_line = lx->line;
	lx->start = lx->p;
	if (!*lx->p)
		return 0;
	if (*lx->p == '"') {
		lex_string(lx);
	} else if (strchr("[](){}=:;,", *lx->p)) {
		lx->kind = TOK_PUNCT;
		lx->len = 1;
		lx->p++;
	} else {
		lx->kind = TOK_NAME; /* a name, a number, a boolean or @include */
		lx->len = strcspn(lx->p, " \t\r\n\f\"[](){}=:;,#/");
		lx->len += !lx->len; /* a lone '/' */
		lx->p += lx->len;
	}
	return 1;
}

static int adjacent(const struct lexer *lx, const char *prev, size_t prev_len)
{
	log_error("%s:%u: missing comma between \"%.*s%s\" and \"%.*s%s\"? libconfig joins adjacent "
		  "strings into one; write one string where one is meant", lx->file, lx->tok_line,
		  (int)(prev_len > SHOWN ? SHOWN : prev_len), prev, prev_len > SHOWN ? "..." : "",
		  (int)(lx->len > SHOWN ? SHOWN : lx->len), lx->start, lx->len > SHOWN ? "..." : "");
	return -MKI_E_RECIPE;
}

/* What follows an opening bracket: [ { is a group list, [ ( or [ [ lists, { "x" a string list. */
static int after_open(const struct lexer *lx, char open, const char *key, unsigned line)
{
	char c = lx->kind == TOK_PUNCT ? *lx->start : 0;
	const char *what;

	if (open == '[' && c == '{')
		what = "is a list of groups: write ( { ... }, { ... } ), not [ ... ]";
	else if (open == '[' && (c == '(' || c == '['))
		what = "holds lists: write ( ( ... ), ( ... ) ), not [ ... ] (libconfig's [ ] holds "
		       "only strings, numbers and booleans)";
	else if (open == '{' && lx->kind == TOK_STRING)
		what = "is a list of strings: write [ \"a\", \"b\" ], not { ... } (a { } group holds "
		       "settings: key = value;)";
	else
		return 0;
	if (key)
		log_error("%s:%u: '%s' %s", lx->file, line, key, what);
	else
		log_error("%s:%u: this list %s", lx->file, line, what);
	return -MKI_E_RECIPE;
}

int recipe_lint_text(const char *file, const char *text)
{
	struct lexer lx = { file, text, 1, TOK_NONE, NULL, 0, 1 };
	const char *prev = NULL, *name = NULL;
	size_t prev_len = 0, name_len = 0;
	char key[64] = "", open_key[64] = "", open = 0;
	unsigned open_line = 0;
	int ret = 0;

	while (!ret && lex_next(&lx)) {
		char c = lx.kind == TOK_PUNCT ? *lx.start : 0;

		if (lx.kind == TOK_STRING && prev)
			ret = adjacent(&lx, prev, prev_len);
		if (!ret && open)
			ret = after_open(&lx, open, open_key[0] ? open_key : NULL, open_line);
		prev = lx.kind == TOK_STRING ? lx.start : NULL;
		prev_len = lx.len;
		open = c == '[' || c == '{' ? c : 0;
		open_line = lx.tok_line;
		if (open)
			memcpy(open_key, key, sizeof(key));
		if ((c == '=' || c == ':') && name && name_len < sizeof(key)) {
			memcpy(key, name, name_len);
			key[name_len] = 0;
		} else if (c == '(' || c == '{')
			key[0] = 0; /* a list's or a group's members name themselves */
		name = lx.kind == TOK_NAME ? lx.start : NULL;
		name_len = lx.len;
	}
	return ret;
}
