#include "bootexport.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/manifest.h"
#include "lib/runlimits.h"
#include "lib/str.h"
#include "bootexport_internal.h"

#define KERNEL_PREFIX "boot/vmlinu" /* then 'z' (compressed) or 'x' (not), '-', the release */
#define CHUNK (256u << 10)

/* What a FIFO, device or socket is, for a message; NULL for the other types. */
static const char *special_kind(char type)
{
	switch (type) {
	case MF_FIFO:
		return "a FIFO";
	case MF_CHR:
		return "a character device";
	case MF_BLK:
		return "a block device";
	case MF_SOCK:
		return "a socket";
	default:
		return NULL;
	}
}

/*
 * A boot file a script replaced by a FIFO, device or socket: refused, naming it and the package
 * that shipped it (a hard link or symlink keeps today's handling). -MKI_E_IMAGE or 0.
 */
static int refuse_special(const struct manifest_entry *e)
{
	const char *kind = e ? special_kind(e->type) : NULL;

	if (!kind)
		return 0;
	log_error("image.export_boot: '/%s'%s%s%s is %s, not a regular file (a maintainer script or "
		  "hook replaced it): not exported; fix the package or the hook that makes it",
		  e->path, e->owners.n ? " (package '" : "", e->owners.n ? e->owners.v[0] : "",
		  e->owners.n ? "')" : "", kind);
	return -MKI_E_IMAGE;
}

/*
 * The release of `path` when it is a kernel image as linux-version lists them,
 * "boot/vmlinu[xz]-RELEASE" but signatures (riscv64's are uncompressed: vmlinux), or NULL.
 */
static const char *kernel_release(const char *path)
{
	size_t n = strlen(KERNEL_PREFIX);

	if (strncmp(path, KERNEL_PREFIX, n) || (path[n] != 'z' && path[n] != 'x') ||
	    path[n + 1] != '-' || !path[n + 2] || strchr(path + n + 2, '/') ||
	    str_ends_with(path, ".sig"))
		return NULL;
	return path + n + 2;
}

/* The manifest's kernel images (regular files), their paths in `paths`, releases in `rel`. */
static void find_kernels(const struct manifest *m, struct strv *paths, struct strv *rel)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		const struct manifest_entry *e = m->v[i];

		if (e->type == MF_REG && kernel_release(e->path)) {
			strv_push(paths, e->path);
			strv_push(rel, kernel_release(e->path));
		}
	}
}

/* Log why no kernel is picked from releases `rel`, `n` of which match image.kernel (or all). */
static void pick_error(const struct recipe *r, const struct strv *rel, size_t n)
{
	const char *want = r->image.kernel;
	char *list = strv_join(rel, "', '");

	if (!rel->n)
		log_error("image.export_boot: the image has no kernel (/boot/vmlinuz-* or "
			  "/boot/vmlinux-*): install one (such as linux-image-armmp) or drop "
			  "export_boot");
	else if (want && !n)
		log_error("image.kernel: the image has no kernel '%s' (/boot/vmlinuz-%s or "
			  "/boot/vmlinux-%s); it has '%s'", want, want, want, list);
	else if (!want)
		log_error("image.export_boot: the image has %zu kernels ('%s'): name the one to "
			  "export with image.kernel = \"RELEASE\"", rel->n, list);
	else
		log_error("image.kernel: the image has kernel '%s' twice, as '/boot/vmlinuz-%s' "
			  "and '/boot/vmlinux-%s': remove one in a hook", want, want, want);
	free(list);
}

static int pick_kernel(struct bootexport *be, const struct staging *s, const struct recipe *r)
{
	struct strv k = { 0 }, rel = { 0 };
	size_t i, n = 0, at = 0;

	for (i = 0; i < s->manifest.n; i++)
		if (kernel_release(s->manifest.v[i]->path) && refuse_special(s->manifest.v[i]))
			return -MKI_E_IMAGE;
	find_kernels(&s->manifest, &k, &rel);
	for (i = 0; i < rel.n; i++)
		if (!r->image.kernel || !strcmp(rel.v[i], r->image.kernel))
			n++, at = i;
	if (n == 1) {
		be->version = xstrdup(rel.v[at]);
		be->file = xstrdup(k.v[at]);
	} else {
		pick_error(r, &rel, n);
	}
	strv_release(&k);
	strv_release(&rel);
	return be->version ? 0 : -MKI_E_IMAGE;
}

/* Feed `n` zero bytes (a hole) to `h`: the hash is the file's, holes read as zeros. */
static void hash_zeros(struct hash *h, uint64_t n)
{
	static const char zeros[CHUNK];

	while (h && n) {
		size_t k = n < CHUNK ? (size_t)n : CHUNK;

		hash_update(h, zeros, k);
		n -= k;
	}
}

