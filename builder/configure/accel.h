/*
 * Native tools for emulated maintainer scripts. Under qemu-user every exec costs 30-40 ms and a
 * perl start a second, and a minimal system's scripts exec ~600 programs. Most of them (the
 * shell, coreutils, sed, grep, perl, ...) behave identically on every architecture, and the
 * repository has each one built for the host's architecture from the very same source version.
 * Those host-arch "twins" are fetched (verified like every package) and, while maintainer
 * scripts run, the binfmt_misc entry points at mkimage-exec, which runs the twin of a target
 * program instead of emulating it; everything else is emulated as before.
 *
 * What the native programs see is exact: a read-only private copy of the twins' libraries only,
 * mounted at /usr/lib/<host triplet> in each command's mount namespace (so a target without
 * some perl module still lacks it natively), and the target's own /etc and /usr/share. Programs whose behaviour depends on the architecture (uname, ldconfig,
 * getconf, ...) are never replaced; dpkg's only by a twin made to name the target's architecture
 * (accel_retarget()), and else only for version arithmetic. A program whose library closure
 * is not complete in that copy is not replaced either.
 */
#ifndef MKI_ACCEL_H
#define MKI_ACCEL_H

#include <stddef.h>

#include "debian/plan.h"

#ifndef MKI_HOST_MULTIARCH
#error "MKI_HOST_MULTIARCH must be set by the build (dpkg-architecture -qDEB_HOST_MULTIARCH)"
#endif

/* Inside the sandbox: where the copy is mounted and where mkimage-exec reads its table. */
#define ACCEL_MOUNT "usr/lib/" MKI_HOST_MULTIARCH
#define ACCEL_TABLE "/" ACCEL_MOUNT "/mkimage-accel/table"
#define ACCEL_PROFILE ACCEL_MOUNT "/mkimage-accel/profile" /* relative, as bind_dir */
/* python3.X's py_compile worker natively: the guard that checks each file (accel_python.c) */
#define ACCEL_PYCOMPILE "/" ACCEL_MOUNT "/mkimage-accel/pycompile.py"

struct accel {
	int active;      /* the dispatcher is registered and the copy is ready */
	char *dir;       /* host path of the private copy (<work_dir>/accel) */
	char *root;      /* the staging tree; ACCEL_MOUNT was created there by accel_prepare */
	size_t n_tools;  /* target programs that run natively */
	size_t n_files;  /* host files in the copy */
	size_t n_dpkg;   /* of n_tools, dpkg's programs made to name the target's architecture */
	char *profile;   /* host path of the record (execprof.h, with -v; or python's); else NULL */
	int profiling;   /* -v: the record has the exec profile */
	int python;      /* python3.X runs natively as py_compile's checked worker */
};

struct pkgindex;

/**
 * The twins of the plan: for each emulated, arch-specific plan entry that the host arch's
 * Packages indexes (`n` of them at `v`, debian/pkgindex.h) have in the same source version, the
 * packages the native tools need - the tool packages and, by name, what they depend on. Entries
 * are ready for fetch_plan(). `twins` belongs to the caller (plan_release); `from` names the
 * indexes in the info line ("the host's apt sources"). Negative code on an unreadable index.
 */
int accel_select(const struct pkgindex *v, size_t n, const struct plan *p, struct plan *twins,
		 const char *from);
/**
 * Prepare native tools for configuring `root` (unpacked from `p`) after the foreign archs were
 * registered: extract the fetched twins' libraries and programs into <work_dir>/accel, write the
 * table, create the mount point in the tree and register mkimage-exec for the emulated archs.
 * When nothing can be accelerated (no emulated arch, no twins, a twin not fetched, no private
 * binfmt_misc, a tree that has the host's multiarch directory, mkimage-exec missing) it says
 * why and leaves a->active 0. The programs named in `emulated` (basenames,
 * --no-native-tools=PROGRAM,...) stay emulated. Errors (extracting, registering) are negative
 * codes, logged.
 */
int accel_prepare(struct accel *a, const struct plan *p, const struct plan *twins,
		  const struct strv *emulated, const char *root, const char *work_dir);
/**
 * After the scripts ran with a native python3.X (a->python): the packages whose files the
 * py_compile guard left to the emulated interpreter (it could not vouch for their byte code),
 * sorted, into `pkgs`, from the record and the tree's dpkg file lists; an info line names them.
 */
void accel_python_emulated(const struct accel *a, struct strv *pkgs);
/** Write the py_compile guard (ACCEL_PYCOMPILE) into the copy at `dir`. 0 or negative errno. */
int accel_python_write(const char *dir);
/** Restore plain qemu registrations, remove the mount point from the tree and the copy. */
int accel_release(struct accel *a);

#endif
