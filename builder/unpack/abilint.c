/*
 * The multiarch lint's ABI check (abilint.h). The plan says where a library's ABI changed; the
 * control data of each unpacked package says what it was built against: dpkg-shlibdeps names
 * the library package it linked with, so an old name there is a binary of the old ABI (or one
 * claiming both ABIs, which one binary of these architectures cannot have). Such a package
 * resolves when an alternative or another package's Provides satisfy the old name.
 */
#include "abilint.h"

#include <stdlib.h>
#include <string.h>

#include "debian/relation.h"
#include "debian/t64.h"
#include "lib/log.h"

/* Warn for `k` about each old name in one relation field; returns the warnings. */
static unsigned check_field(const struct plan *p, const struct pkg *k, const char *arch,
			    const char *v, struct strv *seen)
{
	struct relation_iter it;
	struct relation r;
	unsigned n = 0;

	relation_iter_init(&it, v, strlen(v));
	while (relation_next(&it, &r) > 0) {
		char *name = xstrndup(r.name, r.name_len);
		const struct plan_abi_rename *a = plan_abi_rename_find(p, arch, name);

		if (a && !strv_contains(seen, name)) {
			strv_push(seen, name);
			log_warn("multiarch lint: '%s:%s=%s' depends on '%s', the name of '%s' "
				 "before Debian's 64-bit time_t transition: on %s, where '%s' does "
				 "not provide it, " T64_WHY "; use a build of '%s' for this release",
				 k->pe->name, k->pe->arch, k->pe->version, name, a->new_name, arch,
				 a->new_name, k->pe->name);
			n++;
		}
		free(name);
	}
	return n;
}

unsigned abilint_warn(const struct plan *p, const struct pkg *pkgs, size_t n)
{
	static const char *const fields[] = { "Pre-Depends", "Depends" };
	unsigned warned = 0;
	size_t i, f;

	if (!p->n_abi_renames)
		return 0;
	for (i = 0; i < n; i++) {
		const struct pkg *k = &pkgs[i];
		const char *arch = strcmp(k->pe->arch, "all") ? k->pe->arch : p->primary;
		struct strv seen = { 0 };

		for (f = 0; arch && f < 2; f++) {
			const char *v = deb_control_get(&k->ctl, fields[f]);

			if (v)
				warned += check_field(p, k, arch, v, &seen);
		}
		strv_release(&seen);
	}
	return warned;
}
