/*
 * A kernel's initramfs built once, not twice. While `dpkg --configure -a` configures a kernel,
 * its postinst runs /etc/kernel/postinst.d/initramfs-tools, which builds the initramfs with
 * `update-initramfs -c -k V`; initramfs-tools' own postinst has activated its trigger, and when
 * dpkg processes it, `update-initramfs -u` builds the initramfs of the highest kernel with an
 * initrd again: the first build's bytes are thrown away. For the build, update-initramfs is
 * diverted (as guards.c diverts start-stop-daemon) to a shim that, only when that second build
 * is certain to come for V, leaves a placeholder initrd (-u only needs the file to exist) and
 * skips the first. Every condition is checked by the shim when it runs (the script below says
 * which and why); anything else runs the package's program. The shim is gone before anything
 * reads the tree (hooks.c: before the layer is stored), and a placeholder left anywhere in /boot
 * fails the build.
 */
#include "initramfs.h"
#include "initrdcheck.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guards.h"
#include "lib/beneath.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/str.h"

#define UPDATE "usr/sbin/update-initramfs"
#define UPDATE_REAL UPDATE ".mkimage-real"
#define UPDATE_ONCE UPDATE ".mkimage-once"

/* A placeholder copied elsewhere (a boot loader's copy, a U-Boot wrapped one) stays small. */
#define SCAN_FILE_MAX (64u << 10)
#define SCAN_DEPTH 8
#define SCAN_ENTRIES 100000u
#define ONCE_MAX 4096u

/*
 * The conditions, each of which makes the trigger's `update-initramfs -u` rebuild exactly V:
 * - inside dpkg, the hook's exact call (`-c -k V`, `-b /boot`); V a plain version;
 * - V the only kernel image in /boot (linux-version list) and the only /lib/modules entry, and
 *   no initrd yet: -u picks the highest version with an initrd, which is then V;
 * - no /etc/initramfs/post-update.d hook, and no kernel hook but initramfs-tools' and those
 *   known to look at no initrd's bytes (u-boot-menu's, apt's): nothing reads the placeholder;
 * - update-initramfs.conf neither says update_initramfs=no nor moves BOOTDIR;
 * - initramfs-tools not yet configured (its postinst activates the trigger) or its
 *   update-initramfs trigger pending: dpkg processes it before `--configure -a` ends.
 */
