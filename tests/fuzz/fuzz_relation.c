/*
 * Fuzz the relation reader (Depends, Provides, Conflicts...): every input ends in relations and
 * then the end or one specific error, every relation lies inside the input within its bounds,
 * and nothing past the input's length is read (the input is not NUL-terminated).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "debian/relation.h"
#include "lib/err.h"

static int inside(const uint8_t *data, size_t size, const char *p, size_t len)
{
	return p >= (const char *)data && p + len <= (const char *)data + size;
}

static void check(const uint8_t *data, size_t size, const struct relation *r, int first)
{
	if (!r->name_len || r->name_len >= RELATION_NAME_MAX || !inside(data, size, r->name,
									   r->name_len))
		abort();
	if (r->arch && (!r->arch_len || r->arch_len >= RELATION_ARCH_MAX ||
			!inside(data, size, r->arch, r->arch_len)))
		abort();
	if ((r->op == RELATION_ANY) != !r->version)
		abort(); /* a version exactly when there is an operator */
	if (r->version && (!r->version_len || r->version_len >= RELATION_NAME_MAX ||
			   !inside(data, size, r->version, r->version_len)))
		abort();
	if (first && r->alt)
		abort(); /* the first relation starts a group */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly `size` bytes, so that ASan sees any read past the end */
	char *copy = malloc(size ? size : 1);
	struct relation_iter it;
	struct relation r;
	size_t n = 0;
	int ret;

	memcpy(copy, data, size);
	relation_iter_init(&it, copy, size);
	while ((ret = relation_next(&it, &r)) > 0) {
		check((const uint8_t *)copy, size, &r, !n);
		if (++n > size)
			abort(); /* every relation consumes input */
	}
	if (ret < 0 && (ret != -MKI_E_PARSE || !it.why))
		abort();
	if (relation_next(&it, &r) != 0)
		abort(); /* the end, or an error, is where the reader stays */
	free(copy);
	return 0;
}
