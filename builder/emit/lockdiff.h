/* Lock diff: what changed between two lock files, for release notes (mkimage --diff). */
#ifndef MKI_LOCKDIFF_H
#define MKI_LOCKDIFF_H

#include <stdio.h>

/**
 * Compare the lock files `old_file` and `new_file` and print one line per package:arch that was
 * added, removed or changed version, sorted by name then architecture:
 *
 *   added   NAME:ARCH VERSION (source SRC)
 *   removed NAME:ARCH VERSION (source SRC)
 *   changed NAME:ARCH OLD -> NEW (source SRC)
 *
 * A package whose version is the same but whose digest differs (rebuilt binary, same version)
 * is reported as "rebuilt". Returns 0, or -MKI_E_USAGE when a file is not a valid lock file
 * (logged by lockfile_read with file and line).
 */
int lockdiff_print(const char *old_file, const char *new_file, FILE *out);

#endif
