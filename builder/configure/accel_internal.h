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

#endif
