/* URLs of repository files: a helper any stage may include (no network, no state). */
#ifndef MKI_URL_H
#define MKI_URL_H

/**
 * The URL of repository file `path` (a Packages "Filename:", e.g. "pool/main/b/busybox/
 * busybox_1:1.35.0-4_armhf.deb") under `base`, percent-encoding every byte of `path` except
 * unreserved characters and '/', as apt does (so ':' from epochs and '+' reach the server intact).
 * A new string.
 */
char *url_join(const char *base, const char *path);

#endif
