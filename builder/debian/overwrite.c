#include "overwrite.h"

#include <stdio.h>
#include <string.h>

#include "deb.h"
#include "relation.h"

/* Does relation `r` of a Replaces field name package `q`? */
static int names(const struct relation *r, const struct overwrite_pkg *q)
{
	char ver[RELATION_NAME_MAX];

	if (r->name_len != strlen(q->name) || memcmp(r->name, q->name, r->name_len))
		return 0;
	if (r->arch && !(r->arch_len == 3 && !memcmp(r->arch, "any", 3)) &&
	    (!q->arch || r->arch_len != strlen(q->arch) || memcmp(r->arch, q->arch, r->arch_len)))
		return 0;
	if (r->op == RELATION_ANY)
		return 1;
	if (!q->version)
		return 0;
	snprintf(ver, sizeof(ver), "%.*s", (int)r->version_len, r->version);
	return relation_op_holds(r->op, deb_version_cmp(q->version, ver));
}

int overwrite_replaces(const struct overwrite_pkg *k, const struct overwrite_pkg *q)
{
	struct relation_iter it;
	struct relation r;

	if (!k->replaces)
		return 0;
	relation_iter_init(&it, k->replaces, strlen(k->replaces));
	while (relation_next(&it, &r) > 0)
		if (names(&r, q))
			return 1;
	return 0;
}

/* Are all owners other-arch instances of M-A same package `k` (dpkg's shared files)? */
static int shared_instance(const struct overwrite_pkg *k, const struct overwrite_pkg *const *owners,
			   size_t n)
{
	size_t i;

	if (!k->ma_same)
		return 0;
	for (i = 0; i < n; i++)
		if (!owners[i] || !owners[i]->ma_same || strcmp(owners[i]->name, k->name))
			return 0;
	return 1;
}

enum overwrite_verdict overwrite_decide(const struct overwrite_pkg *k,
					const struct overwrite_pkg *const *owners, size_t n,
					size_t *culprit)
{
	size_t i;

	if (shared_instance(k, owners, n))
		return OVERWRITE_SHARED;
	/* dpkg: when the installed owners replace the package being unpacked, theirs stays */
	for (i = 0; i < n && owners[i] && overwrite_replaces(owners[i], k); i++)
		;
	if (i == n)
		return OVERWRITE_KEEP;
	for (i = 0; i < n; i++)
		if (!owners[i] || !overwrite_replaces(k, owners[i])) {
			*culprit = i;
			return OVERWRITE_CONFLICT;
		}
	return OVERWRITE_TAKE;
}

enum overwrite_shape overwrite_shape(enum overwrite_kind have, enum overwrite_kind ships)
{
	if (have == OVERWRITE_NONE)
		return OVERWRITE_WRITE;
	if (ships == OVERWRITE_DIR)
		return have == OVERWRITE_DIR    ? OVERWRITE_WRITE :
		       have == OVERWRITE_LINK   ? OVERWRITE_FOLLOW :
						  OVERWRITE_MISMATCH;
	if (have != OVERWRITE_DIR)
		return OVERWRITE_WRITE;
	return ships == OVERWRITE_LINK ? OVERWRITE_KEEP_DIR : OVERWRITE_MISMATCH;
}
