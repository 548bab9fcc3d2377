/* Each kernel's initramfs held against what the tree asked of it: see initrdcheck.h. */
#include "initrdcheck.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/strv.h"
#include "lib/x.h"

#define NEWC_HEADER 110
#define CONF_MAX (64 * 1024)
#define WALK_DEPTH 8

struct scan {
	const char *prefix;
	size_t prefix_len;
	unsigned entries, hits;
};

/* Names as the kernel unpacks them: "./", "/" and a merged "usr/" make no difference. */
static int note_name(struct scan *s, const char *name)
{
	while (*name == '.' && name[1] == '/')
		name += 2;
	while (*name == '/')
		name++;
	if (!strncmp(name, "usr/", 4))
		name += 4;
	if (++s->entries > INITRDCHECK_MAX_ENTRIES)
		return -EFBIG;
	if (!strncmp(name, s->prefix, s->prefix_len))
		s->hits++;
	return 0;
}

static int hexfield(const char *p, unsigned long *out)
{
	char tmp[9], *end;

	memcpy(tmp, p, 8);
	tmp[8] = 0;
	*out = strtoul(tmp, &end, 16);
	return *end ? -EBADMSG : 0;
}

static int pread_all(int fd, void *p, size_t n, off_t off)
{
	ssize_t got = pread(fd, p, n, off);

	if (got < 0)
		return -errno;
	return (size_t)got == n ? 0 : -EBADMSG;
}

/* One uncompressed newc archive at *off, up to and past its trailer. */
static int scan_newc(int fd, off_t *off, struct scan *s)
{
	char hdr[NEWC_HEADER], name[INITRDCHECK_MAX_NAME + 1];
	unsigned long namesize, filesize;
	int ret;

	for (;;) {
		if ((ret = pread_all(fd, hdr, sizeof(hdr), *off)))
			return ret;
		if (memcmp(hdr, "07070", 5) || (hdr[5] != '1' && hdr[5] != '2'))
			return -EBADMSG;
		if (hexfield(hdr + 54, &filesize) || hexfield(hdr + 94, &namesize) || !namesize ||
		    namesize > sizeof(name) - 1)
			return -EBADMSG;
		if ((ret = pread_all(fd, name, namesize, *off + NEWC_HEADER)))
			return ret;
		name[namesize] = 0;
		*off += (NEWC_HEADER + namesize + 3) & ~3UL;
		*off += (filesize + 3) & ~3UL;
		if (!strcmp(name, "TRAILER!!!"))
			return 0;
		if ((ret = note_name(s, name)))
			return ret;
	}
}

/* Past the zeros that pad one segment before the next; 1 at the end of the file. */
static int skip_padding(int fd, off_t *off)
{
	unsigned char b[4096];
	ssize_t n, i;

	while ((n = pread(fd, b, sizeof(b), *off)) > 0) {
		for (i = 0; i < n && !b[i]; i++)
			;
		*off += i;
		if (i < n)
			return 0;
	}
	return n < 0 ? -errno : 1;
}

/* A compressed segment at `off`: one cpio archive, read through libarchive to its end. */
static int scan_compressed(int fd, off_t off, struct scan *s)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int r, ret = 0;

	archive_read_support_filter_all(a);
	archive_read_support_format_cpio(a);
	if (lseek(fd, off, SEEK_SET) < 0 || archive_read_open_fd(a, fd, 65536) != ARCHIVE_OK)
		ret = -EBADMSG;
	while (!ret && (r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);

		if (!name || strlen(name) > INITRDCHECK_MAX_NAME)
			ret = -EBADMSG;
		else
			ret = note_name(s, name);
		if (!ret && archive_read_data_skip(a) != ARCHIVE_OK)
			ret = -EBADMSG;
	}
	if (!ret && r != ARCHIVE_EOF)
		ret = -EBADMSG;
	archive_read_free(a);
	return ret;
}

int initrdcheck_count(int fd, const char *prefix, unsigned *entries, unsigned *hits)
{
	struct scan s = { .prefix = prefix, .prefix_len = strlen(prefix) };
	char magic[6];
	off_t off = 0;
	int ret = 0;

	while (!ret && !(ret = skip_padding(fd, &off))) {
		if ((ret = pread_all(fd, magic, sizeof(magic), off)))
			break;
		if (memcmp(magic, "07070", 5)) {
			ret = scan_compressed(fd, off, &s);
			break;
		}
		ret = scan_newc(fd, &off, &s);
	}
	*entries = s.entries;
	*hits = s.hits;
	return ret == 1 ? 0 : ret;
}