static const char shim[] =
	"#!/bin/sh\n"
	"# mkimage: while the image is built, a kernel's first initramfs is left to initramfs-tools'\n"
	"# trigger when that is certain to build it again in this configuration (mkimage(7))\n"
	"real=/" UPDATE_REAL "\n"
	"why=\n"
	"once() {\n"
	"\t[ -n \"$DPKG_MAINTSCRIPT_PACKAGE\" ] && [ \"$1\" = -c ] && [ \"$2\" = -k ] || return 1\n"
	"\tcase \"$#:$4:$5\" in 3::|5:-b:/boot) ;; *) return 1 ;; esac\n"
	"\tcase \"$3\" in ''|.*|*[!A-Za-z0-9.+~_-]*) return 1 ;; esac\n"
	"\tv=$3\n"
	"\tset -- /boot/vmlinu[xz]-*\n"
	"\t[ $# = 1 ] && { [ \"$1\" = \"/boot/vmlinuz-$v\" ] || [ \"$1\" = \"/boot/vmlinux-$v\" ]; } ||\n"
	"\t\t{ why=\"not the only kernel in /boot\"; return 1; }\n"
	"\tset -- /lib/modules/*\n"
	"\t[ $# = 1 ] && [ \"$1\" = \"/lib/modules/$v\" ] ||\n"
	"\t\t{ why=\"not the only version in /lib/modules\"; return 1; }\n"
	"\tfor f in /boot/initrd.img-*; do\n"
	"\t\t[ -e \"$f\" ] || [ -L \"$f\" ] && { why=\"'$f' exists\"; return 1; }\n"
	"\tdone\n"
	"\tfor f in /etc/initramfs/post-update.d/* /etc/initramfs/post-update.d/.[!.]*; do\n"
	"\t\t[ -e \"$f\" ] || [ -L \"$f\" ] && { why=\"the update hook '$f' reads initrds\"; return 1; }\n"
	"\tdone\n"
	"\tfor f in /etc/kernel/postinst.d/*; do\n"
	"\t\t[ -e \"$f\" ] || [ -L \"$f\" ] || continue\n"
	"\t\tcase \"${f##*/}\" in initramfs-tools|zz-u-boot-menu|apt-auto-removal) ;;\n"
	"\t\t*) why=\"the kernel hook '$f' may read the initrd\"; return 1 ;; esac\n"
	"\tdone\n"
	"\tc=$(update_initramfs=yes; BOOTDIR=/boot; f=/etc/initramfs-tools/update-initramfs.conf\n"
	"\t\t[ ! -r $f ] || . $f >/dev/null 2>&1; echo \"$update_initramfs:$BOOTDIR\")\n"
	"\tcase \"$c\" in yes:/boot|all:/boot) ;;\n"
	"\t*) why=\"update-initramfs.conf gives '$c'\"; return 1 ;; esac\n"
	"\ts=$(dpkg-query -W -f='${db:Status-Status} ${Triggers-Pending}' initramfs-tools 2>/dev/null) ||\n"
	"\t\t{ why=\"dpkg-query does not know initramfs-tools\"; return 1; }\n"
	"\tcase \"$s\" in 'unpacked ') return 0 ;; triggers-pending*) ;;\n"
	"\t*) why=\"initramfs-tools is '$s'\"; return 1 ;; esac\n"
	"\tcase \" ${s#triggers-pending} \" in *' update-initramfs '*) return 0 ;; esac\n"
	"\twhy=\"initramfs-tools' trigger is not pending ('$s')\"\n"
	"\treturn 1\n"
	"}\n"
	"if once \"$@\"; then\n"
	"\tf=/boot/initrd.img-$3\n"
	"\tif echo \"" INITRAMFS_PLACEHOLDER ": initramfs-tools' trigger builds $f\" >\"$f.new\" &&\n"
	"\t\tmv -f \"$f.new\" \"$f\" && echo \"$3\" >>/" UPDATE_ONCE "; then\n"
	"\t\techo \"update-initramfs: mkimage: $f left to initramfs-tools' trigger,\" \\\n"
	"\t\t\t\"which builds it later in this configuration\" >&2\n"
	"\t\texit 0\n"
	"\tfi\n"
	"\trm -f \"$f.new\"\n"
	"\twhy=\"cannot write the placeholder\"\n"
	"fi\n"
	"[ -z \"$why\" ] || echo \"update-initramfs: mkimage: building the initramfs now: $why\" >&2\n"
	"exec \"$real\" \"$@\"\n";

int initramfs_divert(struct initramfs *d, int rootfd)
{
	struct stat sb;
	int ret;

	if (beneath_lstat(rootfd, UPDATE, &sb) < 0 || !S_ISREG(sb.st_mode))
		return 0;
	if (beneath_lstat(rootfd, UPDATE_REAL, &sb) == 0 || beneath_lstat(rootfd, UPDATE_ONCE, &sb) == 0)
		return -EEXIST;
	ret = beneath_rename(rootfd, UPDATE, UPDATE_REAL);
	if (ret)
		return ret;
	d->diverted = 1;
	ret = guards_write_script(rootfd, UPDATE, shim);
	if (ret && !beneath_rename(rootfd, UPDATE_REAL, UPDATE))
		d->diverted = 0;
	return ret;
}

/* Whether `rel` is a regular file holding exactly `text` (a shim a script left alone). */
static int holds(int rootfd, const char *rel, const char *text)
{
	int fd = beneath_open_regular(rootfd, rel, 0, NULL);
	struct buf b = { 0 };
	int same;

	if (fd < 0)
		return 0;
	same = !readfile_read_fd(fd, strlen(text) + 1, &b, NULL) && b.len == strlen(text) &&
	       !memcmp(b.p, text, b.len);
	buf_release(&b);
	return same;
}

