/*
 * Fuzz the DEP-5 copyright parser: any input ends in NOASSERTION or in an expression made only of
 * SPDX idstring characters, balanced parentheses and AND/OR/WITH, whose every LicenseRef is one
 * of the document's refs (each with a well-formed id and a text); the same input gives the same
 * expression twice, and a refused input adds no ref.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "debian/dep5.h"
#include "lib/log.h"

static int idstring(const char *s, size_t n)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789.-+";
	size_t i;

	for (i = 0; i < n; i++)
		if (!s[i] || !strchr(chars, s[i]))
			return 0;
	return n > 0;
}

static const struct dep5_ref *find(const struct dep5_refs *refs, const char *id, size_t n)
{
	size_t i;

	for (i = 0; i < refs->n; i++)
		if (strlen(refs->v[i].id) == n && !strncmp(refs->v[i].id, id, n))
			return &refs->v[i];
	return NULL;
}

static void check_expression(const char *e, const struct dep5_refs *refs)
{
	int depth = 0;

	while (*e) {
		size_t n = strcspn(e, " ()");

		if (*e == '(' || *e == ')') {
			depth += *e == '(' ? 1 : -1;
			if (depth < 0)
				abort();
			e++;
			continue;
		}
		if (*e == ' ') {
			e++;
			continue;
		}
		if (!idstring(e, n))
			abort();
		if (!strncmp(e, "LicenseRef-", 11) && !find(refs, e, n))
			abort(); /* a LicenseRef the document would not define */
		e += n;
	}
	if (depth)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dep5_refs refs = { 0 }, again = { 0 };
	char *e, *e2;
	size_t i;

	log_set_level(LOG_QUIET);
	e = dep5_expression((const char *)data, size, "fuzz", &refs);
	e2 = dep5_expression((const char *)data, size, "fuzz", &again);
	if (!e != !e2 || (e && strcmp(e, e2)) || refs.n != again.n)
		abort();
	if (!e && refs.n)
		abort();
	if (e)
		check_expression(e, &refs);
	for (i = 0; i < refs.n; i++) {
		const char *id = refs.v[i].id;

		if (strncmp(id, "LicenseRef-", 11) || !idstring(id + 11, strlen(id + 11)) ||
		    strchr(id, '+') || !refs.v[i].text)
			abort();
	}
	free(e);
	free(e2);
	dep5_refs_release(&refs);
	dep5_refs_release(&again);
	return 0;
}
