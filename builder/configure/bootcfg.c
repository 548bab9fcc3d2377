/*
 * The boot configuration step (bootcfg.h): what it reads from the tree (kernels, os-release, the
 * package's /etc/default/u-boot, the loader) and where it writes, through the stage writer
 * (tree/staging.h), which goes through no symlink and records what it writes in the manifest.
 */
#include "bootcfg.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/fsutil.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/runlimits.h"
#include "lib/strv.h"
#include "recipe/board.h"
#include "tree/staging.h"

#define TEXT_MAX (1u << 20)
#define CHUNK (256u << 10)

struct ctx {
	const struct recipe *r;
	const struct settings *st;
	struct staging_writer w;
	int rootfd;
	struct buf os_release;
	struct strv kernels; /* "vmlinuz-V" and "vmlinux-V" names in /boot, newest first */
	size_t chosen;       /* the kernel booted by default */
	const char *roothash;/* a verified root's, once the disk writer knows it; or NULL */
	int late;            /* bootcfg_write_roothash: the root partition is written already */
};

/* The package that ships what is needed, and what the message calls the boot loader. */
static const struct {
	int loader;
	const char *name;
	const char *package;
} needs[] = {
	{ DISK_BOOT_EXTLINUX, "extlinux", "u-boot-menu" },
	{ DISK_BOOT_SYSTEMD_BOOT, "systemd-boot", "systemd-boot-efi" },
};

static int plan_has(const struct plan *p, const char *name, int prefix)
{
	size_t i, n = strlen(name);

	for (i = 0; i < p->n; i++)
		if (prefix ? !strncmp(p->v[i].name, name, n) : !strcmp(p->v[i].name, name))
			return 1;
	return 0;
}

/* A board's boot loader images come from a package of the plan; a firmware's hooks also copy
 * a kernel of it. */
static int check_board_package(const struct plan *p, const struct recipe *r)
{
	const struct board *b = board_get(r->board);

	if (b && b->package && !plan_has(p, b->package, 0)) {
		log_error("%s: board '%s' boots %s from package '%s', which the plan does not "
			  "hold: add \"%s\" to packages.install", r->file, b->name,
			  b->loaders[0].name ? b->loaders[0].path : "its firmware", b->package,
			  b->package);
		return -MKI_E_IMAGE;
	}
	if (b && b->fat.dir && !plan_has(p, "linux-image-", 1)) {
		log_error("%s: board '%s' boots the kernel %s's hooks copy to /%s, and the plan "
			  "holds no 'linux-image-*' package: add one to packages.install (such as "
			  "\"linux-image-%s\")", r->file, b->name, b->package, b->fat.dir, b->arch);
		return -MKI_E_IMAGE;
	}
	return 0;
}

int bootcfg_check_plan(const struct plan *p, const struct recipe *r)
{
	size_t i;

	if (check_board_package(p, r))
		return -MKI_E_IMAGE;
	if (!r->disk.set || r->disk.bootloader == DISK_BOOT_NONE)
		return 0;
	for (i = 0; i < sizeof(needs) / sizeof(*needs); i++) {
		if (needs[i].loader != r->disk.bootloader || plan_has(p, needs[i].package, 0))
			continue;
		log_error("%s: disk.bootloader = \"%s\" needs package '%s', which the plan "
			  "does not hold: add \"%s\" to packages.install", r->file,
			  needs[i].name, needs[i].package, needs[i].package);
		return -MKI_E_IMAGE;
	}
	for (i = 0; recipe_update_boots(r) && i < 2; i++) {
		const char *pkg = i ? "rauc-service" : "rauc";

		if (plan_has(p, pkg, 0))
			continue;
		log_error("%s: the disk is ready for updates (an 'update' group with bootloader = "
			  "\"%s\"), and the device installs them with RAUC, whose package "
			  "'%s' the plan does not hold: add \"rauc\" and \"rauc-service\" to "
			  "packages.install", r->file, r->disk.bootloader == DISK_BOOT_EXTLINUX ?
			  "extlinux" : "systemd-boot", pkg);
		return -MKI_E_IMAGE;
	}
	if (recipe_disk_root_verity(r) >= 0 && !plan_has(p, "cryptsetup-bin", 0)) {
		log_error("%s: the root partition is verified by dm-verity, and the initramfs opens it "
			  "with veritysetup, which the plan does not hold: add \"cryptsetup-bin\" to "
			  "packages.install", r->file);
		return -MKI_E_IMAGE;
	}
	if (recipe_disk_root_verity(r) >= 0 && !plan_has(p, "initramfs-tools", 0)) {
		log_error("%s: the root partition is verified by dm-verity, which mkimage opens "
			  "with an initramfs-tools script, and the plan holds no 'initramfs-tools' "
			  "(dracut is not supported): add \"initramfs-tools\" to packages.install",
			  r->file);
		return -MKI_E_IMAGE;
	}
	if (!plan_has(p, "linux-image-", 1)) {
		log_error("%s: disk.bootloader needs a kernel, and the plan holds no "
			  "'linux-image-*' package: add one to packages.install (such as "
			  "\"linux-image-%s\")", r->file,
			  !strcmp(r->arch, "armhf") ? "armmp" : r->arch);
		return -MKI_E_IMAGE;
	}
	return 0;
}