/* The shim's record of the versions it left to the trigger ("V V2"): read, then removed. */
static void take_record(struct initramfs *d, int rootfd)
{
	int fd = beneath_open_regular(rootfd, UPDATE_ONCE, 0, NULL);
	struct buf b = { 0 };

	if (fd >= 0 && !readfile_read_fd(fd, ONCE_MAX, &b, NULL) && b.len) {
		size_t i;

		for (i = 0; i < b.len; i++)
			if (b.p[i] == '\n')
				b.p[i] = ' ';
		free(d->once);
		d->once = xstrndup(b.p, b.len - (b.p[b.len - 1] == ' '));
	}
	buf_release(&b);
	beneath_unlink(rootfd, UPDATE_ONCE, 0);
}

int initramfs_restore(struct initramfs *d, int rootfd, const char *root)
{
	int ret;

	if (!d->diverted)
		return 0;
	take_record(d, rootfd);
	if (!holds(rootfd, UPDATE, shim)) {
		log_error("'/%s' in '%s' is no longer mkimage's shim: a maintainer script replaced it, "
			  "and initramfs-tools' program cannot be put back (build with "
			  "--no-initramfs-once)", UPDATE, root);
		return -MKI_E_HOOK;
	}
	ret = beneath_rename(rootfd, UPDATE_REAL, UPDATE);
	if (ret) {
		log_error("cannot put initramfs-tools' '/%s' back in '%s': %s", UPDATE, root,
			  strerror(-ret));
		return -MKI_E_HOOK;
	}
	d->diverted = 0;
	return 0;
}

/* Whether the regular file `name` of directory `dfd` starts small and holds a placeholder. */
static int is_placeholder(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct buf b = { 0 };
	int found;

	if (fd < 0)
		return 0;
	found = !readfile_read_fd(fd, SCAN_FILE_MAX, &b, NULL) && b.len &&
		memmem(b.p, b.len, INITRAMFS_PLACEHOLDER, strlen(INITRAMFS_PLACEHOLDER));
	buf_release(&b);
	return found;
}

/*
 * Walk directory `dfd` (taken) named `path`: the first file holding a placeholder goes into
 * `hit`. Names are opened one component at a time with O_NOFOLLOW: nothing leads out of it.
 */
static void scan(int dfd, const char *path, int depth, unsigned *entries, struct buf *hit)
{
	DIR *dir = fdopendir(dfd);
	struct dirent *de;
	struct stat sb;

	if (!dir) {
		close(dfd);
		return;
	}
	while (!hit->len && (de = readdir(dir)) && ++*entries < SCAN_ENTRIES) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(dir), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(sb.st_mode) && sb.st_size <= SCAN_FILE_MAX &&
		    is_placeholder(dirfd(dir), de->d_name)) {
			buf_addf(hit, "%s/%s", path, de->d_name);
		} else if (S_ISDIR(sb.st_mode) && depth < SCAN_DEPTH) {
			int sub = openat(dirfd(dir), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char *subpath = xasprintf("%s/%s", path, de->d_name);

			if (sub >= 0)
				scan(sub, subpath, depth + 1, entries, hit);
			free(subpath);
		}
	}
	closedir(dir);
}

int initramfs_check(const struct initramfs *d, int rootfd, const char *root)
{
	struct buf hit = { 0 };
	unsigned entries = 0;
	int fd = beneath_open(rootfd, "boot", O_RDONLY | O_DIRECTORY, 0), ret = 0;

	if (d->once)
		log_info("initramfs: built once for %s, by initramfs-tools' trigger (the kernel's hook "
			 "left it a placeholder)", d->once);
	if (fd >= 0)
		scan(fd, "/boot", 0, &entries, &hit);
	if (hit.len) {
		log_error("'%s' in '%s' is still mkimage's placeholder initrd after 'dpkg --configure "
			  "-a': initramfs-tools' trigger did not build it again, which mkimage expected; "
			  "build with --no-initramfs-once and report it", hit.p, root);
		ret = -MKI_E_HOOK;
	}
	buf_release(&hit);
	return ret ? ret : initrdcheck_tree(rootfd, root);
}

void initramfs_release(struct initramfs *d)
{
	free(d->once);
	d->once = NULL;
}
