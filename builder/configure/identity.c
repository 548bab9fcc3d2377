#include "identity.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootcfg.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "sandbox/idshift.h"

#define TMP_SUFFIX ".mkimage-tmp"
#define HOSTS_MAX (1u << 20)

void identity_fstab(const char *label, struct buf *out)
{
	const char *p;

	buf_adds(out, "# /etc/fstab: static file system information (written by mkimage).\n"
		      "# <file system>\t<mount point>\t<type>\t<options>\t<dump>\t<pass>\nLABEL=");
	for (p = label; *p; p++) {
		if ((unsigned char)*p <= ' ' || *p == '\\' || *p == 0x7f) /* fstab(5)'s escapes */
			buf_addf(out, "\\%03o", (unsigned char)*p);
		else
			buf_add(out, p, 1);
	}
	buf_adds(out, "\t/\text4\terrors=remount-ro\t0\t1\n");
}

/* A hosts(5) line whose address (after blanks) is `addr`. */
static int hosts_addr(const char *line, const char *addr)
{
	size_t n = strlen(addr);

	line += strspn(line, " \t");
	return !strncmp(line, addr, n) && (line[n] == ' ' || line[n] == '\t');
}

void identity_hosts(const char *old, const char *name, struct buf *out)
{
	struct buf body = { 0 };
	const char *p, *end;
	int placed = 0;

	if (!old)
		old = "127.0.0.1\tlocalhost\n\n"
		      "# The following lines are desirable for IPv6 capable hosts\n"
		      "::1     localhost ip6-localhost ip6-loopback\n"
		      "ff02::1 ip6-allnodes\nff02::2 ip6-allrouters\n";
	buf_adds(&body, "");
	for (p = old; *p; p = end) {
		end = strchrnul(p, '\n');
		end += *end == '\n';
		if (hosts_addr(p, "127.0.1.1")) /* the resolver would find an old name first */
			continue;
		buf_add(&body, p, (size_t)(end - p));
		if (end[-1] != '\n')
			buf_adds(&body, "\n");
		if (!placed && hosts_addr(p, "127.0.0.1")) {
			buf_addf(&body, "127.0.1.1\t%s\n", name);
			placed = 1;
		}
	}
	if (!placed)
		buf_addf(out, "127.0.1.1\t%s\n", name);
	buf_add(out, body.p, body.len);
	buf_release(&body);
}

/* Replace tree file `rel` with `len` bytes of `text`: root's, 0644, the epoch as its time. */
static int put_file(int rootfd, const char *rel, const char *text, size_t len, int64_t sde)
{
	struct timespec ts[2] = { { .tv_sec = sde < 0 ? 0 : sde }, { .tv_sec = sde < 0 ? 0 : sde } };
	const char *name;
	char *tmp = NULL;
	int dirfd = beneath_parent(rootfd, rel, &name), fd = -1, ret = 0;

	if (dirfd < 0)
		return dirfd;
	tmp = xasprintf("%s" TMP_SUFFIX, name);
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		ret = -errno;
	if (!ret)
		ret = fsutil_write_all(fd, text, len);
	if (!ret && (fchown(fd, idshift_tree_uid(0), idshift_tree_gid(0)) < 0 ||
		     fchmod(fd, 0644) < 0 || futimens(fd, ts) < 0))
		ret = -errno;
	if (fd >= 0 && close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, tmp, dirfd, name) < 0)
		ret = -errno;
	if (ret && fd >= 0)
		unlinkat(dirfd, tmp, 0);
	close(dirfd);
	free(tmp);
	return ret;
}

static int put(int rootfd, const char *rel, const char *text, size_t len, int64_t sde)
{
	int ret = put_file(rootfd, rel, text, len, sde);

	if (ret)
		log_error("cannot write '/%s' into the tree: %s", rel, strerror(-ret));
	return ret ? -MKI_E_HOOK : 0;
}

/*
 * The tree's /etc/hosts (through links, inside the tree) into `*out`; NULL when it has none or
 * one that is not a regular file (a FIFO a script made: worked around with Debian's default).
 * Never a part of it: one too large or holding a NUL byte is an error, not a truncated copy.
 */
static int read_hosts(int rootfd, char **out)
{
	int fd = beneath_open(rootfd, "etc/hosts", O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	const char *kind = NULL;
	struct buf b = { 0 };
	int ret = fd < 0 ? fd : readfile_read_fd(fd, HOSTS_MAX, &b, &kind);

	*out = NULL;
	if (ret == -EINVAL && kind)
		log_warn_instead("Debian's default '/etc/hosts' with the recipe's hostname",
				 "cannot read '/etc/hosts' of the tree: %s", readfile_why(ret, kind));
	if (ret == -ENOENT || (ret == -EINVAL && kind)) {
		buf_release(&b);
		return 0;
	}
	if (!ret && memchr(b.p, 0, b.len))
		ret = -EBADMSG;
	if (ret) {
		log_error("cannot add the hostname to '/etc/hosts' of the tree: %s; make it a "
			  "text file of at most 1 MiB in the package or hook that wrote it",
			  ret == -EBADMSG ? "it holds a NUL byte" : readfile_why(ret, kind));
		buf_release(&b);
		return -MKI_E_HOOK;
	}
	buf_adds(&b, "");
	*out = buf_detach(&b);
	return 0;
}

static int write_hostname(const struct recipe *r, int rootfd, int64_t sde)
{
	struct buf b = { 0 };
	char *old = NULL;
	int ret = read_hosts(rootfd, &old);

	buf_addf(&b, "%s\n", r->hostname);
	if (!ret)
		ret = put(rootfd, "etc/hostname", b.p, b.len, sde);
	buf_release(&b);
	if (!ret) {
		identity_hosts(old, r->hostname, &b);
		ret = put(rootfd, "etc/hosts", b.p, b.len, sde);
	}
	buf_release(&b);
	free(old);
	return ret;
}

/* debootstrap's: what every Debian bootstrapper leaves for the maintainer scripts to find. */
#define FSTAB_PLACEHOLDER "# UNCONFIGURED FSTAB FOR BASE SYSTEM\n"

int identity_prepare(int rootfd, int64_t sde)
{
	struct stat sb;

	if (beneath_lstat(rootfd, "etc/fstab", &sb) == 0 || beneath_lstat(rootfd, "etc", &sb) < 0)
		return 0;
	return put(rootfd, "etc/fstab", FSTAB_PLACEHOLDER, strlen(FSTAB_PLACEHOLDER), sde);
}

/* Whether the tree's /etc/fstab is still identity_prepare's placeholder. */
static int fstab_is_placeholder(int rootfd)
{
	char text[sizeof(FSTAB_PLACEHOLDER)] = "";
	int fd = beneath_open(rootfd, "etc/fstab", O_RDONLY | O_NONBLOCK, 0);
	struct stat sb;
	ssize_t n = -1;

	if (fd < 0)
		return 0;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == sizeof(text) - 1)
		n = read(fd, text, sizeof(text) - 1);
	close(fd);
	return n == (ssize_t)sizeof(text) - 1 && !strcmp(text, FSTAB_PLACEHOLDER);
}

