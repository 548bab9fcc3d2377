/* Accel: functions exported only for the unit tests (and test drivers); not part of the contract. */
#ifndef MKI_ACCEL_INTERNAL_H
#define MKI_ACCEL_INTERNAL_H

#include "accel.h"

/** Names of the ELF DT_NEEDED entries of `path` (a host-class ELF); negative errno. */
int accel_elf_needed(const char *path, struct strv *needed);
/** As accel_elf_needed(), and the DT_RUNPATH/DT_RPATH strings into `runpath` (may be NULL). */
int accel_elf_dynamic(const char *path, struct strv *needed, struct strv *runpath);

/** "1.2-3" for "1.2-3+b4": binNMUs rebuild an unchanged source. New string. */
char *accel_source_version(const char *version);

/**
 * Make the twin program at `path` (a host build of dpkg or one of its programs) name `arch` where
 * it names the host's architecture `host` (accel_retarget.c says which strings and why). Returns
 * how many strings it rewrote (0: the program never names an architecture), or a negative code
 * with `*why` saying why it cannot be done safely; the file is unchanged then.
 */
int accel_retarget(const char *path, const char *host, const char *arch, const char **why);

#endif
