/*
 * Drive the flashable outputs alone (out/bmap.c, out/compress.c):
 *   bmap-tool map IMAGE BMAP
 *   bmap-tool compress IMAGE OUTPUT none|zstd|xz [THREADS]
 * Exit status: mkimage's for the error (8 for an image error, 130 when interrupted), 2 for usage.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "emit/bmap.h"
#include "emit/compress.h"
#include "emit/compress_internal.h"

static void on_signal(int sig)
{
	err_set_interrupted(sig);
}

static int usage(void)
{
	fprintf(stderr, "usage: bmap-tool map IMAGE BMAP\n"
			"       bmap-tool compress IMAGE OUTPUT none|zstd|xz [THREADS]\n");
	return MKI_EXIT_USAGE;
}

static int compress(int argc, char **argv)
{
	enum compress_kind k;

	if ((argc != 5 && argc != 6) || compress_parse(argv[4], &k)) {
		if (argc >= 5)
			fprintf(stderr, "bmap-tool: unknown compression '%s'\n", argv[4]);
		return -MKI_E_USAGE;
	}
	if (argc == 6)
		return compress_file_threads(argv[2], argv[3], k, (unsigned)atoi(argv[5]));
	return compress_file(argv[2], argv[3], k);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: ends the wait */
	int ret;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (argc == 4 && !strcmp(argv[1], "map"))
		ret = bmap_write(argv[2], argv[3], NULL);
	else if (argc >= 2 && !strcmp(argv[1], "compress"))
		ret = compress(argc, argv);
	else
		return usage();
	if (ret == -MKI_E_USAGE)
		return usage();
	return ret ? err_exit_code(ret) : 0;
}