/* Copy [from, to) of `in` to the same place in `out` through `chunk`, hashing it. */
static int copy_range(int in, int out, off_t from, off_t to, char *chunk, struct hash *h)
{
	while (from < to) {
		size_t want = to - from < CHUNK ? (size_t)(to - from) : CHUNK;
		ssize_t n = pread(in, chunk, want, from);
		int ret;

		if (n <= 0)
			return n < 0 ? -errno : -EIO; /* shorter than its stat said: changed under us */
		if (lseek(out, from, SEEK_SET) < 0)
			return -errno;
		ret = fsutil_write_all(out, chunk, (size_t)n);
		if (ret)
			return ret;
		if (h)
			hash_update(h, chunk, (size_t)n);
		from += n;
	}
	return 0;
}

int bootexport_copy(int in, int out, off_t size, struct hash *h, uint64_t *data,
		    uint64_t max_data)
{
	char *chunk = xmalloc(CHUNK);
	off_t pos = 0, start, end = 0;
	int ret = 0;

	while (!ret && pos < size) {
		start = lseek(in, pos, SEEK_DATA);
		if (start < 0 && errno == ENXIO)
			start = size; /* the rest is a hole */
		else if (start < 0 || (end = lseek(in, start, SEEK_HOLE)) < 0)
			ret = -errno;
		if (ret)
			break;
		start = start < size ? start : size;
		end = start == size || end > size ? size : end;
		hash_zeros(h, (uint64_t)(start - pos));
		*data += (uint64_t)(end - start);
		ret = *data > max_data ? -EFBIG : copy_range(in, out, start, end, chunk, h);
		pos = end;
	}
	if (!ret && ftruncate(out, size) < 0) /* a trailing hole */
		ret = -errno;
	free(chunk);
	return ret;
}

/*
 * Charge file `rel` of `size` bytes to boot-size before reading it: reading and hashing its
 * holes costs time, whatever little disk they take.
 */
static int charge(struct bootexport *be, const char *rel, off_t size)
{
	uint64_t max = runlimits_get(be->lim, LIMIT_BOOT_SIZE);
	struct buf name = { 0 };

	be->apparent += (uint64_t)size;
	if (be->apparent <= max)
		return 0;
	buf_add_escaped(&name, rel);
	log_error("image.export_boot: the boot files of kernel '%s' are larger than %s with "
		  "'/%s' (%lld bytes, holes included): refused (%s)", be->version,
		  runlimits_format(LIMIT_BOOT_SIZE, max).s, name.p, (long long)size,
		  runlimits_hint(be->lim, LIMIT_BOOT_SIZE).s);
	buf_release(&name);
	return -MKI_E_HOOK;
}

static int data_over(const struct bootexport *be, const char *rel)
{
	struct buf name = { 0 };

	buf_add_escaped(&name, rel);
	log_error("image.export_boot: the boot files of kernel '%s' hold more than %s of data "
		  "with '/%s': refused (%s)", be->version,
		  runlimits_format(LIMIT_STAGING_SIZE, runlimits_get(be->lim, LIMIT_STAGING_SIZE)).s,
		  name.p, runlimits_hint(be->lim, LIMIT_STAGING_SIZE).s);
	buf_release(&name);
	return -MKI_E_HOOK;
}

/*
 * Copy tree file `rel` (a canonical path: no link followed) to new file `to`, 0644, time `sde`,
 * keeping its holes; its size counts against boot-size, its data against staging-size.
 */
static int copy_out(struct bootexport *be, int rootfd, const char *rel, const char *to,
		    int64_t sde, char *hex)
{
	struct timespec ts[2] = { { .tv_sec = sde }, { .tv_sec = sde } };
	int in = beneath_open_canonical(rootfd, rel, O_RDONLY | O_NONBLOCK), out = -1, ret = 0;
	struct hash h;
	struct stat sb;

	if (in < 0)
		return in;
	if (fstat(in, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(in);
		return -EINVAL;
	}
	ret = charge(be, rel, sb.st_size);
	if (ret)
		goto out;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0 || (hex && hash_init(&h, HASH_SHA256) < 0)) {
		ret = out < 0 ? -errno : -ENOMEM;
		goto out;
	}
	ret = bootexport_copy(in, out, sb.st_size, hex ? &h : NULL, &be->data,
			      runlimits_get(be->lim, LIMIT_STAGING_SIZE));
	if (hex)
		hash_final_hex(&h, hex);
	if (ret == -EFBIG)
		ret = data_over(be, rel);
	if (!ret && (fchmod(out, 0644) < 0 || futimens(out, ts) < 0))
		ret = -errno;
	if (!ret) /* its writeback starts now, the wait is the commit's (sync_written) */
		sync_file_range(out, 0, 0, SYNC_FILE_RANGE_WRITE);
	if (!ret)
		strv_push(&be->written, to);
out:
	if (out >= 0 && close(out) < 0 && !ret)
		ret = -errno;
	close(in);
	return ret;
}