/* The partition holding `path` ("boot"), or NULL. */
static struct recipe_partition *holding(const struct recipe *r, const char *path)
{
	size_t i;

	for (i = 0; i < r->disk.n_partitions; i++)
		if (r->disk.partitions[i].contents == PART_SUBTREE &&
		    !strcmp(r->disk.partitions[i].path, path))
			return &r->disk.partitions[i];
	return NULL;
}

static struct recipe_partition *esp(const struct recipe *r)
{
	size_t i;

	for (i = 0; i < r->disk.n_partitions; i++)
		if (!strcmp(r->disk.partitions[i].type, "esp") &&
		    r->disk.partitions[i].contents == PART_SUBTREE)
			return &r->disk.partitions[i];
	return NULL;
}

void bootcfg_mark_legacy_boot(struct recipe *r)
{
	struct recipe_partition *p;
	size_t i;

	if (!r->disk.set || r->disk.bootloader != DISK_BOOT_EXTLINUX)
		return;
	for (i = 0; i < r->disk.n_partitions; i++)
		if (r->disk.partitions[i].legacy_boot)
			return;
	p = recipe_update_boots(r) ? &r->disk.partitions[r->update.select] : holding(r, "boot");
	for (i = 0; !p && i < r->disk.n_partitions; i++)
		if (r->disk.partitions[i].contents == PART_ROOT)
			p = &r->disk.partitions[i];
	if (p)
		p->legacy_boot = 1;
}

/*
 * A small text of the tree (through links inside it unless `canonical`) into `out`, never
 * blocking on a FIFO or a device; for a failure other than ENOENT, `*why` says what is there.
 */
static int read_tree(int rootfd, const char *rel, int canonical, struct buf *out,
		     const char **why)
{
	const char *kind = NULL;
	int fd = canonical ? beneath_open_canonical(rootfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY)
			   : beneath_open(rootfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	int ret = fd < 0 ? fd : readfile_read_fd(fd, TEXT_MAX, out, &kind);

	*why = canonical && ret == -ELOOP ? "a symbolic link is in its way"
					  : ret ? readfile_why(ret, kind) : NULL;
	return ret;
}

/* As read_tree(), a failure but ENOENT logged as an error: the build cannot go on without it. */
static int read_text(int rootfd, const char *rel, int canonical, struct buf *out)
{
	const char *why;
	int ret = read_tree(rootfd, rel, canonical, out, &why);

	if (ret && ret != -ENOENT)
		log_error("cannot read '/%s' of the tree: %s; mkimage reads it for the boot "
			  "configuration: make it a regular file of at most 1 MiB in the package or "
			  "hook that made it, or remove it", rel, why);
	return ret;
}

/* os-release's KEY, unquoted as sh reads it (one line, no expansion), or NULL. */
static char *os_value(const struct buf *osr, const char *key)
{
	const char *p, *end;
	size_t n = strlen(key);
	struct buf v = { 0 };
	char q = 0;

	for (p = osr->p; p && *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n');
		if (strncmp(p, key, n) || p[n] != '=')
			continue;
		buf_release(&v);
		buf_adds(&v, "");
		for (p += n + 1; p < end; p++) {
			if (!q && (*p == '"' || *p == '\''))
				q = *p;
			else if (q && *p == q)
				q = 0;
			else if (q != '\'' && *p == '\\' && p + 1 < end)
				buf_add(&v, ++p, 1);
			else
				buf_add(&v, p, 1);
		}
	}
	return v.p ? buf_detach(&v) : NULL;
}

/* What a package or the recipe gave goes into boot menus: one printable line, or refused. */
static int printable(const char *what, const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			log_error("%s holds a control character: it would forge lines of the boot "
				  "configuration; fix it", what);
			return -MKI_E_IMAGE;
		}
	return 0;
}

static int version_order(const void *a, const void *b)
{
	const char *na = *(char *const *)a, *nb = *(char *const *)b;
	int c = bootcfg_version_cmp(nb + 8, na + 8); /* "vmlinu[xz]-": newest first */

	return c ? c : strcmp(na, nb); /* the glob's order */
}

