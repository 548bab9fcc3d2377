/*
 * Drive the image writer alone:
 *   mkfs TREE OUTPUT [--manifest FILE] [--format ext4|tar|squashfs] [--size N|auto] [--margin PCT]
 *        [--compression zstd|xz|lz4|gzip|none]
 *        [--label L] [--reserved PCT] [--sde N] [--seed HEX] [--uuid U] [--hash-seed U]
 *        [--device PATH:TYPE:MAJOR:MINOR:MODE:UID:GID]... [--save-manifest FILE]
 *        [--verity HASHFILE]
 * --verity writes OUTPUT's dm-verity hash tree (image/verity.h; salt and UUID from --seed's
 * first bytes, zeros without) into HASHFILE and prints the root hash.
 * Without --manifest the manifest is built from lstat() of TREE (owners as seen; the first
 * name of a multiply-linked inode in sorted order is the file, the others hard links to it).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fcntl.h>

#include "image/image.h"
#include "image/sink.h"
#include "image/verity.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/manifest.h"
#include "lib/manifest_internal.h"
#include "lib/str.h"
#include "recipe/recipe_internal.h"

struct seen {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct walk {
	struct manifest *m;
	struct seen *seen;
	size_t n_seen, alloc_seen;
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void read_xattrs(struct manifest_entry *e, const char *full)
{
	char names[65536], value[65536];
	ssize_t n = llistxattr(full, names, sizeof(names)), v;
	char *p;

	for (p = names; n > 0 && p < names + n; p += strlen(p) + 1) {
		v = lgetxattr(full, p, value, sizeof(value));
		if (v >= 0)
			manifest_set_xattr(e, p, value, (size_t)v);
	}
}

static const char *hardlink_of(struct walk *w, const struct stat *st, const char *rel)
{
	size_t i;

	if (S_ISDIR(st->st_mode) || st->st_nlink < 2)
		return NULL;
	for (i = 0; i < w->n_seen; i++)
		if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
			return w->seen[i].path;
	ALLOC_GROW(w->seen, w->n_seen + 1, w->alloc_seen);
	w->seen[w->n_seen].dev = st->st_dev;
	w->seen[w->n_seen].ino = st->st_ino;
	w->seen[w->n_seen++].path = xstrdup(rel);
	return NULL;
}

static char type_of(mode_t m)
{
	return S_ISDIR(m) ? MF_DIR : S_ISLNK(m) ? MF_SYMLINK : S_ISCHR(m) ? MF_CHR :
	       S_ISBLK(m) ? MF_BLK : S_ISFIFO(m) ? MF_FIFO : S_ISSOCK(m) ? MF_SOCK : MF_REG;
}

static int walk(struct walk *w, const char *root, const char *rel);

static int add_one(struct walk *w, const char *root, const char *rel)
{
	char *full = xasprintf("%s/%s", root, rel), target[8192];
	struct manifest_entry *e = manifest_add(w->m, rel);
	const char *first;
	struct stat st;
	ssize_t n;
	int ret = 0;

	if (lstat(full, &st)) {
		fprintf(stderr, "mkfs: %s: %s\n", full, strerror(errno));
		free(full);
		return -errno;
	}
	e->type = type_of(st.st_mode);
	e->mode = st.st_mode & 07777;
	e->uid = st.st_uid;
	e->gid = st.st_gid;
	e->mtime = st.st_mtime;
	e->major = major(st.st_rdev);
	e->minor = minor(st.st_rdev);
	e->size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	if (e->type == MF_SYMLINK && (n = readlink(full, target, sizeof(target) - 1)) >= 0) {
		target[n] = 0;
		e->target = xstrdup(target);
	}
	if ((first = hardlink_of(w, &st, rel))) {
		e->type = MF_HARDLINK;
		e->target = xstrdup(first);
	}
	read_xattrs(e, full);
	if (e->type == MF_DIR)
		ret = walk(w, root, rel);
	free(full);
	return ret;
}

static int walk(struct walk *w, const char *root, const char *rel)
{
	char *dir = *rel ? xasprintf("%s/%s", root, rel) : xstrdup(root);
	DIR *d = opendir(dir);
	struct dirent *de;
	struct strv names = { 0 };
	size_t i;
	int ret = 0;

	if (!d) {
		fprintf(stderr, "mkfs: %s: %s\n", dir, strerror(errno));
		free(dir);
		return -errno;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			strv_push(&names, de->d_name);
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof(*names.v), name_cmp);
	for (i = 0; i < names.n && !ret; i++) {
		char *sub = *rel ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);

		ret = add_one(w, root, sub);
		free(sub);
	}
	strv_release(&names);
	free(dir);
	return ret;
}

static int scan_tree(struct manifest *m, const char *root)
{
	struct walk w = { .m = m };
	struct manifest_entry *e;
	struct stat st;
	size_t i;
	int ret;

	if (lstat(root, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "mkfs: %s is not a directory\n", root);
		return -ENOTDIR;
	}
	e = manifest_add(m, "");
	e->type = MF_DIR;
	e->mode = st.st_mode & 07777;
	e->uid = st.st_uid;
	e->gid = st.st_gid;
	e->mtime = st.st_mtime;
	ret = walk(&w, root, "");
	for (i = 0; i < w.n_seen; i++)
		free(w.seen[i].path);
	free(w.seen);
	return ret;
}

static int parse_device(struct recipe_image *im, const char *spec)
{
	struct recipe_device *d;
	char path[4096], type[16];

	im->devices = xrealloc(im->devices, (im->n_devices + 1) * sizeof(*im->devices));
	d = &im->devices[im->n_devices];
	memset(d, 0, sizeof(*d));
	if (sscanf(spec, "%4095[^:]:%15[^:]:%u:%u:%o:%u:%u", path, type, &d->major, &d->minor,
		   &d->mode, &d->uid, &d->gid) != 7)
		return -1;
	d->path = xstrdup(path);
	d->type = !strcmp(type, "char") ? 'c' : !strcmp(type, "block") ? 'b' : 'p';
	im->n_devices++;
	return 0;
}

static void on_signal(int sig)
{
	err_set_interrupted(sig);
}

static void usage(void)
{
	fputs("usage: mkfs TREE OUTPUT [--manifest FILE] [--format ext4|tar|squashfs]\n"
	      "  [--compression zstd|xz|lz4|gzip|none] [--size N|auto]\n"
	      "  [--margin PCT] [--label L] [--reserved PCT] [--sde N] [--seed HEX] [--uuid U]\n"
	      "  [--hash-seed U] [--device PATH:TYPE:MAJ:MIN:MODE:UID:GID] [--save-manifest F]\n"
	      "  [--verity HASHFILE]\n",
	      stderr);
	exit(2);
}

/* IMAGE's hash tree into HASHFILE, as a disk's verity partition holds it; prints the root hash. */
static int write_verity(const char *image, const char *hashfile, const char *seed)
{
	struct verity_params vp = { .name = image };
	int fd = open(image, O_RDONLY | O_CLOEXEC), ret;
	char root[65];
	struct sink k;
	struct stat st;
	size_t i;

	for (i = 0; seed[i] && seed[i + 1] && i / 2 < sizeof(vp.salt); i += 2)
		sscanf(seed + i, "%2hhx", &vp.salt[i / 2]);
	memcpy(vp.uuid, vp.salt, sizeof(vp.uuid));
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "mkfs: %s: %s\n", image, strerror(errno));
		return -MKI_E_IMAGE;
	}
	sink_init_file(&k, hashfile);
	ret = sink_begin(&k, verity_hash_size((uint64_t)st.st_size));
	if (!ret)
		ret = verity_write(fd, 0, (uint64_t)st.st_size, &vp, &k, root);
	if (!ret)
		ret = sink_commit(&k);
	if (!ret)
		printf("%s\n", root);
	sink_release(&k);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "manifest", 1, 0, 'm' }, { "format", 1, 0, 'f' }, { "size", 1, 0, 's' },
		{ "margin", 1, 0, 'M' }, { "label", 1, 0, 'L' }, { "reserved", 1, 0, 'r' },
		{ "sde", 1, 0, 'S' }, { "seed", 1, 0, 'x' }, { "uuid", 1, 0, 'U' },
		{ "hash-seed", 1, 0, 'H' }, { "device", 1, 0, 'd' }, { "save-manifest", 1, 0, 'w' },
		{ "verbose", 0, 0, 'v' }, { "compression", 1, 0, 'c' }, { "verity", 1, 0, 'V' },
		{ 0, 0, 0, 0 } };
	static char ext4[] = "ext4", tar[] = "tar", squashfs[] = "squashfs";
	static const char *const comps[] = { "zstd", "xz", "lz4", "gzip", "none" };
	struct recipe_image im = { .format = ext4, .margin = 20, .reserved = 5 };
	struct image_params p = { .im = &im, .source_date_epoch = -1 };
	struct staging s = { 0 };
	const char *mfile = NULL, *save = NULL, *verity = NULL;
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	int c, ret;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mfile = optarg; break;
		case 'f':
			im.format = !strcmp(optarg, "tar") ? tar : !strcmp(optarg, "squashfs") ?
				    squashfs : ext4;
			break;
		case 'c':
			for (im.compression = 0; im.compression < 5 &&
			     strcmp(comps[im.compression], optarg); im.compression++)
				;
			if (im.compression == 5)
				usage();
			break;
		case 's':
			if (strcmp(optarg, "auto") && recipe_parse_size(optarg, &im.size))
				usage();
			break;
		case 'M': im.margin = (unsigned)atoi(optarg); break;
		case 'L': im.label = optarg; break;
		case 'r': im.reserved = (unsigned)atoi(optarg); break;
		case 'S': p.source_date_epoch = strtoll(optarg, NULL, 10); break;
		case 'x': snprintf(p.seed, sizeof(p.seed), "%s", optarg); break;
		case 'U': im.uuid = optarg; break;
		case 'H': im.hash_seed = optarg; break;
		case 'd': if (parse_device(&im, optarg)) usage(); break;
		case 'w': save = optarg; break;
		case 'V': verity = optarg; break;
		case 'v': log_set_level(LOG_DEBUG); break;
		default: usage();
		}
	}
	if (argc - optind != 2)
		usage();
	s.root = realpath(argv[optind], NULL);
	p.output = argv[optind + 1];
	if (!s.root) {
		fprintf(stderr, "mkfs: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	manifest_init(&s.manifest);
	ret = mfile ? manifest_load(&s.manifest, mfile) : scan_tree(&s.manifest, s.root);
	if (!ret)
		manifest_sort(&s.manifest);
	if (!ret && save)
		ret = manifest_save(&s.manifest, save);
	if (!ret)
		ret = image_write(&s, &p);
	if (!ret && verity)
		ret = write_verity(p.output, verity, p.seed);
	manifest_release(&s.manifest);
	free(s.root);
	for (size_t i = 0; i < im.n_devices; i++)
		free(im.devices[i].path);
	free(im.devices);
	return ret ? err_exit_code(ret) : 0;
}
