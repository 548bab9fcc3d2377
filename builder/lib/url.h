/* URLs of repository files: a helper any stage may include (no network, no state). */
#ifndef MKI_URL_H
#define MKI_URL_H

#include <stddef.h>

/**
 * The URL of repository file `path` (a Packages "Filename:", e.g. "pool/main/b/busybox/
 * busybox_1:1.35.0-4_armhf.deb") under `base`, percent-encoding every byte of `path` except
 * unreserved characters and '/', as apt does (so ':' from epochs and '+' reach the server intact).
 * A new string.
 */
char *url_join(const char *base, const char *path);

/**
 * The "host[:port]" of `url` into `out` (`n` bytes), without its scheme, userinfo ("user:pass@"),
 * path or query: what may be printed or recorded about a server. 0, or -1 when `url` has no
 * host (file:///...) or it does not fit.
 */
int url_host(const char *url, char *out, size_t n);

/**
 * `url` with its userinfo ("user:pass@") replaced by "***@", for messages that name a source;
 * a new string (the same text when there is none).
 */
char *url_redact(const char *url);

#endif
