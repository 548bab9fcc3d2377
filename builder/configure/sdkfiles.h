/*
 * What makes an SDK tree ready to use (mkimage --sdk, mkimage(7) "Cross-building"): per target
 * architecture an environment-setup-TRIPLET script at the SDK's root, and under sdk/ the
 * compiler, binutils and TRIPLET-pkg-config wrappers (sdk/bin), a CMake toolchain file
 * (sdk/cmake/TRIPLET.cmake) and a Meson cross file (sdk/meson/TRIPLET.ini); sdk/hostlibs holds
 * links to the SDK's own host libraries but the C library's, so that its programs run with the
 * build host's C library; every absolute link of the tree is made relative. Every file finds the SDK relative to itself: no path of the machine
 * that made it is written, and the tree works wherever it is unpacked.
 */
#ifndef MKI_SDKFILES_H
#define MKI_SDKFILES_H

#include <stdint.h>

#include "debian/arch.h"
#include "lib/buf.h"
#include "lib/str.h"
#include "tree/staging.h"

/** environment-setup-TRIPLET for target `a`; `glibc` is the SDK's C library ("2.36"). */
void sdkfiles_env(const struct arch *a, const char *glibc, struct buf *out);
/** sdk/cmake/TRIPLET.cmake for target `a`. */
void sdkfiles_cmake(const struct arch *a, struct buf *out);
/** sdk/meson/TRIPLET.ini for target `a`. */
void sdkfiles_meson(const struct arch *a, struct buf *out);
/** sdk/bin/TRIPLET-`tool`: runs usr/bin/TRIPLET-`tool` (with --sysroot when `sysroot`). */
void sdkfiles_wrapper(const struct arch *a, const char *tool, int sysroot, struct buf *out);
/** sdk/bin/TRIPLET-pkg-config: the SDK's pkgconf over the target's .pc files only. */
void sdkfiles_pkgconfig(const struct arch *a, struct buf *out);
/** Meson's cpu_family of `a` ("arm", "x86", "ppc64"). */
const char *sdkfiles_meson_cpu_family(const struct arch *a);
/**
 * The target of absolute link `target` at tree path `path` made relative to the link's
 * directory ("usr/lib/t/libz.so", "/lib/t/libz.so.1" -> "../../../lib/t/libz.so.1"). Caller frees.
 */
char *sdkfiles_relative_target(const char *path, const char *target);
/** 1 when `name` is a file of the C library itself (kept out of sdk/hostlibs). */
int sdkfiles_is_libc(const char *name);

/**
 * Write every file above into the configured SDK tree `s` for `targets` (Debian names), at
 * `mtime`, recorded in its manifest. `glibc` is the SDK's C library version. 0 or a negative
 * code, logged.
 */
int sdkfiles_write(struct staging *s, const struct strv *targets, const char *glibc,
		   int64_t mtime);

#endif
