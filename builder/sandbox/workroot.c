/* Where a build's work directory may live: see workroot.h for why 32-bit guests care. */
#include "workroot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "debian/arch.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/x.h"

#define PROBE_ENTRIES 32

/* The kernel's record, as getdents64(2) fills it: the raw offsets, before any libc narrows them. */
struct probe_dirent {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int fill_probe(int dfd)
{
	char name[16];
	int i, fd;

	for (i = 0; i < PROBE_ENTRIES; i++) {
		snprintf(name, sizeof(name), "e%d", i);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		close(fd);
	}
	return 0;
}

/* 1 when a record of the listing does not fit a 32-bit off_t or ino_t. */
static int listing_is_wide(int dfd)
{
	char buf[8192];
	long n, pos;

	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (pos = 0; pos < n;) {
			const struct probe_dirent *d = (const void *)(buf + pos);

			if (d->d_off > INT32_MAX || d->d_off < INT32_MIN || d->d_ino > UINT32_MAX)
				return 1;
			pos += d->d_reclen;
		}
	}
	return n < 0 ? -errno : 0;
}

int workroot_wide_offsets(const char *dir)
{
	char *probe = xasprintf("%s/mkimage-probe.XXXXXX", dir);
	int dfd = -1, ret;

	if (!mkdtemp(probe)) {
		ret = -errno;
		goto out;
	}
	dfd = open(probe, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? -errno : fill_probe(dfd);
	if (!ret && lseek(dfd, 0, SEEK_SET) < 0)
		ret = -errno;
	if (!ret)
		ret = listing_is_wide(dfd);
	fsutil_remove_tree(probe);
out:
	if (dfd >= 0)
		close(dfd);
	free(probe);
	return ret;
}

/* The first 32-bit architecture of `archs` that runs under emulation here, or NULL. */
static const char *emulated_32bit(const char *const *archs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct arch *a = arch_find(archs[i]);

		if (a && a->bits == 32 && !arch_runs_natively(a))
			return a->name;
	}
	return NULL;
}

static int has_room(const char *dir)
{
	struct statvfs sv;

	return !statvfs(dir, &sv) && (unsigned long long)sv.f_bavail * sv.f_frsize >= WORKROOT_MIN_FREE;
}

int workroot_choose(const char *tmp, int tmp_explicit, const char *const *archs, size_t n_archs,
		    const char *const *fallbacks, char **out)
{
	const char *guest = emulated_32bit(archs, n_archs);
	size_t i;

	*out = NULL;
	if (!guest || workroot_wide_offsets(tmp) != 1) {
		*out = xstrdup(tmp);
		return 0;
	}
	for (i = 0; fallbacks && fallbacks[i]; i++) {
		if (workroot_wide_offsets(fallbacks[i]) || !has_room(fallbacks[i]))
			continue;
		log_info("work directory in '%s', not '%s'%s: that filesystem lists directories with "
			 "64-bit offsets, which %s programs under QEMU user emulation cannot read "
			 "(they would see empty directories); set TMPDIR to a directory on tmpfs, "
			 "btrfs or xfs to choose", fallbacks[i], tmp, tmp_explicit ? " (TMPDIR)" : "",
			 guest);
		*out = xstrdup(fallbacks[i]);
		return 0;
	}
	log_error("'%s'%s lists directories with 64-bit offsets, which %s programs under QEMU user "
		  "emulation cannot read (they would see empty directories), and no tmpfs with %llu "
		  "GiB free was found: set TMPDIR to a directory on tmpfs, btrfs or xfs, or on an "
		  "ext4 made with 'mkfs.ext4 -O ^dir_index'", tmp, tmp_explicit ? " (TMPDIR)" : "",
		  guest, WORKROOT_MIN_FREE >> 30);
	return -MKI_E_USAGE;
}
