/*
 * Test driver for the unpack stage before the resolver and fetcher exist: builds a plan from
 * .deb files (plan order = argument order; name, version, arch and Multi-Arch from each control
 * file) and unpacks it into WORKDIR/root, with the manifest in WORKDIR/manifest.
 *
 *   unpack [-j N] [-a ARCH]... [--no-merged-usr] [--path-exclude GLOB]...
 *          [--path-include GLOB]... [--minimize] [--locale NAME]... [-v|-q] WORKDIR DEB...
 *
 * -a gives the architectures (primary first); without it, the first package's architecture
 * that is not "all". The path filter options are the recipe's packages.path_exclude,
 * path_include, minimize and locales. Exit status as mkimage's (6 for a bad package or a file conflict).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debian/deb.h"
#include "debian/plan.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/settings.h"
#include "recipe/recipe.h"
#include "unpack/unpack.h"

static int entry_from_deb(struct plan_entry *e, const char *file)
{
	struct deb *d = NULL;
	struct deb_control c = { 0 };
	const char *why = NULL, *ma;
	int r = deb_open(&d, file, NULL);

	if (r) {
		log_error("'%s': %s", file, deb_error(d));
		goto out;
	}
	r = deb_control_parse(&c, deb_member(d, "control")->data, NULL, &why);
	if (r || !deb_control_get(&c, "Package") || !deb_control_get(&c, "Version") ||
	    !deb_control_get(&c, "Architecture")) {
		log_error("'%s': bad control file: %s", file, why ? why : "missing fields");
		r = -MKI_E_PACKAGE;
		goto out;
	}
	ma = deb_control_get(&c, "Multi-Arch");
	e->name = xstrdup(deb_control_get(&c, "Package"));
	e->version = xstrdup(deb_control_get(&c, "Version"));
	e->arch = xstrdup(deb_control_get(&c, "Architecture"));
	e->multi_arch = xstrdup(ma ? ma : "no");
	e->path = xstrdup(file);
out:
	deb_control_release(&c);
	deb_free(d);
	return r;
}

static int build_plan(struct plan *p, char **files, int n)
{
	int i, r = 0;

	p->v = xcalloc((size_t)n, sizeof(*p->v));
	for (i = 0; i < n && !r; i++) {
		r = entry_from_deb(&p->v[i], files[i]);
		p->n = (size_t)i + 1;
		if (!r && !p->archs.n && strcmp(p->v[i].arch, "all"))
			strv_push(&p->archs, p->v[i].arch);
	}
	if (!p->archs.n)
		strv_push(&p->archs, "amd64");
	p->primary = xstrdup(p->archs.v[0]);
	return r;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "arch", required_argument, NULL, 'a' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "no-merged-usr", no_argument, NULL, 'U' },
		{ "path-exclude", required_argument, NULL, 'X' },
		{ "path-include", required_argument, NULL, 'I' },
		{ "minimize", no_argument, NULL, 'M' },
		{ "locale", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	struct settings st = { .jobs = 2, .source_date_epoch = -1 };
	struct recipe r = { .merged_usr = 1 };
	struct plan p = { 0 };
	struct staging s = { 0 };
	struct strv archs = { 0 };
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	int c, ret;

	settings_read_env(&st);
	while ((c = getopt_long(argc, argv, "a:j:vq", opts, NULL)) != -1) {
		switch (c) {
		case 'a': strv_push(&archs, optarg); break;
		case 'j': st.jobs = (unsigned)atoi(optarg); break;
		case 'U': r.merged_usr = 0; break;
		case 'X': strv_push(&r.path_exclude, optarg); break;
		case 'I': strv_push(&r.path_include, optarg); break;
		case 'M': r.minimize = 1; break;
		case 'L': strv_push(&r.locales, optarg); break;
		case 'v': log_set_level(LOG_DEBUG); break;
		case 'q': log_set_level(LOG_ERROR); break;
		default: return 2;
		}
	}
	if (argc - optind < 1) {
		fprintf(stderr,
			"usage: unpack [-j N] [-a ARCH]... [--no-merged-usr] [--path-exclude GLOB]...\n"
			"              [--path-include GLOB]... [--minimize] [--locale NAME]...\n"
			"              WORKDIR DEB...\n");
		return 2;
	}
	if (sde && *sde)
		st.source_date_epoch = strtoll(sde, NULL, 10);
	st.work_dir = argv[optind];
	ret = build_plan(&p, argv + optind + 1, argc - optind - 1);
	if (!ret && archs.n) {
		strv_release(&p.archs);
		p.archs = archs;
		archs = (struct strv){ 0 };
		free(p.primary);
		p.primary = xstrdup(p.archs.v[0]);
	}
	r.arch = p.primary;
	if (!ret)
		ret = unpack_plan(&s, &p, &r, &st);
	if (!ret)
		printf("%s\n", s.root);
	staging_release(&s);
	plan_release(&p);
	strv_release(&archs);
	strv_release(&r.path_exclude);
	strv_release(&r.path_include);
	strv_release(&r.locales);
	return err_exit_code(ret);
}
