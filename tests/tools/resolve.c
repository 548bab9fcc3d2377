/*
 * Test driver for the resolver: builds `struct indexes` from Packages files named on the command
 * line and prints the plan, one "name:arch=version" per line in install order.
 *
 *   resolve --primary armhf [--arch armel]... --packages ARCH=FILE... [--uri URI]
 *           [--base none|essential|required|important] [--install SPEC]... [--exclude NAME]...
 *           [--recommends] [--allow-older] [--local DEB]... [--long] [-v]
 *           [--lock FILE | --locked FILE] [--inrelease FILE] [--recipe-digest HEX]
 *
 * --release SUITE starts another release (repository): the --packages files after it belong to
 * it (Architecture: all is read once per release, as from one Release file).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "recipe/recipe_internal.h"
#include "resolve/resolve.h"

#define MAX_RELEASES 16

struct opts {
	struct recipe r;
	struct source src[MAX_RELEASES];
	struct index_release rel[MAX_RELEASES];
	struct indexes ix;
	struct settings st;
	const char *lock, *inrelease, *digest;
	int longfmt;
};

static int add_packages(struct opts *o, const char *spec)
{
	const char *eq = strchr(spec, '=');
	struct index_file *f;

	if (!eq || eq == spec || !eq[1]) {
		fprintf(stderr, "--packages takes ARCH=FILE, not '%s'\n", spec);
		return -MKI_E_USAGE;
	}
	o->ix.files = xrealloc(o->ix.files, (o->ix.n_files + 1) * sizeof(*o->ix.files));
	f = &o->ix.files[o->ix.n_files++];
	f->release = o->ix.n_releases ? o->ix.n_releases - 1 : 0;
	f->component = xstrdup("main");
	f->arch = xstrndup(spec, (size_t)(eq - spec));
	f->path = xstrdup(eq + 1);
	return 0;
}

static int add_release(struct opts *o, const char *suite)
{
	size_t n = o->ix.n_releases;

	if (n >= MAX_RELEASES)
		return -MKI_E_USAGE;
	if (n) {
		o->src[n].uri = xasprintf("file:///release%zu", n);
		o->src[n].suite = xstrdup(suite);
	} else {
		free(o->src[0].suite);
		o->src[0].suite = xstrdup(suite);
	}
	o->ix.n_releases = n + 1;
	return 0;
}

static int add_install(struct opts *o, const char *spec)
{
	const char *why = NULL;
	struct recipe_package p = { 0 };

	if (recipe_parse_package(spec, &p, &why)) {
		fprintf(stderr, "bad package '%s': %s\n", spec, why);
		return -MKI_E_USAGE;
	}
	p.line = (int)o->r.n_packages + 1;
	o->r.packages = xrealloc(o->r.packages, (o->r.n_packages + 1) * sizeof(p));
	o->r.packages[o->r.n_packages++] = p;
	return 0;
}

static int parse_base(const char *s, enum base_set *b)
{
	static const char *const names[] = { "none", "essential", "required", "important" };
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*b = (enum base_set)i;
			return 0;
		}
	fprintf(stderr, "--base takes none, essential, required or important\n");
	return -MKI_E_USAGE;
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "primary", 1, NULL, 'p' }, { "arch", 1, NULL, 'a' }, { "packages", 1, NULL, 'P' },
		{ "uri", 1, NULL, 'u' }, { "base", 1, NULL, 'b' }, { "install", 1, NULL, 'i' },
		{ "exclude", 1, NULL, 'x' }, { "recommends", 0, NULL, 'R' },
		{ "allow-older", 0, NULL, 'O' }, { "local", 1, NULL, 'L' }, { "long", 0, NULL, 'l' },
		{ "lock", 1, NULL, 'k' }, { "locked", 1, NULL, 'K' }, { "inrelease", 1, NULL, 'I' },
		{ "recipe-digest", 1, NULL, 'D' }, { "release", 1, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	while (!ret && (c = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (c) {
		case 'p': o->r.arch = xstrdup(optarg); break;
		case 'a': strv_push(&o->r.aux_archs, optarg); break;
		case 'P': ret = add_packages(o, optarg); break;
		case 'u': free(o->src[0].uri); o->src[0].uri = xstrdup(optarg); break;
		case 'S': ret = add_release(o, optarg); break;
		case 'b': ret = parse_base(optarg, &o->r.base); break;
		case 'i': ret = add_install(o, optarg); break;
		case 'x': strv_push(&o->r.excludes, optarg); break;
		case 'R': o->r.recommends = 1; break;
		case 'O': o->r.allow_older = 1; break;
		case 'L': strv_push(&o->r.local_debs, optarg); break;
		case 'l': o->longfmt = 1; break;
		case 'k': o->lock = optarg; break;
		case 'K': o->st.locked = 1; o->st.lock_file = xstrdup(optarg); break;
		case 'I': o->inrelease = optarg; break;
		case 'D': o->digest = optarg; break;
		case 'v': log_set_level(LOG_DEBUG); break;
		default: return -MKI_E_USAGE;
		}
	}
	if (!ret && (!o->r.arch || !o->ix.n_files)) {
		fprintf(stderr, "usage: resolve --primary ARCH --packages ARCH=FILE... [options]\n");
		ret = -MKI_E_USAGE;
	}
	return ret;
}

/* The release's identity for the lock: the InRelease file's digest and Date. */
static int fill_release(struct opts *o)
{
	char line[512];
	FILE *f;

	size_t i;

	if (!o->ix.n_releases)
		o->ix.n_releases = 1;
	for (i = 0; i < o->ix.n_releases; i++)
		o->rel[i].src = &o->src[i];
	o->ix.releases = o->rel;
	if (!o->inrelease)
		return 0;
	if (hash_file_hex(o->inrelease, HASH_SHA256, o->rel[0].inrelease_sha256) ||
	    !(f = fopen(o->inrelease, "re"))) {
		fprintf(stderr, "cannot read '%s'\n", o->inrelease);
		return -MKI_E_USAGE;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Date: ", 6)) {
			line[strcspn(line, "\n")] = 0;
			o->rel[0].date = xstrdup(line + 6);
			break;
		}
	fclose(f);
	return 0;
}

