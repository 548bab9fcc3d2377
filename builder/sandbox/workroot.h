/*
 * Where a build's work directory may live. QEMU's user emulation runs a 32-bit guest as a
 * 64-bit host process, so the host kernel hands it directory offsets as wide as the filesystem
 * makes them: ext4's hashed directories give 64-bit ones, which a 32-bit guest's glibc cannot
 * return from readdir or walk with fts (QEMU issue 263). The program does not fail: it sees an
 * empty directory. trixie's initramfs-tools walks the kernel's module tree with dracut-install's
 * fts, so its armhf initramfs came out without a block driver. tmpfs, btrfs and xfs give
 * offsets that fit; the probe asks the filesystem, not its name.
 */
#ifndef MKI_WORKROOT_H
#define MKI_WORKROOT_H

#include <stddef.h>

/** Free bytes a fallback work root must offer (the largest flagship tree fits twice). */
#define WORKROOT_MIN_FREE (2ULL << 30)

/**
 * 1 when listing a directory under `dir` gives an offset or inode number a 32-bit guest cannot
 * hold, 0 when every one fits, a negative errno when the probe cannot be made there. The probe
 * makes and removes a directory of 32 entries under `dir`.
 */
int workroot_wide_offsets(const char *dir);

/**
 * The directory to make this build's work directory in, newly allocated in *out: `tmp` (TMPDIR,
 * else /var/tmp: `tmp_explicit` says which) unless one of `archs` (Debian names) is a 32-bit
 * architecture this host emulates and `tmp` gives wide offsets; then the first of `fallbacks`
 * (NULL-terminated; tmpfs mounts such as /dev/shm) that gives narrow ones and has
 * WORKROOT_MIN_FREE bytes free, said in an info line. Returns 0, or -MKI_E_USAGE after logging
 * why no place fits and what to set.
 */
int workroot_choose(const char *tmp, int tmp_explicit, const char *const *archs, size_t n_archs,
		    const char *const *fallbacks, char **out);

#endif