/* The manifest's regular files and directories under `dir` into new directory `to`. */
static int copy_dtbs(struct bootexport *be, const struct staging *s, int rootfd, const char *dir,
		     const char *to, int64_t sde)
{
	size_t i, n = strlen(dir);
	int ret = 0;

	for (i = 0; !ret && i < s->manifest.n; i++) {
		const struct manifest_entry *e = s->manifest.v[i];
		char *dst;

		if (strncmp(e->path, dir, n) || e->path[n] != '/')
			continue;
		dst = xasprintf("%s/%s", to, e->path + n + 1);
		if (e->type == MF_DIR)
			ret = mkdir(dst, 0755) < 0 && errno != EEXIST ? -errno : 0;
		else if (e->type == MF_REG && !(ret = copy_out(be, rootfd, e->path, dst, sde, NULL)))
			be->n_dtbs++;
		free(dst);
	}
	return ret;
}

static int has(const struct staging *s, const char *path, char type)
{
	const struct manifest_entry *e = manifest_get(&s->manifest, path);

	return e && e->type == type;
}

/* images/NAME.ext4 -> images/NAME + `suffix` */
static char *beside(const char *output, const char *suffix)
{
	const char *slash = strrchr(output, '/'), *dot = strrchr(output, '.');
	int stem = (int)(dot && (!slash || dot > slash + 1) ? dot - output : (long)strlen(output));

	return xasprintf("%.*s%s", stem, output, suffix);
}

static int copy_all(struct bootexport *be, const struct staging *s, int rootfd, int64_t sde)
{
	int ret = copy_out(be, rootfd, be->file, be->tmp_kernel, sde, be->kernel_sha256);
	char *rel = xasprintf("boot/initrd.img-%s", be->version);

	if (!ret)
		ret = refuse_special(manifest_get(&s->manifest, rel));
	if (!ret && has(s, rel, MF_REG)) {
		be->tmp_initrd = xasprintf("%s.tmp-%d", be->initrd, (int)getpid());
		ret = copy_out(be, rootfd, rel, be->tmp_initrd, sde, be->initrd_sha256);
	} else if (!ret) {
		log_warn("image.export_boot: the image has no '/%s' (initramfs-tools or dracut "
			 "makes it): only the kernel is exported", rel);
	}
	free(rel);
	rel = xasprintf("usr/lib/linux-image-%s", be->version);
	if (!ret && has(s, rel, MF_DIR)) {
		be->tmp_dtbs = xasprintf("%s.tmp-%d", be->dtbs, (int)getpid());
		ret = mkdir(be->tmp_dtbs, 0755) < 0 ? -errno
			: copy_dtbs(be, s, rootfd, rel, be->tmp_dtbs, sde);
	}
	free(rel);
	return ret;
}

int bootexport_prepare(struct bootexport *be, const struct staging *s, const struct recipe *r,
		       const char *output, int64_t sde, const struct limits *lim)
{
	int rootfd, ret = pick_kernel(be, s, r);

	if (ret)
		return ret;
	be->lim = lim;
	/* The exported name says, as /boot's does, whether the kernel is compressed */
	be->uncompressed = be->file[strlen(KERNEL_PREFIX)] == 'x';
	be->kernel = beside(output, be->uncompressed ? ".vmlinux" : ".vmlinuz");
	be->other_kernel = beside(output, be->uncompressed ? ".vmlinuz" : ".vmlinux");
	be->initrd = beside(output, ".initrd.img");
	be->dtbs = beside(output, ".dtbs");
	be->tmp_kernel = xasprintf("%s.tmp-%d", be->kernel, (int)getpid());
	rootfd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ret = rootfd < 0 ? -errno : copy_all(be, s, rootfd, sde < 0 ? 0 : sde);
	if (rootfd >= 0)
		close(rootfd);
	if (ret == -MKI_E_HOOK || ret == -MKI_E_IMAGE)
		return ret; /* a limit or a refused file, logged */
	if (ret) {
		log_error("image.export_boot: cannot copy kernel '%s' and its files beside '%s': %s",
			  be->version, output, strerror(-ret));
		return -MKI_E_IMAGE;
	}
	log_info("boot files of kernel '%s' ready: %s%s%s", be->version,
		 be->uncompressed ? "vmlinux" : "vmlinuz",
		 be->tmp_initrd ? ", initrd" : "", be->tmp_dtbs ? ", device trees" : "");
	return 0;
}

