/* debcontrol: the control file of a local .deb, read with libarchive (ar -> control.tar.*). */
#ifndef MKI_DEBCONTROL_H
#define MKI_DEBCONTROL_H

#include <stddef.h>

/* A control file larger than this is hostile: real ones are a few KiB. */
#define DEBCONTROL_MAX (1u << 20)

/**
 * Read `./control` from the .deb at `path` into a new NUL-terminated buffer `*text` (length
 * `*len`; the caller frees it). Errors are logged with the path: -MKI_E_PACKAGE for a file that is
 * not a .deb or lacks a control file, -MKI_E_LIMIT_PKG for an oversized one, negative errno otherwise.
 */
int debcontrol_read(const char *path, char **text, size_t *len);

#endif