/* /boot/vmlinu[xz]-* but signatures, as linux-version lists them, newest first. */
static int list_kernels(struct ctx *c)
{
	int fd = beneath_open_canonical(c->rootfd, "boot", O_RDONLY | O_DIRECTORY);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		log_error("%s: the tree has no '/boot' directory%s: install a kernel (a "
			  "linux-image-* package)", c->r->file,
			  fd == -ELOOP ? " (it is a symbolic link)" : "");
		return -MKI_E_IMAGE;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "vmlinu", 6) && (de->d_name[6] == 'x' ||
		    de->d_name[6] == 'z') && de->d_name[7] == '-' && de->d_name[8] &&
		    !str_ends_with(de->d_name, ".sig"))
			strv_push(&c->kernels, de->d_name);
	closedir(d);
	if (c->kernels.n > 1) /* qsort is undefined on the NULL of an empty vector */
		qsort(c->kernels.v, c->kernels.n, sizeof(*c->kernels.v), version_order);
	return 0;
}

/* The kernel booted by default: image.kernel, else the newest. */
static int pick_kernel(struct ctx *c)
{
	size_t i;
	int ret = list_kernels(c);

	if (!ret && !c->kernels.n) {
		log_error("%s: the tree has no kernel ('/boot/vmlinuz-*' or '/boot/vmlinux-*') to "
			  "boot: install one (a linux-image-* package)", c->r->file);
		return -MKI_E_IMAGE;
	}
	for (i = 0; !ret && i < c->kernels.n; i++) {
		ret = printable("a kernel's file name in '/boot'", c->kernels.v[i]);
		if (!ret && c->r->image.kernel && !strcmp(c->kernels.v[i] + 8, c->r->image.kernel))
			c->chosen = i + 1;
	}
	if (!ret && c->r->image.kernel && !c->chosen) {
		log_error("image.kernel: the tree has no kernel '%s' (/boot/vmlinuz-%s or "
			  "/boot/vmlinux-%s) to boot", c->r->image.kernel, c->r->image.kernel,
			  c->r->image.kernel);
		return -MKI_E_IMAGE;
	}
	c->chosen = c->chosen ? c->chosen - 1 : 0;
	return ret;
}

/* Refuse a symbolic link or a non-directory on the way to `dir`, then create what is missing. */
static int make_dirs(struct ctx *c, const char *dir)
{
	char *p = xstrdup(dir), *s = p;
	struct stat sb;
	int ret = 0;
	char saved;

	for (;;) {
		s = strchrnul(s, '/');
		saved = *s;
		*s = 0;
		if (beneath_lstat(c->rootfd, p, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
			const char *what = S_ISLNK(sb.st_mode) ? "a symbolic link"
								: readfile_kind(sb.st_mode);

			log_error("cannot write the boot configuration into '/%s': '/%s' is %s, "
				  "made by a package or a hook; it must be a directory", dir, p,
				  what);
			ret = -MKI_E_IMAGE;
			break;
		}
		if (!saved)
			break;
		*s++ = saved;
	}
	free(p);
	if (!ret && staging_mkdirs(&c->w, dir))
		ret = -MKI_E_IMAGE;
	return ret;
}

static int put(struct ctx *c, const char *rel, const struct buf *b)
{
	char *dir = xstrndup(rel, (size_t)(strrchr(rel, '/') - rel));
	int ret = make_dirs(c, dir);

	free(dir);
	if (!ret && staging_write_file(&c->w, rel, b->p, b->len, 0644))
		ret = -MKI_E_IMAGE;
	return ret;
}

static int put_text(struct ctx *c, const char *rel, const char *text)
{
	struct buf b = { 0 };
	int ret;

	buf_adds(&b, text);
	ret = put(c, rel, &b);
	buf_release(&b);
	return ret;
}

/* Copy `in` to `out`, holes kept (a package's sparse file stays sparse). */
static int copy_data(int in, int out, off_t size)
{
	char *chunk = xmalloc(CHUNK);
	off_t pos = 0, end;
	ssize_t n;
	int ret = 0;

	while (!ret && pos < size) {
		pos = lseek(in, pos, SEEK_DATA);
		if (pos < 0) {
			ret = errno == ENXIO ? 0 : -errno;
			break;
		}
		end = lseek(in, pos, SEEK_HOLE);
		if (end < 0 || lseek(in, pos, SEEK_SET) < 0 || lseek(out, pos, SEEK_SET) < 0) {
			ret = -errno;
			break;
		}
		for (; !ret && pos < end; pos += n) {
			n = read(in, chunk, (size_t)(end - pos < CHUNK ? end - pos : CHUNK));
			ret = n <= 0 ? (n ? -errno : -EIO)
				     : fsutil_write_all(out, chunk, (size_t)n);
		}
	}
	if (!ret && ftruncate(out, size) < 0)
		ret = -errno;
	free(chunk);
	return ret;
}

/* Copy tree file `from` (canonical: no link followed) to new tree file `to`, 0644, root's. */
static int copy_file(struct ctx *c, const char *from, const char *to)
{
	struct timespec ts[2] = { { .tv_sec = c->w.mtime }, { .tv_sec = c->w.mtime } };
	const char *kind = NULL, *name = strrchr(to, '/') + 1;
	char *dir = xstrndup(to, (size_t)(name - 1 - to)), *tmp = xasprintf("%s.mki-tmp", name);
	int in = beneath_open_regular(c->rootfd, from, 1, &kind), dfd = -1, out = -1, ret = 0;
	struct stat sb;

	if (in < 0 || fstat(in, &sb) < 0) {
		ret = in < 0 ? in : -errno;
		log_error("cannot read '/%s' of the tree: %s", from, ret == -ELOOP ?
			  "a symbolic link is in its way" : readfile_why(ret, kind));
		ret = -MKI_E_IMAGE;
		goto out;
	}
	if ((uint64_t)sb.st_size > runlimits_get(&c->st->limits, LIMIT_STAGING_SIZE)) {
		log_error("'/%s' is larger than the staging-size limit: not copied to '/%s'", from,
			  to);
		ret = -MKI_E_IMAGE;
		goto out;
	}
	ret = make_dirs(c, dir);
	if (ret)
		goto out;
	dfd = beneath_open_canonical(c->rootfd, dir, O_PATH | O_DIRECTORY);
	if (dfd >= 0)
		unlinkat(dfd, tmp, 0);
	out = dfd < 0 ? dfd : openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				     0600);
	ret = out < 0 ? (dfd < 0 ? dfd : -errno) : copy_data(in, out, sb.st_size);
	if (!ret)
		staging_chown(&c->w, out, "", 0, 0);
	if (!ret && (fchmod(out, 0644) < 0 || futimens(out, ts) < 0))
		ret = -errno;
	if (out >= 0 && close(out) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(dfd, tmp, dfd, name) < 0)
		ret = -errno;
	if (!ret) {
		staging_own_entry(&c->w, to, MF_REG, 0644)->size = (uint64_t)sb.st_size;
	} else {
		if (dfd >= 0)
			unlinkat(dfd, tmp, 0);
		log_error("cannot copy '/%s' to '/%s' in the tree: %s", from, to, strerror(-ret));
		ret = -MKI_E_IMAGE;
	}
out:
	if (in >= 0)
		close(in);
	if (dfd >= 0)
		close(dfd);
	free(dir);
	free(tmp);
	return ret;
}

