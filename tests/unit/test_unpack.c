/*
 * unpack_plan's apply rules, on real .debs built with dpkg-deb in a temporary directory (the
 * hostile ones, which dpkg-deb refuses to build, with tests/integration/unpack_mkdeb.py): files
 * created, replaced under Replaces, kept when the owner replaces the newcomer, shared by M-A same
 * instances, conflicts refused, paths that climb out of the tree refused.
 */
#include <check.h>
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

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;

	va_start(ap, fmt);
	cmd = xvasprintf(fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	free(cmd);
}

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-unpack.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	strv_push(&f->plan.archs, "armhf");
	strv_push(&f->plan.archs, "armel");
	f->plan.primary = xstrdup("armhf");
	log_set_level(LOG_QUIET);
}

static void fx_release(struct fx *f)
{
	staging_release(&f->stage);
	plan_release(&f->plan);
	sh("chmod -R u+rwX '%s' && rm -rf '%s'", f->dir, f->dir);
}

/*
 * A .deb of `name` (arch, version, extra control lines) with `files`: "path=contents" items
 * separated by ';' ("path/" a directory, "path->target" a symlink). Appended to the plan.
 */
static void deb(struct fx *f, const char *name, const char *arch, const char *ver,
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

static int run(struct fx *f)
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
static char *tree_file(const struct fx *f, const char *path)
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
static char *owners(const struct fx *f, const char *path)
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
static int listed(const struct fx *f, const char *pkg, const char *path)
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

START_TEST(creates_and_owns)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "usr/bin/a=A;etc/a/;usr/bin/la->a");
	deb(&f, "b", "all", "1", "", "usr/share/b=B;usr/bin/b=bb");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "usr/bin/a", "A");
	ASSERT_TREE(&f, "usr/bin/b", "bb");
	ASSERT_OWNERS(&f, "usr/bin/a", "a");
	ASSERT_OWNERS(&f, "usr/bin", "a,b"); /* a directory is owned by everyone who ships it */
	ASSERT_OWNERS(&f, "usr/bin/la", "a");
	ck_assert_str_eq(manifest_get(&f.stage.manifest, "usr/bin/la")->target, "a");
	ck_assert(listed(&f, "a", "/usr/bin/a"));
	ck_assert(listed(&f, "b", "/usr/share/b"));
	fx_release(&f);
}
END_TEST

/* The same file in two packages and no Replaces: refused, as dpkg refuses. */
START_TEST(overwrite_without_replaces_refused)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "usr/bin/x=A");
	deb(&f, "b", "armhf", "1", "", "usr/bin/x=B");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);
}
END_TEST

/* Replaces with a version the owner satisfies: b takes the file, a's list forgets it. */
START_TEST(replaces_takes_over)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1.0", "", "usr/bin/x=A;usr/bin/y=Y");
	deb(&f, "b", "armhf", "1", "Replaces: a (<< 2)\n", "usr/bin/x=B");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "usr/bin/x", "B");
	ASSERT_OWNERS(&f, "usr/bin/x", "b");
	ck_assert(!listed(&f, "a", "/usr/bin/x"));
	ck_assert(listed(&f, "a", "/usr/bin/y"));
	ck_assert(listed(&f, "b", "/usr/bin/x"));
	fx_release(&f);
}
END_TEST

/* Replaces with a version the owner does not satisfy is no Replaces. */
START_TEST(replaces_version_not_satisfied)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "2.0", "", "usr/bin/x=A");
	deb(&f, "b", "armhf", "1", "Replaces: a (<< 2)\n", "usr/bin/x=B");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);
}
END_TEST

/* The owner replaces the newcomer: its file stays and the newcomer does not own it. */
START_TEST(owner_replacing_newcomer_keeps_its_file)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "Replaces: b\n", "usr/bin/x=A");
	deb(&f, "b", "armhf", "1", "", "usr/bin/x=B;usr/bin/z=Z");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "usr/bin/x", "A");
	ASSERT_OWNERS(&f, "usr/bin/x", "a");
	ASSERT_TREE(&f, "usr/bin/z", "Z");
	fx_release(&f);
}
END_TEST

