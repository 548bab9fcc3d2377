/*
 * The multiarch lint's ABI check (abilint.h). The resolver knows where a library's ABI changed
 * and which packages reach the library only through its old name (a package that Provides the
 * old name in the plan, such as an equivs stand-in, and no other alternative); the control data
 * of each unpacked package says what it was built against: dpkg-shlibdeps names the library
 * package it linked with, so the old name there is a binary of the old ABI, about to run with
 * the new library under the same soname.
 */
#include "abilint.h"

#include <stdlib.h>
#include <string.h>

#include "debian/relation.h"
#include "debian/t64.h"
#include "lib/log.h"

/* Does relation field `v` name package `name`, in any alternative? */
static int names(const char *v, const char *name)
{
	struct relation_iter it;
	struct relation r;
	size_t n = strlen(name);

	relation_iter_init(&it, v, strlen(v));
	while (relation_next(&it, &r) > 0)
		if (r.name_len == n && !memcmp(r.name, name, n))
			return 1;
	return 0;
}

/* The field of `k`'s control data naming `old`: "Pre-Depends", "Depends" or NULL. */
static const char *field_naming(const struct pkg *k, const char *old)
{
	static const char *const fields[] = { "Pre-Depends", "Depends" };
	const char *v;
	size_t f;

	for (f = 0; f < 2; f++)
		if ((v = deb_control_get(&k->ctl, fields[f])) && names(v, old))
			return fields[f];
	return NULL;
}

static unsigned check_pkg(const struct plan *p, const struct pkg *k)
{
	char *user = xasprintf("%s:%s", k->pe->name, k->pe->arch);
	unsigned n = 0;
	size_t i;

	for (i = 0; i < p->n_abi_renames; i++) {
		const struct plan_abi_rename *a = &p->abi_renames[i];
		const char *field;

		if (!strv_contains(&a->users, user) || !(field = field_naming(k, a->old_name)))
			continue;
		log_warn("multiarch lint: '%s=%s' names '%s' in its %s, the name of '%s' before "
			 "Debian's 64-bit time_t transition, met here only by a package providing "
			 "'%s': on %s '%s' does not provide it, " T64_WHY "; use a build of '%s' "
			 "for this release",
			 user, k->pe->version, a->old_name, field, a->new_name, a->old_name, a->arch,
			 a->new_name, k->pe->name);
		n++;
	}
	free(user);
	return n;
}

unsigned abilint_warn(const struct plan *p, const struct pkg *pkgs, size_t n)
{
	unsigned warned = 0;
	size_t i;

	for (i = 0; p->n_abi_renames && i < n; i++)
		warned += check_pkg(p, &pkgs[i]);
	return warned;
}