/* `rel` exists in the tree (not followed, as a file test of u-boot-update mostly agrees). */
static int exists(struct ctx *c, const char *rel, mode_t type)
{
	struct stat sb;

	return beneath_lstat(c->rootfd, rel, &sb) == 0 && (!type || (sb.st_mode & S_IFMT) == type);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* u-boot-update's fdtoverlays: BOOT_PATH/boot/dtbo/ *.dtbo, sorted as the glob sorts them. */
static char *overlays(struct ctx *c, const char *boot_path)
{
	char *dir = xasprintf("%sboot/dtbo", boot_path);
	int fd = beneath_open_canonical(c->rootfd, dir, O_RDONLY | O_DIRECTORY);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct strv names = { 0 };
	struct buf b = { 0 };
	struct dirent *de;
	size_t i;

	while (d && (de = readdir(d))) {
		char *rel = xasprintf("%s/%s", dir, de->d_name);

		if (de->d_name[0] != '.' && str_ends_with(de->d_name, ".dtbo") &&
		    exists(c, rel, S_IFREG))
			strv_push(&names, de->d_name);
		free(rel);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	if (names.n > 1)
		qsort(names.v, names.n, sizeof(*names.v), by_name);
	for (i = 0; i < names.n; i++)
		buf_addf(&b, " /boot/dtbo/%s", names.v[i]);
	strv_release(&names);
	free(dir);
	return b.p ? buf_detach(&b) : NULL;
}

/* `s`, kept in `owned` until the texts are written. */
static const char *keep(struct strv *owned, char *s)
{
	if (!s)
		return NULL;
	strv_push_take(owned, s);
	return s;
}

/* Each kernel's initrd and device tree lines, as u-boot-update tests for them. */
static struct bootcfg_kernel *extlinux_kernels(struct ctx *c, const char *boot_path,
					       struct strv *owned)
{
	struct bootcfg_kernel *k = xcalloc(c->kernels.n + 1, sizeof(*k));
	const struct board *b = board_get(c->r->board);
	const char *fdt = b ? b->fdt : NULL, *fdtfile;
	size_t i;

	for (i = 0; i < c->kernels.n; i++) {
		const char *v = c->kernels.v[i] + 8;
		char *initrd = xasprintf("boot/initrd.img-%s", v);
		char *fdtdir = xasprintf("%susr/lib/linux-image-%s", boot_path, v);
		char *dtb = xasprintf("%sdtb-%s", boot_path, v);

		k[i].image = c->kernels.v[i];
		k[i].version = v;
		k[i].initrd = exists(c, initrd, 0) ? keep(owned, xstrdup(initrd + 5))
			    : exists(c, "boot/initrd.img", 0) ? "initrd.img" : NULL;
		if (fdt && exists(c, fdtfile = keep(owned, xasprintf("%s/%s", fdtdir, fdt)), S_IFREG))
			k[i].fdt = keep(owned, xasprintf("fdt /usr/lib/linux-image-%s/%s", v, fdt));
		else if (exists(c, fdtdir, S_IFDIR))
			k[i].fdt = keep(owned, xasprintf("fdtdir /usr/lib/linux-image-%s/", v));
		else if (exists(c, dtb, S_IFREG))
			k[i].fdt = keep(owned, xasprintf("fdt /dtb-%s", v));
		free(initrd);
		free(fdtdir);
		free(dtb);
	}
	return k;
}

/* /etc/default/u-boot: the package's file with our root, parameters and default set. */
static int write_default_u_boot(struct ctx *c, const char *root, const char *params,
				const char *def)
{
	const struct board *b = board_get(c->r->board);
	const char *kv[9] = { "U_BOOT_ROOT", root, "U_BOOT_PARAMETERS", params };
	struct buf old = { 0 }, out = { 0 };
	size_t n = 4;
	int ret;

	if (b && b->fdt) { /* the board's device tree, not U-Boot's own (u-boot-update's fdt) */
		kv[n++] = "U_BOOT_FDT";
		kv[n++] = b->fdt;
	}
	if (c->r->image.kernel) {
		kv[n++] = "U_BOOT_DEFAULT";
		kv[n++] = def;
	}
	ret = read_text(c->rootfd, "etc/default/u-boot", 1, &old);
	if (ret && ret != -ENOENT)
		return -MKI_E_IMAGE;
	ret = bootcfg_default_u_boot(ret ? NULL : old.p, old.len, kv, &out);
	if (!ret)
		ret = put(c, "etc/default/u-boot", &out);
	buf_release(&old);
	buf_release(&out);
	return ret;
}

static int write_extlinux(struct ctx *c, struct buf *root, struct buf *params)
{
	int own = holding(c->r, "boot") != NULL; /* /boot a partition of its own */
	const char *boot_path = own ? "boot/" : "";
	struct bootcfg_extlinux x = { .boot_dir = own ? "" : "/boot", .params = params->p };
	char *label = os_value(&c->os_release, "PRETTY_NAME"), *def = NULL, *ovl;
	struct bootcfg_kernel *k;
	struct strv owned = { 0 };
	struct buf text = { 0 };
	int ret = printable("PRETTY_NAME of '/etc/os-release'", label);

	x.menu_label = label && *label ? label : "Debian GNU/Linux kernel";
	x.def = def = xasprintf("l%zu", c->chosen);
	x.root = root->p;
	x.overlays = ovl = overlays(c, boot_path);
	x.n_kernels = c->kernels.n;
	x.kernels = k = extlinux_kernels(c, boot_path, &owned);
	if (!ret && !c->late)
		ret = write_default_u_boot(c, root->p, params->p, def);
	bootcfg_extlinux_conf(&x, &text);
	if (!ret)
		ret = put(c, "boot/extlinux/extlinux.conf", &text);
	if (!ret)
		log_info("boot: '/boot/extlinux/extlinux.conf' boots '%s' with %s",
			 k[c->chosen].image, root->p);
	free(k);
	strv_release(&owned);
	free(ovl);
	buf_release(&text);
	free(label);
	free(def);
	return ret;
}

/* kernel-install's `read -r`: the first line, without the blanks around it. */
static char *first_line(struct buf *b)
{
	char *p = b->p, *end = p + strcspn(p, "\n");

	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = 0;
	p += strspn(p, " \t");
	return xstrdup(p);
}

/* os-release's ID, else "linux": the token kernel-install derives when none is set. */
static char *default_token(struct ctx *c, const char **from)
{
	char *t = os_value(&c->os_release, "ID");

	*from = "os-release's ID";
	if (!t || !*t) {
		free(t);
		*from = "kernel-install's default";
		t = xstrdup("linux");
	}
	return t;
}

/*
 * The entry token: /etc/kernel/entry-token as a hook left it, else os-release's ID. One that
 * cannot be read (a FIFO, a directory, too large) is worked around: the default, and a warning.
 */
static char *entry_token(struct ctx *c)
{
	const char *why, *from = NULL;
	struct buf b = { 0 };
	char *t = NULL, *p, *used;
	int ret = read_tree(c->rootfd, "etc/kernel/entry-token", 0, &b, &why);

	if (!ret)
		t = first_line(&b);
	buf_release(&b);
	if (!t || !*t) {
		free(t);
		t = default_token(c, &from);
	}
	if (ret && ret != -ENOENT) {
		used = xasprintf("the entry token '%s' (%s), written over it", t, from);
		log_warn_instead(used, "cannot read '/etc/kernel/entry-token' of the tree: %s", why);
		free(used);
	}
	for (p = t; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p)) {
			log_error("the entry token '%s' (/etc/kernel/entry-token or os-release's "
				  "ID) is not a file name for the ESP: use letters, digits, '.', "
				  "'_', '-'",
				  t);
			free(t);
			return NULL;
		}
	return t;
}

/* systemd-boot's loader at its own path and at the firmware's fallback path. */
static int install_loader(struct ctx *c, const char *dir)
{
	const char *efi = recipe_disk_efi_arch(c->r->arch);
	char *src = xasprintf("usr/lib/systemd/boot/efi/systemd-boot%s.efi", efi);
	char *own = xasprintf("%s/EFI/systemd/systemd-boot%s.efi", dir, efi);
	char *fallback = xasprintf("%s/EFI/BOOT/BOOT%s.EFI", dir, efi), *u;
	int ret = 0;

	for (u = fallback + strlen(dir) + 14; *u; u++)
		*u = (char)(*u >= 'a' && *u <= 'z' ? *u - 32 : *u);
	if (!exists(c, src, S_IFREG)) {
		log_error("the tree has no '/%s' (the package 'systemd-boot-efi' ships it): add "
			  "\"systemd-boot-efi\" to packages.install", src);
		ret = -MKI_E_IMAGE;
	}
	if (!ret)
		ret = copy_file(c, src, own);
	if (!ret)
		ret = copy_file(c, src, fallback);
	free(src);
	free(own);
	free(fallback);
	return ret;
}

/*
 * The BLS entry of the chosen kernel, with the kernel and initrd where kernel-install puts them.
 * On an update-ready disk (bootcfg_ab_sdboot.c) slot A's instead: TOKEN-A.conf, its kernel in
 * TOKEN/A/, first by its sort-key, the slot in its title.
 */
static int write_entry(struct ctx *c, const char *dir, const char *token, const char *options)
{
	const char *v = c->kernels.v[c->chosen] + 8, *sub = recipe_update_boots(c->r) ? "A" : v;
	char *title = os_value(&c->os_release, "PRETTY_NAME");
	char *key = os_value(&c->os_release, "IMAGE_ID"), *initrd = xasprintf("initrd.img-%s", v);
	char *from = xasprintf("boot/%s", c->kernels.v[c->chosen]), *to = NULL;
	struct bootcfg_entry e = { title, v, NULL, options, token, NULL, sub };
	struct buf text = { 0 };
	int ret = printable("PRETTY_NAME of '/etc/os-release'", title);

	if (!key || !*key) {
		free(key);
		key = os_value(&c->os_release, "ID");
	}
	if (!ret)
		ret = printable("ID or IMAGE_ID of '/etc/os-release'", key);
	if (recipe_update_boots(c->r)) { /* slot A's, first, named */
		char *slot_title = xasprintf("%s (slot A)", title && *title ? title : v);

		free(key);
		key = xasprintf("%s-ab-1", token);
		free(title);
		e.title = title = slot_title;
	}
	e.sort_key = key;
	to = xasprintf("%s/%s/%s/linux", dir, token, sub);
	if (!ret)
		ret = copy_file(c, from, to);
	free(from);
	free(to);
	from = xasprintf("boot/%s", initrd);
	to = xasprintf("%s/%s/%s/%s", dir, token, sub, initrd);
	if (!ret && exists(c, from, 0)) {
		e.initrd = initrd;
		ret = copy_file(c, from, to);
	}
	free(to);
	to = xasprintf("%s/loader/entries/%s-%s.conf", dir, token, sub);
	bootcfg_bls_entry(&e, &text);
	if (!ret)
		ret = put(c, to, &text);
	if (!ret)
		log_info("boot: '/%s' boots '%s' with %s", to, c->kernels.v[c->chosen], options);
	buf_release(&text);
	free(from);
	free(to);
	free(title);
	free(key);
	free(initrd);
	return ret;
}

static int write_systemd_boot(struct ctx *c, const char *options)
{
	const char *dir = esp(c->r)->path; /* the recipe requires an ESP holding a directory */
	char *token = entry_token(c), *rel = xasprintf("%s/loader/loader.conf", dir);
	struct buf b = { 0 };
	int ret = token ? install_loader(c, dir) : -MKI_E_IMAGE, ab;

	if (token)
		bootcfg_loader_conf(token, &b);
	if (!ret)
		ret = put(c, rel, &b);
	free(rel);
	rel = xasprintf("%s/loader/entries.srel", dir); /* bootctl's: the entries are type #1 */
	if (!ret)
		ret = put_text(c, rel, "type1\n");
	if (!ret)
		ret = write_entry(c, dir, token, options);
	buf_release(&b);
	/* A/B: kernels come with the slot's root, installed by the backend, not kernel-install */
	ab = recipe_update_boots(c->r);
	if (!ret && ab && !c->late)
		ret = bootcfg_ab_sdboot_write(&c->w, c->r, c->st->source_date_epoch, dir, token);
	buf_addf(&b, "%s\n", options);
	if (!ret && !c->late && !ab)
		ret = put(c, "etc/kernel/cmdline", &b);
	buf_release(&b);
	if (token)
		buf_addf(&b, "%s\n", token);
	if (!ret && !c->late && !ab)
		ret = put(c, "etc/kernel/entry-token", &b);
	buf_release(&b);
	free(rel);
	free(token);
	return ret;
}

static int write_loader(struct ctx *c)
{
	struct buf root = { 0 }, params = { 0 }, cmdline = { 0 }, options = { 0 };
	int ret = printable("disk.console or disk.cmdline", c->r->disk.cmdline);
	int extlinux_ab = recipe_update_boots(c->r) && c->r->disk.bootloader == DISK_BOOT_EXTLINUX;

	buf_adds(&root, "root=");
	if (extlinux_ab && c->r->update.verity)
		bootcfg_abv_root(c->r, c->roothash, &root);
	else if (extlinux_ab)
		bootcfg_ab_root(&root);
	else
		bootcfg_root(c->r, c->st->source_date_epoch, c->roothash, &root);
	bootcfg_parameters(c->r, &params);
	if (extlinux_ab)
		bootcfg_ab_parameters(c->r, &params);
	if (!ret)
		ret = printable("disk.console", c->r->disk.console);
	if (!ret)
		ret = pick_kernel(c);
	if (!ret && c->r->disk.bootloader == DISK_BOOT_EXTLINUX) {
		ret = write_extlinux(c, &root, &params);
	} else if (!ret) {
		buf_addf(&cmdline, "%s %s", root.p, params.p);
		if (recipe_update_boots(c->r)) /* slot A's entry */
			bootcfg_ab_sdboot_options(c->r, c->st->source_date_epoch, 0, &options);
		else
			bootcfg_squeeze(cmdline.p, &options);
		ret = write_systemd_boot(c, options.p);
	}
	buf_release(&root);
	buf_release(&params);
	buf_release(&cmdline);
	buf_release(&options);
	return ret;
}

/*
 * The A/B selection and RAUC's configuration; IMAGE_VERSION goes into the os-release file the
 * tree reads: /etc/os-release if a regular file, else the file its link names in Debian.
 */
static int write_ab(struct ctx *c)
{
	const char *path = exists(c, "etc/os-release", S_IFREG) ? "etc/os-release"
								 : "usr/lib/os-release";
	struct buf text = { 0 };
	int ret = read_text(c->rootfd, path, 1, &text);

	if (ret == -ENOENT) {
		buf_adds(&text, "");
		ret = 0;
	}
	if (!ret)
		ret = bootcfg_ab_write(&c->w, c->r, c->st->source_date_epoch, &text, path);
	buf_release(&text);
	return ret ? -MKI_E_IMAGE : 0;
}

static void writer_init(struct ctx *c, struct staging *s, int rootfd, const struct settings *st)
{
	c->w.rootfd = rootfd;
	c->w.m = &s->manifest;
	c->w.mtime = st->source_date_epoch < 0 ? 0 : st->source_date_epoch;
	c->w.can_chown = 1;
}

static int write_all(struct ctx *c, struct staging *s, int rootfd, const struct settings *st)
{
	int ret;

	writer_init(c, s, rootfd, st);
	ret = read_text(rootfd, "etc/os-release", 0, &c->os_release);
	if (ret == -ENOENT)
		ret = read_text(rootfd, "usr/lib/os-release", 0, &c->os_release);
	if (ret == -ENOENT) {
		buf_adds(&c->os_release, "");
		ret = 0;
	}
	ret = ret ? -MKI_E_IMAGE : write_loader(c);
	if (!ret && recipe_update_boots(c->r) && !c->late)
		ret = write_ab(c);
	buf_release(&c->os_release);
	strv_release(&c->kernels);
	return ret;
}

/* The firmware's files its package's hooks put into the FAT partition's directory. */
static int fat_check_files(struct ctx *c, const struct board *b)
{
	const char *const *f;
	int ret = 0;

	for (f = b->fat.files; !ret && f < b->fat.files + BOARD_FAT_FILES && *f; f++) {
		char *rel = xasprintf("%s/%s", b->fat.dir, *f);

		if (!exists(c, rel, S_IFREG)) {
			log_error("%s: board '%s' boots from '/%s', which the tree lacks after "
				  "configuring: %s's hooks put it there from the plan's kernel and "
				  "firmware (%s)", c->r->file, b->name, rel, b->package, b->rule);
			ret = -MKI_E_IMAGE;
		}
		free(rel);
	}
	return ret;
}

/* What the firmware's configuration names to load ("kernel=F", "initramfs F ..."): present. */
static int fat_check_config(struct ctx *c, const struct board *b)
{
	char *rel = xasprintf("%s/%s", b->fat.dir, b->fat.config), *line, *save = NULL, *file;
	struct buf text = { 0 };
	int ret = read_text(c->rootfd, rel, 1, &text) ? -MKI_E_IMAGE : 0, n = 0;

	for (line = ret ? NULL : strtok_r(text.p, "\n", &save); !ret && line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "kernel=", 7))
			file = xstrndup(line + 7, strcspn(line + 7, " \t"));
		else if (!strncmp(line, "initramfs ", 10))
			file = xstrndup(line + 10, strcspn(line + 10, " \t"));
		else
			continue;
		n++;
		free(rel);
		rel = xasprintf("%s/%s", b->fat.dir, file);
		if (!*file || strchr(file, '/') || !exists(c, rel, S_IFREG)) {
			log_error("%s: board '%s': '/%s/%s' names '%s' to load, which is not a file "
				  "of '/%s' (%s)", c->r->file, b->name, b->fat.dir, b->fat.config,
				  file, b->fat.dir, b->rule);
			ret = -MKI_E_IMAGE;
		}
		free(file);
	}
	if (!ret && n < 2) {
		log_error("%s: board '%s': '/%s/%s' names no kernel and initramfs to load: %s's "
			  "hooks found none in /boot (%s)", c->r->file, b->name, b->fat.dir,
			  b->fat.config, b->package, b->rule);
		ret = -MKI_E_IMAGE;
	}
	buf_release(&text);
	free(rel);
	return ret;
}

