/*
 * Real .debs built with dpkg-deb in a temporary directory (the hostile ones, which dpkg-deb
 * refuses to build, with tests/integration/unpack_mkdeb.py), unpacked by unpack_plan: for the
 * suites of the unpack_* modules.
 */
#ifndef MKI_TEST_UNPACK_FIXTURE_H
#define MKI_TEST_UNPACK_FIXTURE_H

#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
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

struct fx {
	char dir[64];
	struct plan plan;
	struct staging stage;
	int ret;
};

static inline void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;

	va_start(ap, fmt);
	cmd = xvasprintf(fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	free(cmd);
}

static inline void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-unpack.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	strv_push(&f->plan.archs, "armhf");
	strv_push(&f->plan.archs, "armel");
	f->plan.primary = xstrdup("armhf");
	log_set_level(LOG_QUIET);
}

static inline void fx_release(struct fx *f)
{
	staging_release(&f->stage);
	plan_release(&f->plan);
	sh("chmod -R u+rwX '%s' && rm -rf '%s'", f->dir, f->dir);
}

/*
 * A .deb of `name` (arch, version, extra control lines) with `files`: "path=contents" items
 * separated by ';' ("path/" a directory, "path->target" a symlink). Appended to the plan.
 */
static inline void deb(struct fx *f, const char *name, const char *arch, const char *ver,
		const char *extra, const char *files)
{
	char *src = xasprintf("%s/src-%s-%s", f->dir, name, arch), *out, *list = xstrdup(files);
	char *item, *save = NULL, *eq;
	struct plan_entry *e;

	sh("mkdir -p '%s/DEBIAN'", src);
	sh("printf 'Package: %s\\nVersion: %s\\nArchitecture: %s\\nMaintainer: t <t@t>\\n%s"
	   "Description: d\\n' >'%s/DEBIAN/control'", name, ver, arch, extra, src);
	for (item = strtok_r(list, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
		if ((eq = strstr(item, "->"))) {
			*eq = 0;
			sh("mkdir -p \"$(dirname '%s/%s')\" && ln -s '%s' '%s/%s'", src, item, eq + 2,
			   src, item);
		} else if ((eq = strchr(item, '='))) {
			*eq = 0;
			sh("mkdir -p \"$(dirname '%s/%s')\" && printf '%%s' '%s' >'%s/%s'", src, item,
			   eq + 1, src, item);
		} else {
			sh("mkdir -p '%s/%s'", src, item);
		}
	}
	out = xasprintf("%s/%s_%s.deb", f->dir, name, arch);
	sh("dpkg-deb --root-owner-group -Znone -b '%s' '%s' >/dev/null", src, out);
	f->plan.v = xrealloc(f->plan.v, (f->plan.n + 1) * sizeof(*f->plan.v));
	e = &f->plan.v[f->plan.n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	e->arch = xstrdup(arch);
	e->version = xstrdup(ver);
	e->multi_arch = xstrdup(strstr(extra, "Multi-Arch: same") ? "same" : "no");
	e->path = out;
	free(src);
	free(list);
}

static inline int run(struct fx *f)
{
	struct settings st = { .jobs = 2, .source_date_epoch = 1700000000 };
	struct recipe r = { .merged_usr = 0, .arch = f->plan.primary };
	char *work = xasprintf("%s/work", f->dir);

	ck_assert_int_eq(mkdir(work, 0755), 0);
	st.work_dir = work;
	f->ret = unpack_plan(&f->stage, &f->plan, &r, &st);
	free(work);
	return f->ret;
}

/* The contents of `path` in the tree, or NULL. */
static inline char *tree_file(const struct fx *f, const char *path)
{
	char *p = xasprintf("%s/%s", f->stage.root, path), buf[256];
	FILE *fp = fopen(p, "r");
	size_t n;

	free(p);
	if (!fp)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = 0;
	return xstrdup(buf);
}

/* The owners of `path` in the manifest, comma-separated, or "-" if unowned or absent. */
static inline char *owners(const struct fx *f, const char *path)
{
	const struct manifest_entry *e = manifest_get(&f->stage.manifest, path);
	struct buf b = { 0 };
	size_t i;

	buf_adds(&b, e && e->owners.n ? "" : "-");
	for (i = 0; e && i < e->owners.n; i++)
		buf_addf(&b, "%s%s", i ? "," : "", e->owners.v[i]);
	return buf_detach(&b);
}

/* Does info/<pkg>.list name `path`? */
static inline int listed(const struct fx *f, const char *pkg, const char *path)
{
	char *l = xasprintf("%s/var/lib/dpkg/info/%s.list", f->stage.root, pkg);
	char line[512];
	FILE *fp = fopen(l, "r");
	int found = 0;

	free(l);
	ck_assert_ptr_nonnull(fp);
	while (!found && fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = 0;
		found = !strcmp(line, path);
	}
	fclose(fp);
	return found;
}

#define ASSERT_TREE(f, path, want)                                                  \
	do {                                                                        \
		char *got_ = tree_file(f, path);                                    \
		ck_assert_msg(got_ && !strcmp(got_, want), "%s: '%s'", path, got_); \
		free(got_);                                                         \
	} while (0)
#define ASSERT_OWNERS(f, path, want)                                              \
	do {                                                                      \
		char *got_ = owners(f, path);                                     \
		ck_assert_msg(!strcmp(got_, want), "%s owned by '%s'", path, got_); \
		free(got_);                                                       \
	} while (0)

#endif