/* Files named *.ko* under the directory `dfd`, through no symlink, at most WALK_DEPTH deep. */
static unsigned count_modules(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	unsigned n = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		int sub;

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type == DT_REG && strstr(de->d_name, ".ko"))
			n++;
		else if (de->d_type == DT_DIR && depth < WALK_DEPTH &&
			 (sub = openat(dirfd(d), de->d_name,
				       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			n += count_modules(sub, depth + 1);
	}
	closedir(d);
	return n;
}

/* The last MODULES= of one configuration file into *value (kept when the file has none). */
static void read_modules_setting(int rootfd, const char *rel, char **value)
{
	char *text = NULL, *line, *save = NULL;
	int fd = beneath_open_regular(rootfd, rel, 0, NULL);
	ssize_t n;

	if (fd < 0)
		return;
	text = xmalloc(CONF_MAX + 1);
	n = read(fd, text, CONF_MAX);
	close(fd);
	text[n > 0 ? n : 0] = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		if (strncmp(line, "MODULES=", 8))
			continue;
		line += 8;
		line[strcspn(line, " \t#")] = 0;
		if (*line == '"' || *line == '\'')
			line++;
		line[strcspn(line, "\"'")] = 0;
		free(*value);
		*value = xstrdup(line);
	}
	free(text);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* MODULES as mkinitramfs sees it: initramfs.conf, then conf.d's files in order. */
static char *modules_setting(int rootfd)
{
	struct strv files = { 0 };
	char *value = NULL;
	int dfd = beneath_open(rootfd, "etc/initramfs-tools/conf.d", O_RDONLY | O_DIRECTORY, 0);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	size_t i;

	read_modules_setting(rootfd, "etc/initramfs-tools/initramfs.conf", &value);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			strv_push_take(&files, xasprintf("etc/initramfs-tools/conf.d/%s", de->d_name));
	if (d)
		closedir(d);
	else if (dfd >= 0)
		close(dfd);
	if (files.n)
		qsort(files.v, files.n, sizeof(*files.v), by_name);
	for (i = 0; i < files.n; i++)
		read_modules_setting(rootfd, files.v[i], &value);
	strv_release(&files);
	return value;
}

static int check_kernel(int rootfd, const char *root, const char *version)
{
	char *initrd = xasprintf("boot/initrd.img-%s", version);
	char *blockdir = xasprintf("lib/modules/%s/kernel/drivers/block", version);
	char *prefix = xasprintf("%s/", blockdir);
	int dfd = beneath_open(rootfd, blockdir, O_RDONLY | O_DIRECTORY, 0), fd, ret = 0;
	unsigned shipped, entries = 0, hits = 0;

	/* /lib/modules, or /usr/lib/modules of a /usr not merged (the initramfs merges them). */
	if (dfd < 0) {
		char *usr = xasprintf("usr/%s", blockdir);

		dfd = beneath_open(rootfd, usr, O_RDONLY | O_DIRECTORY, 0);
		free(usr);
	}
	shipped = dfd >= 0 ? count_modules(dfd, 0) : 0;

	if (!shipped)
		goto out;
	fd = beneath_open_regular(rootfd, initrd, 0, NULL);
	ret = fd < 0 ? fd : initrdcheck_count(fd, prefix, &entries, &hits);
	if (fd >= 0)
		close(fd);
	if (ret) {
		log_error("cannot read the initramfs '/%s' of '%s': %s", initrd, root,
			  ret == -EBADMSG ? "not a cpio archive mkimage can read" : strerror(-ret));
		ret = -MKI_E_HOOK;
	} else if (!hits) {
		log_error("the initramfs '/%s' holds none of the %u block device drivers kernel '%s' "
			  "ships as modules (/%s), though initramfs-tools was asked for MODULES=most: "
			  "the system could not find its root disk; it holds %u entries; see what "
			  "update-initramfs printed in the build log", initrd, shipped, version,
			  blockdir, entries);
		ret = -MKI_E_HOOK;
	} else {
		log_debug("initramfs '/%s': %u entries, %u of the %u block device drivers", initrd,
			  entries, hits, shipped);
	}
out:
	free(initrd);
	free(blockdir);
	free(prefix);
	return ret;
}

int initrdcheck_tree(int rootfd, const char *root)
{
	char *modules = modules_setting(rootfd);
	int dfd, ret = 0;
	DIR *d;
	struct dirent *de;

	if (!modules || strcmp(modules, "most")) {
		free(modules);
		return 0;
	}
	free(modules);
	dfd = beneath_open(rootfd, "boot", O_RDONLY | O_DIRECTORY, 0);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while (!ret && (de = readdir(d)))
		if (de->d_type == DT_REG && !strncmp(de->d_name, "initrd.img-", 11))
			ret = check_kernel(rootfd, root, de->d_name + 11);
	closedir(d);
	return ret;
}
