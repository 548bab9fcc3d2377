/*
 * Fuzz the host apt sources parser: the input, split at the first NUL, becomes a one-line
 * sources.list and a deb822 .sources file in a private apt root (MKIMAGE_APT_ROOT).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "recipe/recipe.h"
#include "repo/sources.h"

static char root[64];

/* The private apt root goes away with the fuzzer. */
static void remove_root(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/sources.list.d/f.sources", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sources.list.d", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/sources.list", root);
	unlink(path);
	rmdir(root);
}

static void put(const char *name, const uint8_t *data, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "w");
	if (!f)
		abort();
	fwrite(data, 1, n, f);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char sub[96];
	const uint8_t *nul = memchr(data, 0, size);
	size_t first = nul ? (size_t)(nul - data) : size;
	struct recipe_source rs = { .host = 1 };
	struct recipe r = { 0 };
	struct settings st = { .apt_root = root };
	struct sources out;
	char arch[] = "armhf", suite[] = "bookworm";
	int ret;

	if (!root[0]) {
		snprintf(root, sizeof(root), "/dev/shm/mkimage-fuzz-apt.%d", (int)getpid());
		mkdir(root, 0700);
		snprintf(sub, sizeof(sub), "%s/sources.list.d", root);
		mkdir(sub, 0700);
		atexit(remove_root);
		log_set_level(LOG_QUIET);
	}
	put("sources.list", data, first);
	put("sources.list.d/f.sources", nul ? nul + 1 : data, nul ? size - first - 1 : 0);
	r.arch = arch;
	r.suite = suite;
	rs.suite = suite;
	r.sources = &rs;
	r.n_sources = 1;
	ret = sources_load(&out, &r, &st);
	if (ret == 0)
		sources_release(&out);
	else if (ret != -MKI_E_SOURCE)
		abort();
	return 0;
}