/* cmdline.txt, and the settings its hooks read, with the disk's root and console. */
static int fat_write_cmdline(struct ctx *c, const struct board *b)
{
	char *rel = xasprintf("%s/%s", b->fat.dir, b->fat.cmdline);
	const char *kv[5] = { "ROOTPART", NULL, "CONSOLES", c->r->disk.console };
	struct buf root = { 0 }, old = { 0 }, out = { 0 };
	int ret = read_text(c->rootfd, rel, 1, &old) ? -MKI_E_IMAGE : 0;

	bootcfg_root(c->r, c->st->source_date_epoch, NULL, &root);
	kv[1] = root.p;
	if (!ret && bootcfg_fat_cmdline(old.p, root.p, c->r->disk.console, &out)) {
		log_error("%s: board '%s': '/%s' as %s's hooks wrote it has no root= word to "
			  "set the disk's root in; fix the hook or the settings that changed it",
			  c->r->file, b->name, rel, b->package);
		ret = -MKI_E_IMAGE;
	}
	if (!ret)
		ret = put(c, rel, &out);
	buf_release(&old);
	buf_release(&out);
	ret = ret ? ret : read_text(c->rootfd, b->fat.defaults, 1, &old);
	if (ret == -ENOENT)
		ret = 0;
	else if (ret)
		ret = -MKI_E_IMAGE;
	if (!ret)
		ret = bootcfg_fat_defaults(old.p, old.len, b->fat.defaults, kv, &out);
	if (!ret)
		ret = put(c, b->fat.defaults, &out);
	if (!ret)
		log_info("boot: '/%s' boots with root=%s console=%s", rel, root.p,
			 c->r->disk.console);
	buf_release(&root);
	buf_release(&old);
	buf_release(&out);
	free(rel);
	return ret;
}