static void *remove_main(void *arg)
{
	fsutil_remove_tree(arg);
	return NULL;
}

/*
 * The replaced directory (now at `old`) removed on a thread bootexport_release() joins: a
 * board's 900 device trees are as many unlinks (0.1 s on a quiet disk, over a second on a busy
 * one), which the block map, lock, SBOM and report need not wait for. Without a thread, here.
 */
static void remove_old(struct bootexport *be, char *old)
{
	sigset_t all, mask;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mask); /* SIGINT and SIGTERM stay the main thread's */
	be->removing = !pthread_create(&be->remover, NULL, remove_main, old);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (!be->removing)
		fsutil_remove_tree(old);
}

/* A directory over another: exchanged atomically, then the old one removed. */
static int replace_dir(struct bootexport *be, char *tmp, const char *final)
{
	if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_EXCHANGE)) {
		remove_old(be, tmp);
		return 0;
	}
	if (errno != ENOENT)
		return -errno;
	return rename(tmp, final) < 0 ? -errno : 0;
}

/*
 * Every file copied on disk before any is renamed into place. One fsync each right after its
 * copy made a journal commit per file (a board's kernel ships some 900 device trees: 0.2-0.3 s
 * of a rebuild); here the image's write lies between, the data is long written back, and the
 * first fsync's commit covers the other files' metadata, so the rest return at once.
 */
static int sync_written(const struct bootexport *be)
{
	size_t i;
	int fd, ret = 0;

	for (i = 0; !ret && i < be->written.n; i++) {
		fd = open(be->written.v[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fsync(fd) < 0)
			ret = -errno;
		if (fd >= 0)
			close(fd);
	}
	return ret;
}

int bootexport_commit(struct bootexport *be)
{
	int ret = sync_written(be);

	if (!ret && rename(be->tmp_kernel, be->kernel) < 0)
		ret = -errno;
	if (!ret && unlink(be->other_kernel) < 0 && errno != ENOENT) /* an earlier build's */
		ret = -errno;
	if (!ret && be->tmp_initrd && rename(be->tmp_initrd, be->initrd) < 0)
		ret = -errno;
	if (!ret && be->tmp_dtbs)
		ret = replace_dir(be, be->tmp_dtbs, be->dtbs);
	if (!ret && !be->tmp_initrd && unlink(be->initrd) < 0 && errno != ENOENT)
		ret = -errno;
	if (!ret && !be->tmp_dtbs)
		fsutil_remove_tree(be->dtbs); /* an earlier build's: this image has none */
	if (ret) {
		log_error("cannot put the boot files beside the image ('%s'): %s", be->kernel,
			  strerror(-ret));
		return -MKI_E_IMAGE;
	}
	be->committed = 1;
	return 0;
}

void bootexport_json(const struct bootexport *be, struct buf *b)
{
	if (!be->committed)
		return;
	buf_adds(b, "  \"boot\": { \"kernel\": ");
	json_str(b, be->version);
	/* "vmlinuz" names the kernel beside the image, NAME.vmlinux too: the report's keys stay */
	buf_adds(b, ", \"vmlinuz\": ");
	json_str(b, be->kernel);
	buf_addf(b, ", \"vmlinuz_sha256\": \"%s\", \"initrd\": ", be->kernel_sha256);
	if (be->tmp_initrd) {
		json_str(b, be->initrd);
		buf_addf(b, ", \"initrd_sha256\": \"%s\"", be->initrd_sha256);
	} else {
		buf_adds(b, "null");
	}
	buf_adds(b, ", \"dtbs\": ");
	if (be->tmp_dtbs) {
		json_str(b, be->dtbs);
		buf_addf(b, ", \"dtb_files\": %u", be->n_dtbs);
	} else {
		buf_adds(b, "null");
	}
	buf_adds(b, " },\n");
}

void bootexport_release(struct bootexport *be)
{
	if (be->removing)
		pthread_join(be->remover, NULL);
	if (!be->committed) {
		if (be->tmp_kernel)
			unlink(be->tmp_kernel);
		if (be->tmp_initrd)
			unlink(be->tmp_initrd);
		if (be->tmp_dtbs)
			fsutil_remove_tree(be->tmp_dtbs);
	}
	free(be->version);
	free(be->file);
	free(be->kernel);
	free(be->other_kernel);
	free(be->initrd);
	free(be->dtbs);
	free(be->tmp_kernel);
	free(be->tmp_initrd);
	free(be->tmp_dtbs);
	strv_release(&be->written);
	memset(be, 0, sizeof(*be));
}
