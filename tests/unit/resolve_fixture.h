/*
 * A resolver context on tiny Packages files written at test time, for the suites of the
 * resolve_* modules: the pool is filled as resolve_plan() fills it (resolve_encode.c), then each
 * suite calls its module's step. stderr goes to a file the test can read (rfix_log).
 */
#ifndef MKI_TEST_RESOLVE_FIXTURE_H
#define MKI_TEST_RESOLVE_FIXTURE_H

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/readfile.h"
#include "recipe/recipe_internal.h"
#include "resolve/resolve.h"
#include "resolve/resolve_ctx.h"

#define RFIX_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* One stanza; `extra` holds whole lines such as "Depends: x\n". */
#define PKG(name, ver, arch, extra) \
	"Package: " name "\nVersion: " ver "\nArchitecture: " arch "\n" extra \
	"Filename: pool/" name "_" ver "_" arch ".deb\nSize: 1\nSHA256: " RFIX_SHA "\n\n"

struct rfix {
	char dir[64];
	char uri[32], suite[16], main_comp[8];
	struct source src;
	struct index_release rel;
	struct index_file files[2];
	struct indexes ix;
	struct recipe r;
	struct resolve_ctx c;
	struct plan plan;
};

static inline void rfix_add_index(struct rfix *f, const char *arch, const char *text)
{
	struct index_file *x = &f->files[f->ix.n_files++];
	FILE *out;

	x->component = f->main_comp;
	x->arch = xstrdup(arch);
	x->path = xasprintf("%s/Packages_%s", f->dir, arch);
	out = fopen(x->path, "w");
	ck_assert_ptr_nonnull(out);
	fputs(text, out);
	fclose(out);
}

/* Primary armhf with the index `armhf`, auxiliary armel with `armel` (may be NULL). */
static inline void rfix_setup(struct rfix *f, const char *armhf, const char *armel)
{
	char *log;
	int fd;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-resolve.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	log = xasprintf("%s/stderr", f->dir);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	close(fd);
	free(log);
	snprintf(f->uri, sizeof(f->uri), "http://127.0.0.1/debian");
	snprintf(f->suite, sizeof(f->suite), "bookworm");
	snprintf(f->main_comp, sizeof(f->main_comp), "main");
	f->src.uri = f->uri;
	f->src.suite = f->suite;
	f->rel.src = &f->src;
	f->ix.releases = &f->rel;
	f->ix.n_releases = 1;
	f->ix.files = f->files;
	rfix_add_index(f, "armhf", armhf);
	if (armel)
		rfix_add_index(f, "armel", armel);
	f->r.arch = xstrdup("armhf");
	strv_push(&f->r.aux_archs, "armel");
	queue_init(&f->c.jobs);
}

/* Ask for "name[:arch][=version]" as recipe line n_packages + 1. */
static inline void rfix_request(struct rfix *f, const char *spec)
{
	struct recipe_package p = { 0 };
	const char *why = NULL;

	ck_assert_int_eq(recipe_parse_package(spec, &p, &why), 0);
	p.line = (int)f->r.n_packages + 1;
	f->r.packages = xrealloc(f->r.packages, (f->r.n_packages + 1) * sizeof(p));
	f->r.packages[f->r.n_packages++] = p;
}

/* The pool as resolve_plan() builds it before choosing candidates. */
static inline void rfix_load(struct rfix *f)
{
	f->c.r = &f->r;
	f->c.ix = &f->ix;
	recipe_all_archs(&f->r, &f->c.archs);
	f->c.pool = resolve_pool_new(&f->c);
	ck_assert_int_eq(resolve_load_all(&f->c), 0);
}

/* The solvable name:arch=version from the indexes, or 0. */
static inline Id rfix_find(const struct rfix *f, const char *name, const char *arch,
			   const char *version)
{
	Pool *pool = f->c.pool;
	Id p;

	FOR_POOL_SOLVABLES(p) {
		Solvable *s = pool_id2solvable(pool, p);

		if (!strcmp(pool_id2str(pool, s->name), name) &&
		    !strcmp(pool_id2str(pool, s->arch), arch) &&
		    !strcmp(pool_id2str(pool, s->evr), version))
			return p;
	}
	return 0;
}

static inline int rfix_considered(const struct rfix *f, const char *name, const char *arch,
				  const char *version)
{
	Id p = rfix_find(f, name, arch, version);

	ck_assert_msg(p, "'%s:%s=%s' is not in the pool", name, arch, version);
	return MAPTST(&f->c.considered, p) != 0;
}

/* What was logged so far (new string). */
static inline char *rfix_log(const struct rfix *f)
{
	char *path = xasprintf("%s/stderr", f->dir);
	struct buf b = { 0 };

	ck_assert_int_eq(readfile_read(path, 1 << 20, &b, NULL), 0);
	free(path);
	return buf_detach(&b);
}

/* Frees what resolve_plan()'s own cleanup frees, then the files and the recipe. */
static inline void rfix_teardown(struct rfix *f)
{
	char *cmd = xasprintf("rm -rf %s", f->dir);
	struct resolve_ctx *c = &f->c;
	size_t i;

	if (c->pool) {
		c->pool->considered = NULL;
		pool_free(c->pool);
	}
	map_free(&c->considered);
	queue_free(&c->jobs);
	strv_release(&c->job_what);
	strv_release(&c->archs);
	for (i = 0; i < c->n_files; i++) {
		free(c->files[i].path);
		free(c->files[i].text);
	}
	free(c->files);
	free(c->refs);
	free(c->best);
	lockfile_release(&c->lock);
	for (i = 0; i < f->ix.n_files; i++) {
		free(f->files[i].path);
		free(f->files[i].arch);
	}
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	plan_release(&f->plan);
	recipe_release(&f->r);
}

#endif