/* The placeholder goes: what the recipe asks replaces it, or nothing does. */
static int drop_placeholder(int rootfd)
{
	const char *name;
	int dirfd, ret = 0;

	if (!fstab_is_placeholder(rootfd))
		return 0;
	dirfd = beneath_parent(rootfd, "etc/fstab", &name);
	if (dirfd < 0)
		return dirfd;
	if (unlinkat(dirfd, name, 0) < 0)
		ret = -errno;
	close(dirfd);
	if (ret)
		log_error("cannot remove the placeholder '/etc/fstab' from the tree: %s",
			  strerror(-ret));
	return ret ? -MKI_E_HOOK : 0;
}

/*
 * A package's or a script's /etc/fstab is kept (`*kept`); one that is no file a system could
 * mount from (a FIFO, a device) is worked around with mkimage's own; a directory is an error.
 */
static int keep_fstab(const struct stat *sb, int *kept)
{
	*kept = S_ISREG(sb->st_mode) || S_ISLNK(sb->st_mode);
	if (*kept) {
		log_info("the tree has an '/etc/fstab' (from a package or its scripts): kept; "
			 "image.fstab writes one only where there is none");
		return 0;
	}
	if (S_ISDIR(sb->st_mode)) {
		log_error("'/etc/fstab' of the tree is a directory (made by a package or a hook): "
			  "remove it, or set image.fstab = false");
		return -MKI_E_HOOK;
	}
	log_warn_instead("mkimage's own '/etc/fstab' (image.fstab)",
			 "'/etc/fstab' of the tree is %s, not a regular file (made by a package or "
			 "a hook)", readfile_kind(sb->st_mode));
	return 0;
}

int identity_write(const struct recipe *r, int rootfd, int64_t sde)
{
	struct buf b = { 0 };
	struct stat sb;
	int ret = drop_placeholder(rootfd), kept;

	if (ret)
		return ret;
	if (!r->image.fstab)
		kept = 1;
	else if (beneath_lstat(rootfd, "etc/fstab", &sb) < 0)
		kept = 0;
	else
		ret = keep_fstab(&sb, &kept);
	if (!ret && !kept) {
		/* on a disk the root is named by PARTUUID: the two slots of A/B share a label */
		if (r->disk.set)
			bootcfg_fstab(r, sde, &b);
		else
			identity_fstab(r->image.label, &b);
		ret = put(rootfd, "etc/fstab", b.p, b.len, sde);
		buf_release(&b);
	}
	if (!ret && r->hostname)
		ret = write_hostname(r, rootfd, sde);
	return ret;
}

/* dbus-uuidgen copies the id it finds; Debian's dbus links its file to /etc/machine-id. */
static int link_dbus_id(int rootfd, int64_t sde)
{
	static const char rel[] = "var/lib/dbus/machine-id";
	struct timespec ts[2] = { { .tv_sec = sde < 0 ? 0 : sde }, { .tv_sec = sde < 0 ? 0 : sde } };
	struct stat sb;
	const char *name;
	int dirfd, ret = 0;

	if (beneath_lstat(rootfd, rel, &sb) < 0 || !S_ISREG(sb.st_mode))
		return 0;
	dirfd = beneath_parent(rootfd, rel, &name);
	if (dirfd < 0)
		return dirfd;
	if (unlinkat(dirfd, name, 0) < 0 || symlinkat("/etc/machine-id", dirfd, name) < 0 ||
	    fchownat(dirfd, name, idshift_tree_uid(0), idshift_tree_gid(0), AT_SYMLINK_NOFOLLOW) < 0 ||
	    utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		ret = -errno;
	close(dirfd);
	return ret;
}

int identity_finish(const struct recipe *r, int rootfd, int64_t sde)
{
	/* machine-id(5), "First Boot Semantics": "uninitialized" makes the first boot a first boot */
	const char *id = r->machine_id == MACHINE_ID_EMPTY ? "" : "uninitialized\n";
	int ret = put(rootfd, "etc/machine-id", id, strlen(id), sde);

	if (!ret && (ret = link_dbus_id(rootfd, sde))) {
		log_error("cannot link '/var/lib/dbus/machine-id' to '/etc/machine-id' in the tree: "
			  "%s", strerror(-ret));
		ret = -MKI_E_HOOK;
	}
	return ret;
}
