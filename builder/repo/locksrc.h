/* The sources a lock file records, turned back into --source specifications (mkimage --locked). */
#ifndef MKI_LOCKSRC_H
#define MKI_LOCKSRC_H

#include "lib/str.h"
#include "recipe/recipe.h"

/**
 * Read `lock_file` and append to `specs` one "URI SUITE COMPONENT... signed-by=KEYRING" per
 * recorded source (trusted=yes when the lock names no key). KEYRING is the first keyring holding
 * every fingerprint the lock records: the recipe's source keyrings, then the host's
 * trusted.gpg.d (under `apt_root`, settings.h), then /usr/share/keyrings. Appends
 * nothing for a lock that predates recorded components (the recipe's sources are used then).
 * 0; -MKI_E_LOCK for an unreadable lock; -MKI_E_SOURCE, naming the fingerprints, when no keyring
 * holds them (all logged).
 */
int locksrc_specs(const char *lock_file, const struct recipe *r, const char *apt_root,
		  struct strv *specs);

#endif
