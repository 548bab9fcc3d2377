/*
 * Fuzz the .deb reader and the unpacker: the input is written as a .deb and unpacked into a
 * throwaway tree with one worker. Whatever the package says, the run ends in success or a
 * specific error, and nothing may appear outside the work directory: the harness directory
 * holds exactly "pkg.deb" and "work" afterwards, and a canary directory beside them stays empty.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debian/plan.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/settings.h"
#include "lib/str.h"
#include "recipe/recipe.h"
#include "unpack/unpack.h"

static char base[64];

static void cleanup(void)
{
	fsutil_remove_tree(base);
}

static void setup(void)
{
	char path[128];

	/* tmpfs when there is one: the unpacker syncs what it writes */
	snprintf(base, sizeof(base), "%s/mkimage-fuzz-deb.XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	if (!mkdtemp(base))
		abort();
	snprintf(path, sizeof(path), "%s/canary", base);
	if (mkdir(path, 0755))
		abort();
	atexit(cleanup);
}

/* Everything in `dir` must be one of the allowed names; `canary` must be empty. */
static void check_outside(void)
{
	char path[128];
	struct dirent *de;
	DIR *d = opendir(base);

	if (!d)
		abort();
	while ((de = readdir(d))) {
		const char *n = de->d_name;

		if (strcmp(n, ".") && strcmp(n, "..") && strcmp(n, "pkg.deb") && strcmp(n, "work") &&
		    strcmp(n, "canary")) {
			fprintf(stderr, "fuzz_deb: '%s' written outside the tree\n", n);
			abort();
		}
	}
	closedir(d);
	snprintf(path, sizeof(path), "%s/canary", base);
	if (rmdir(path)) { /* not empty (or gone): something escaped through it */
		fprintf(stderr, "fuzz_deb: the canary directory was touched\n");
		abort();
	}
	if (mkdir(path, 0755))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plan_entry e = { 0 };
	struct plan p = { 0 };
	struct recipe r = { .merged_usr = 1 };
	struct settings st = { .jobs = 1, .source_date_epoch = 0, .stream_over = 32ull << 20 };
	struct staging s = { 0 };
	char deb[128], work[128];
	int ret;

	log_set_level(LOG_QUIET);
	if (!base[0])
		setup();
	snprintf(deb, sizeof(deb), "%s/pkg.deb", base);
	snprintf(work, sizeof(work), "%s/work", base);
	if (fsutil_write_atomic(deb, data, size))
		abort();
	if (mkdir(work, 0755))
		abort();
	static char name[] = "fuzz", arch[] = "amd64", version[] = "1", ma[] = "no";

	e.name = name;
	e.arch = arch;
	e.version = version;
	e.multi_arch = ma;
	e.path = deb;
	p.v = &e;
	p.n = 1;
	p.primary = arch;
	r.arch = p.primary;
	st.work_dir = work;
	ret = unpack_plan(&s, &p, &r, &st);
	if (ret != 0 && ret != -MKI_E_PACKAGE && ret != -MKI_E_LIMIT_PKG && ret != -MKI_E_CONFLICT &&
	    ret != -ENAMETOOLONG && ret != -ELOOP) {
		fprintf(stderr, "fuzz_deb: unexpected result %d\n", ret);
		abort();
	}
	staging_release(&s);
	check_outside();
	if (fsutil_remove_tree(work))
		abort();
	return 0;
}