/* M-A same instances share identical files (owned by both) and conflict on different ones. */
START_TEST(ma_same_shares_identical_files)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "libx", "armhf", "1", "Multi-Arch: same\n",
	    "usr/lib/arm-linux-gnueabihf/libx.so=HF;usr/share/doc/libx/c=C");
	deb(&f, "libx", "armel", "1", "Multi-Arch: same\n",
	    "usr/lib/arm-linux-gnueabi/libx.so=EL;usr/share/doc/libx/c=C");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_OWNERS(&f, "usr/share/doc/libx/c", "libx:armhf,libx:armel");
	ASSERT_OWNERS(&f, "usr/lib/arm-linux-gnueabi/libx.so", "libx:armel");
	fx_release(&f);

	fx_init(&f);
	deb(&f, "libx", "armhf", "1", "Multi-Arch: same\n", "usr/share/doc/libx/c=C1");
	deb(&f, "libx", "armel", "1", "Multi-Arch: same\n", "usr/share/doc/libx/c=C2");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);
}
END_TEST

/* Directories and non-directories: dpkg keeps a directory where a symlink comes, refuses files. */
START_TEST(directories_and_files)
{
	struct fx f;

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "opt/d/f=F");
	deb(&f, "b", "armhf", "1", "", "opt/d->elsewhere");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "opt/d/f", "F");
	ASSERT_OWNERS(&f, "opt/d", "a,b");
	fx_release(&f);

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "opt/d/f=F");
	deb(&f, "b", "armhf", "1", "", "opt/d=file");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);

	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "opt/d=file");
	deb(&f, "b", "armhf", "1", "", "opt/d/f=F");
	ck_assert_int_eq(run(&f), -MKI_E_CONFLICT);
	fx_release(&f);
}
END_TEST

/* A symlink climbing above the root, then a file through it: refused, nothing written outside. */
START_TEST(hostile_paths_refused)
{
	struct fx f;
	char *evil;

	fx_init(&f);
	evil = xasprintf("%s/evil", f.dir);
	deb(&f, "a", "armhf", "1", "", "usr/lib/up->../../../..");
	deb(&f, "b", "armhf", "1", "", "usr/lib/up/evil=E");
	ck_assert_int_eq(run(&f), -MKI_E_PACKAGE);
	ck_assert_int_ne(access(evil, F_OK), 0);
	free(evil);
	fx_release(&f);

	/* an absolute link restarts at the tree's root: the file lands inside */
	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "usr/lib/abs->/opt");
	deb(&f, "b", "armhf", "1", "", "opt/;usr/lib/abs/f=F");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "opt/f", "F");
	fx_release(&f);
}
END_TEST

/* A member named with '..' (which dpkg-deb refuses to build): the package is refused. */
START_TEST(dotdot_member_refused)
{
	struct fx f;
	struct plan_entry *e;
	char *out;

	fx_init(&f);
	out = xasprintf("%s/evil.deb", f.dir);
	sh("printf '%%s' '{\"out\": \"%s\", \"control\": \"Package: evil\\nVersion: 1\\n"
	   "Architecture: armhf\\n\", \"members\": [{\"name\": \"./usr/\", \"type\": \"dir\"}, "
	   "{\"name\": \"./usr/../../escape\", \"data\": \"x\"}]}' | "
	   "python3 tests/integration/unpack_mkdeb.py", out);
	f.plan.v = xcalloc(1, sizeof(*f.plan.v));
	f.plan.n = 1;
	e = &f.plan.v[0];
	e->name = xstrdup("evil");
	e->arch = xstrdup("armhf");
	e->version = xstrdup("1");
	e->multi_arch = xstrdup("no");
	e->path = out;
	ck_assert_int_eq(run(&f), -MKI_E_PACKAGE);
	fx_release(&f);
}
END_TEST

Suite *unpack_suite(void)
{
	Suite *s = suite_create("unpack");
	TCase *tc = tcase_create("unpack");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, creates_and_owns);
	tcase_add_test(tc, overwrite_without_replaces_refused);
	tcase_add_test(tc, replaces_takes_over);
	tcase_add_test(tc, replaces_version_not_satisfied);
	tcase_add_test(tc, owner_replacing_newcomer_keeps_its_file);
	tcase_add_test(tc, ma_same_shares_identical_files);
	tcase_add_test(tc, directories_and_files);
	tcase_add_test(tc, hostile_paths_refused);
	tcase_add_test(tc, dotdot_member_refused);
	suite_add_tcase(s, tc);
	return s;
}
