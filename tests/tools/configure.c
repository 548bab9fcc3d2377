/*
 * Test driver for the configure stage: configure an unpacked tree (dpkg status "install ok unpacked")
 * in the sandbox, run a recipe's hooks, and write the reconciled manifest.
 *
 *   configure [-v] [--recipe FILE] [--limit NAME=VALUE]... [--single-id] [--manifest FILE] [--exec 'CMD ARG...']...
 *             [--exec-only] TREE
 *
 * The plan is read from TREE/var/lib/dpkg/status (in its order) and the architectures from
 * TREE/var/lib/dpkg/arch (primary first). The manifest before configuration is the tree as seen
 * inside the sandbox. Each --exec runs after everything else, chrooted into the tree; its output
 * goes to stdout and a failure is exit status 1. --exec-only skips configuration and hooks (the
 * execs run in the sandbox with the archs registered). Exit status otherwise as mkimage's.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configure/configure.h"
#include "configure/overlay.h"
#include "configure/reconcile.h"
#include "image/format.h"
#include "lib/err.h"
#include "lib/log.h"
#include "sandbox/sandbox.h"

static const struct recipe_checks recipe_checks = { overlay_check, format_recipe_check };

static void field(char **dst, const char *line, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(line, name, n) && line[n] == ':' && line[n + 1] == ' ') {
		free(*dst);
		*dst = xstrndup(line + n + 2, strcspn(line + n + 2, "\n"));
	}
}

static int load_plan(struct plan *p, const char *root)
{
	char *path = xasprintf("%s/var/lib/dpkg/status", root), line[8192];
	FILE *f = fopen(path, "re");
	struct plan_entry *e = NULL;

	free(path);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Package: ", 9)) {
			ALLOC_GROW(p->v, p->n + 1, p->alloc);
			e = &p->v[p->n++];
			memset(e, 0, sizeof(*e));
		}
		if (!e)
			continue;
		field(&e->name, line, "Package");
		field(&e->arch, line, "Architecture");
		field(&e->version, line, "Version");
		field(&e->multi_arch, line, "Multi-Arch");
	}
	fclose(f);
	for (size_t i = 0; i < p->n; i++)
		if (!p->v[i].multi_arch)
			p->v[i].multi_arch = xstrdup("no");
	path = xasprintf("%s/var/lib/dpkg/arch", root);
	f = fopen(path, "re");
	free(path);
	while (f && fgets(line, sizeof(line), f))
		if (line[0] != '\n')
			strv_push_take(&p->archs, xstrndup(line, strcspn(line, "\n")));
	if (f)
		fclose(f);
	if (!p->archs.n)
		return -1;
	p->primary = xstrdup(p->archs.v[0]);
	return 0;
}

static int exec_in(const char *root, const char *cmdline)
{
	static const char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C.UTF-8",
		"HOME=/root", NULL };
	char *copy = xstrdup(cmdline), *save = NULL, *w;
	const char *argv[32];
	struct buf out = { 0 };
	struct sandbox_cmd c = { .root = root, .argv = argv, .env = env, .timeout = 120, .out = &out };
	int n = 0, status = 0, ret;

	for (w = strtok_r(copy, " ", &save); w && n < 31; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	ret = sandbox_run(&c, &status);
	fputs(out.p ? out.p : "", stdout);
	if (!ret && status)
		fprintf(stderr, "configure: '%s' exited %d\n", cmdline, status);
	buf_release(&out);
	free(copy);
	return ret || status ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "recipe", required_argument, NULL, 'r' }, { "manifest", required_argument, NULL, 'm' },
		{ "exec", required_argument, NULL, 'e' }, { "single-id", no_argument, NULL, 's' },
		{ "exec-only", no_argument, NULL, 'x' }, { "verbose", no_argument, NULL, 'v' },
		{ "limit", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct recipe r = { 0 };
	struct plan p = { 0 };
	struct settings st = { .source_date_epoch = -1 };
	struct staging s = { 0 };
	struct overlay_report *overlays = NULL;
	struct sandbox_opts so = { 0 };
	struct strv execs = { 0 };
	const char *recipe = NULL, *manifest = NULL, *sde = getenv("SOURCE_DATE_EPOCH");
	int c, ret = 0, have_recipe = 0, exec_failed = 0, exec_only = 0;
	size_t i;

	settings_read_env(&st);
	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': recipe = optarg; break;
		case 'm': manifest = optarg; break;
		case 'e': strv_push(&execs, optarg); break;
		case 's': st.single_id = so.allow_single_id = 1; break;
		case 'x': exec_only = 1; break;
		case 'v': log_set_level(LOG_DEBUG); break;
		case 'l': if (runlimits_set(&st.limits, optarg)) return 2; break;
		default: return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: configure [--recipe FILE] [--manifest FILE] [--exec CMD]... TREE\n");
		return 2;
	}
	if (sde && *sde)
		st.source_date_epoch = strtoll(sde, NULL, 10);
	s.root = realpath(argv[optind], NULL);
	manifest_init(&s.manifest);
	if (!s.root || load_plan(&p, s.root)) {
		fprintf(stderr, "configure: '%s' has no dpkg database\n", argv[optind]);
		return 2;
	}
	if (recipe) {
		ret = recipe_load(&r, recipe, &recipe_checks);
		have_recipe = !ret;
	} else {
		r.hook_timeout = 600;
		r.script_timeout = RECIPE_SCRIPT_TIMEOUT;
		static char none[] = "(none)";

		r.file = none;
		r.arch = p.primary;
	}
	if (!ret)
		ret = sandbox_enter(&so);
	for (i = 0; !ret && exec_only && i < p.archs.n; i++)
		ret = sandbox_add_arch(p.archs.v[i]);
	if (!ret && !exec_only)
		ret = reconcile_manifest(&s, st.source_date_epoch, &st.limits, NULL);
	if (!ret && !exec_only) {
		struct configure cf;

		ret = configure_init(&cf, &s, &p, &r, &st);
		if (!ret)
			ret = configure_tree(&cf, NULL, NULL);
		if (!ret)
			ret = configure_finish(&cf, &overlays);
		configure_release(&cf);
	}
	if (!ret && manifest && (ret = manifest_save(&s.manifest, manifest)))
		fprintf(stderr, "configure: cannot write '%s': %s\n", manifest, err_text(ret));
	for (i = 0; !ret && !exec_failed && i < execs.n; i++)
		exec_failed = exec_in(s.root, execs.v[i]);
	overlay_report_free(overlays);
	if (have_recipe)
		recipe_release(&r);
	strv_release(&execs);
	plan_release(&p);
	manifest_release(&s.manifest);
	free(s.root);
	return exec_failed ? 1 : err_exit_code(ret);
}
