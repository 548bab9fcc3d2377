/*
 * Test driver for fetch_plan(): reads lines "URL SIZE SHA256" on stdin (with --base BASE:
 * "FILENAME SIZE SHA256", FILENAME as in a Packages file, joined with url_join), builds a
 * plan, fetches it into the cache and prints one cache path per entry, in order. Exits like
 * mkimage (err_exit_code).
 * usage: fetchdebs --cache-dir DIR [--base URL] [-j N] [--offline] [-v|-q] < list
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debian/plan.h"
#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/settings.h"
#include "lib/url.h"
#include "store/fetch.h"

static int read_plan(struct plan *p, const char *base)
{
	char line[4096], url[3000], sha[100];
	uint64_t size;
	int lineno = 0;

	while (fgets(line, sizeof(line), stdin)) {
		struct plan_entry *e;

		lineno++;
		if (line[0] == '\n' || line[0] == '#')
			continue;
		if (sscanf(line, "%2999s %" SCNu64 " %99s", url, &size, sha) != 3 ||
		    !hash_sha256_hex_valid(sha)) {
			log_error("stdin:%d: expected 'URL SIZE SHA256'", lineno);
			return -MKI_E_USAGE;
		}
		ALLOC_GROW(p->v, p->n + 1, p->alloc);
		e = &p->v[p->n++];
		memset(e, 0, sizeof(*e));
		e->url = base ? url_join(base, url) : xstrdup(url);
		e->size = size;
		memcpy(e->sha256, sha, 65);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "cache-dir", required_argument, NULL, 'c' },
					      { "offline", no_argument, NULL, 'o' },
					      { "base", required_argument, NULL, 'b' },
					      { NULL, 0, NULL, 0 } };
	struct settings st = { .jobs = 8 };
	struct fetch_stats stats = { 0 };
	struct plan p = { 0 };
	const char *base = NULL;
	size_t i;
	int c, ret;

	settings_read_env(&st);
	while ((c = getopt_long(argc, argv, "j:vq", opts, NULL)) != -1) {
		switch (c) {
		case 'c': st.cache_dir = optarg; break;
		case 'o': st.offline = 1; break;
		case 'b': base = optarg; break;
		case 'j': st.jobs = (unsigned)atoi(optarg); break;
		case 'v': log_set_level(LOG_DEBUG); break;
		case 'q': log_set_level(LOG_ERROR); break;
		default: return 2;
		}
	}
	if (!st.cache_dir || !st.jobs) {
		fputs("usage: fetchdebs --cache-dir DIR [--base URL] [-j N] [--offline] [-v|-q] < list\n",
		      stderr);
		return 2;
	}
	ret = read_plan(&p, base);
	if (!ret)
		ret = fetch_plan(&p, &st, &stats);
	for (i = 0; !ret && i < p.n; i++)
		printf("%s\n", p.v[i].path);
	plan_release(&p);
	return err_exit_code(ret);
}
