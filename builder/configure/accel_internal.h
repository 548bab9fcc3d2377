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

/* Which packages have twins and how far their programs run natively (accel_tools.c). */
/** The tool packages, NULL-terminated: their programs (or some, accel_tools_only) are twins. */
const char *const *accel_tools_packages(void);
/** The only programs of tool package `package` that are twins, NULL-terminated; NULL: all. */
const char *const *accel_tools_only(const char *package);
/** Packages a twin library of `package` opens with dlopen(), NULL-terminated; NULL: none. */
const char *const *accel_tools_dlopened(const char *package);
/** The table's FLAGS word of program `program` when only some invocations are native, or NULL. */
const char *accel_tools_flags(const char *program);
/** Whether `path` ("usr/lib/dracut/dracut-install") is a program outside the program dirs. */
int accel_tools_lib_program(const char *path);
/** Whether `program` is one of dpkg's, native once retargeted (accel_retarget). */
int accel_tools_dpkg_program(const char *program);
/** Whether `program` reports or depends on the machine: never a twin. */
int accel_tools_machine_dependent(const char *program);
/** Whether `s` is one of `list`'s words (NULL-terminated). */
int accel_tools_in(const char *const *list, const char *s);
/** Whether `program` is a python3.X interpreter (native as py_compile only). */
int accel_tools_python(const char *program);

#endif
