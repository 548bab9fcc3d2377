#include "lockdiff.h"

#include <string.h>

#include "lib/err.h"
#include "recipe/lockfile.h"

static const char *src_of(const struct lock_pkg *p)
{
	return p->source ? p->source : p->name;
}

/* Lock packages are sorted by name, architecture, version (lockfile_read sorts them). */
static int key_cmp(const struct lock_pkg *a, const struct lock_pkg *b)
{
	int c = strcmp(a->name, b->name);

	return c ? c : strcmp(a->arch, b->arch);
}

static void one(FILE *out, const char *what, const struct lock_pkg *p)
{
	fprintf(out, "%-7s %s:%s %s (source %s)\n", what, p->name, p->arch, p->version, src_of(p));
}

/* A merge walk over the two sorted package lists. */
static void walk(const struct lockfile *o, const struct lockfile *n, FILE *out)
{
	size_t i = 0, j = 0;

	while (i < o->n_pkgs || j < n->n_pkgs) {
		const struct lock_pkg *a = i < o->n_pkgs ? &o->pkgs[i] : NULL;
		const struct lock_pkg *b = j < n->n_pkgs ? &n->pkgs[j] : NULL;
		int c = !a ? 1 : !b ? -1 : key_cmp(a, b);

		if (c < 0) {
			one(out, "removed", a);
			i++;
		} else if (c > 0) {
			one(out, "added", b);
			j++;
		} else {
			if (strcmp(a->version, b->version))
				fprintf(out, "changed %s:%s %s -> %s (source %s)\n", b->name, b->arch,
					a->version, b->version, src_of(b));
			else if (strcmp(a->sha256, b->sha256))
				one(out, "rebuilt", b);
			i++;
			j++;
		}
	}
}

int lockdiff_print(const char *old_file, const char *new_file, FILE *out)
{
	struct lockfile o, n;
	int ret;

	ret = lockfile_read(&o, old_file);
	if (ret)
		return -MKI_E_USAGE;
	ret = lockfile_read(&n, new_file);
	if (ret) {
		lockfile_release(&o);
		return -MKI_E_USAGE;
	}
	walk(&o, &n, out);
	lockfile_release(&o);
	lockfile_release(&n);
	return 0;
}
