/*
 * Drive the FAT writer alone:
 *   fat-write TREE OUTPUT --manifest FILE [--subtree DIR] [--label L] [--volume-id HEX]
 *             [--size N] [--sde N] [--region OFFSET:LENGTH] [--estimate]
 * OUTPUT is a whole file, or with --region a part of an existing file (a disk's partition)
 * that nothing outside it is written. --estimate prints fat_estimate's bytes and writes nothing.
 * A manifest can be made from a directory with `mkfs TREE X.tar --format tar --save-manifest F`.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/fat.h"
#include "image/imgtree.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/manifest.h"
#include "lib/manifest_internal.h"
#include "lib/str.h"

static void on_signal(int sig)
{
	err_set_interrupted(sig);
}

static void usage(void)
{
	fputs("usage: fat-write TREE OUTPUT --manifest FILE [--subtree DIR] [--label L]\n"
	      "  [--volume-id HEX] [--size N] [--sde N] [--region OFFSET:LENGTH] [--estimate]\n",
	      stderr);
	exit(2);
}

static int write_out(const struct imgtree *t, const struct fat_params *fp, const char *out,
		     const char *region)
{
	uint64_t off = 0, len = 0;
	struct sink k;
	int fd = -1, ret;

	if (region) {
		if (sscanf(region, "%" SCNu64 ":%" SCNu64, &off, &len) != 2)
			usage();
		fd = open(out, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return log_errno(-errno, "cannot open '%s': %m", out);
		sink_init_region(&k, fd, off, len, out);
	} else {
		sink_init_file(&k, out);
	}
	ret = fat_write(t, fp, &k);
	if (!ret)
		ret = sink_commit(&k);
	sink_release(&k);
	if (fd >= 0)
		close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "manifest", 1, 0, 'm' }, { "subtree", 1, 0, 't' }, { "label", 1, 0, 'L' },
		{ "volume-id", 1, 0, 'i' }, { "size", 1, 0, 's' }, { "sde", 1, 0, 'S' },
		{ "region", 1, 0, 'r' }, { "estimate", 0, 0, 'e' }, { "verbose", 0, 0, 'v' },
		{ 0, 0, 0, 0 } };
	struct recipe_image im = { 0 };
	struct image_params p = { .im = &im, .source_date_epoch = -1 };
	struct fat_params fp = { .subtree = "" };
	struct sigaction sa = { .sa_handler = on_signal };
	const char *mfile = NULL, *region = NULL;
	struct staging s = { 0 };
	struct imgtree t;
	uint64_t bytes = 0;
	int c, ret, estimate = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mfile = optarg; break;
		case 't': fp.subtree = optarg; break;
		case 'L': fp.label = optarg; break;
		case 'i': fp.volume_id = (uint32_t)strtoul(optarg, NULL, 16); break;
		case 's': fp.size = strtoull(optarg, NULL, 10); break;
		case 'S': p.source_date_epoch = strtoll(optarg, NULL, 10); break;
		case 'r': region = optarg; break;
		case 'e': estimate = 1; break;
		case 'v': log_set_level(LOG_DEBUG); break;
		default: usage();
		}
	}
	if (argc - optind != 2 || !mfile)
		usage();
	s.root = realpath(argv[optind], NULL);
	if (!s.root) {
		fprintf(stderr, "fat-write: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	manifest_init(&s.manifest);
	ret = manifest_load(&s.manifest, mfile);
	if (!ret) {
		manifest_sort(&s.manifest);
		ret = imgtree_build(&t, &s, &p);
	}
	if (!ret && estimate && !(ret = fat_estimate(&t, &fp, &bytes)))
		printf("%" PRIu64 "\n", bytes);
	else if (!ret)
		ret = write_out(&t, &fp, argv[optind + 1], region);
	if (t.v)
		imgtree_release(&t);
	manifest_release(&s.manifest);
	free(s.root);
	return ret ? err_exit_code(ret) : 0;
}