int bootcfg_write(struct staging *s, const struct recipe *r, int rootfd, const struct settings *st)
{
	struct ctx c = { .r = r, .st = st, .rootfd = rootfd };
	const struct board *b = board_get(r->board);
	int ret;

	if (r->disk.set && b && b->fat.dir) { /* the recipe has no boot loader (recipe_board.c) */
		writer_init(&c, s, rootfd, st);
		ret = fat_check_files(&c, b);
		if (!ret)
			ret = fat_check_config(&c, b);
		return ret ? ret : fat_write_cmdline(&c, b);
	}
	if (!r->disk.set || r->disk.bootloader == DISK_BOOT_NONE)
		return 0;
	return write_all(&c, s, rootfd, st);
}

const char *bootcfg_entry_path(const struct recipe *r)
{
	if (!r->disk.set || recipe_disk_root_verity(r) < 0 || r->disk.bootloader == DISK_BOOT_NONE)
		return NULL;
	return r->disk.bootloader == DISK_BOOT_EXTLINUX ? "boot/extlinux" : esp(r)->path;
}

int bootcfg_write_roothash(struct staging *s, const struct recipe *r, int rootfd,
			   const struct settings *st, const char *roothash)
{
	struct ctx c = { .r = r, .st = st, .rootfd = rootfd, .roothash = roothash, .late = 1 };

	if (!r->disk.set || r->disk.bootloader == DISK_BOOT_NONE)
		return 0;
	return write_all(&c, s, rootfd, st);
}