static void print_plan(const struct opts *o, const struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->v[i];

		if (o->longfmt)
			printf("%s:%s=%s %s %llu %s %s\n", e->name, e->arch, e->version,
			       e->multi_arch, (unsigned long long)e->size, e->sha256,
			       e->url ? e->url : e->path);
		else
			printf("%s:%s=%s\n", e->name, e->arch, e->version);
	}
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct plan plan = { 0 };
	size_t i;
	int ret;

	o.src[0].uri = xstrdup("file:///nonexistent");
	o.src[0].suite = xstrdup("test");
	ret = parse_args(&o, argc, argv);
	if (!ret)
		ret = fill_release(&o);
	if (!ret) {
		if (o.digest)
			snprintf(o.r.digest, sizeof(o.r.digest), "%s", o.digest);
		else
			hash_sha256_hex("test-recipe", 11, o.r.digest);
		ret = resolve_plan(&plan, &o.r, &o.ix, &o.st);
	}
	if (!ret && o.lock)
		ret = resolve_write_lock(&plan, &o.r, &o.ix, NULL, NULL, o.lock);
	if (!ret)
		print_plan(&o, &plan);
	plan_release(&plan);
	for (i = 0; i < o.ix.n_files; i++) {
		free(o.ix.files[i].component);
		free(o.ix.files[i].arch);
		free(o.ix.files[i].path);
	}
	free(o.ix.files);
	for (i = 0; i < MAX_RELEASES; i++) {
		free(o.src[i].uri);
		free(o.src[i].suite);
		free(o.rel[i].date);
	}
	free(o.st.lock_file);
	recipe_release(&o.r);
	return err_exit_code(ret);
}
