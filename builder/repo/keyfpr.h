/* Key fingerprints of OpenPGP keyrings: how a lock file names the keys that signed its sources. */
#ifndef MKI_KEYFPR_H
#define MKI_KEYFPR_H

#include "lib/str.h"

/**
 * The primary-key fingerprints (upper-case hex) of the binary or armored keyring `file`, sorted,
 * into `out` (appended). Runs `gpg --show-keys` (nothing is imported) in a throwaway home
 * under $TMPDIR, with a timeout. 0, or -MKI_E_SOURCE when gpg cannot run or the file holds no
 * key (logged).
 */
int keyfpr_list(const char *file, struct strv *out);

/**
 * The first of `candidates` (keyring paths, in order) that holds every fingerprint of `want`;
 * unreadable or keyless candidates are skipped silently. Returns the index, or -1.
 */
int keyfpr_find(const struct strv *want, const struct strv *candidates);

#endif
