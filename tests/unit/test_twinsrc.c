/*
 * Where native tools' twins come from: the recipe's indexes when they hold the host's
 * architecture, else the host's apt sources (a temp apt root here), whose failures cost speed,
 * never the build. Downloads go through a stand-in that fails as the network would.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/accel.h"
#include "debian/arch.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"
#include "repo/twinsrc.h"

#define SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static int downloads, download_ret;

static int fake_download(struct fetch_item *items, size_t n, const struct settings *st,
			 const char *step, struct fetch_stats *stats)
{
	downloads++;
	return download_ret;
}

struct fixture {
	char dir[64];
	char uri[32], suite[16], comp[8];
	struct source src;
	struct index_release rel;
	struct index_file file;
	struct indexes ix;
	struct recipe r;
	struct settings st;
	struct plan p;
	struct plan twins;
};

/* An architecture the host emulates: armhf, unless the host is one. */
static const char *emulated(void)
{
	return strcmp(arch_host(), "armhf") ? "armhf" : "s390x";
}

static void plan_add(struct plan *p, const char *name, const char *arch, const char *version)
{
	struct plan_entry *e;

	ALLOC_GROW(p->v, p->n + 1, p->alloc);
	e = &p->v[p->n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	e->arch = xstrdup(arch);
	e->version = xstrdup(version);
}

/* A recipe for the emulated architecture; the plan holds sed and libc6 at Debian's versions. */
static void setup(struct fixture *f)
{
	int fd = open("/dev/null", O_WRONLY);

	memset(f, 0, sizeof(*f));
	dup2(fd, 2);
	close(fd);
	downloads = 0;
	download_ret = -MKI_E_NETWORK;
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-twinsrc.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->uri, sizeof(f->uri), "http://127.0.0.1:9/debian");
	snprintf(f->suite, sizeof(f->suite), "bookworm");
	snprintf(f->comp, sizeof(f->comp), "main");
	f->src.uri = f->uri;
	f->src.suite = f->suite;
	f->rel.src = &f->src;
	f->ix.releases = &f->rel;
	f->ix.n_releases = 1;
	f->r.arch = xstrdup(emulated());
	f->r.suite = xstrdup("bookworm");
	f->r.file = xstrdup("x.cfg");
	f->r.host_twins = 1; /* the key's default */
	f->st.apt_root = xasprintf("%s/apt", f->dir);
	f->st.work_dir = xasprintf("%s/work", f->dir);
	f->st.cache_dir = xasprintf("%s/cache", f->dir);
	ck_assert_int_eq(mkdir(f->st.apt_root, 0755), 0);
	ck_assert_int_eq(mkdir(f->st.work_dir, 0755), 0);
	plan_add(&f->p, "sed", emulated(), "4.9-1");
	plan_add(&f->p, "libc6", emulated(), "2.36-9+deb12u4");
	plan_add(&f->p, "base-files", "all", "12.4");
}

/* The recipe's indexes hold a host-architecture Packages file (for native tools). */
static void native_index(struct fixture *f, const char *text)
{
	FILE *out;

	f->file.component = f->comp;
	f->file.arch = xstrdup(arch_host());
	f->file.path = xasprintf("%s/Packages_host", f->dir);
	f->file.native_tools = 1;
	out = fopen(f->file.path, "w");
	ck_assert_ptr_nonnull(out);
	fputs(text, out);
	fclose(out);
	f->ix.files = &f->file;
	f->ix.n_files = 1;
}

/* The host's apt sources: one signed entry (the key need not be real: nothing is verified). */
static void host_sources(struct fixture *f)
{
	char *list = xasprintf("%s/sources.list", f->st.apt_root);
	FILE *out = fopen(list, "w");

	ck_assert_ptr_nonnull(out);
	fprintf(out, "deb [signed-by=%s/key.gpg] http://127.0.0.1:9/host bookworm main\n",
		f->st.apt_root);
	fclose(out);
	free(list);
	list = xasprintf("%s/key.gpg", f->st.apt_root);
	out = fopen(list, "w");
	ck_assert_ptr_nonnull(out);
	fputs("binary", out);
	fclose(out);
	free(list);
}

static void teardown(struct fixture *f)
{
	char *cmd = xasprintf("rm -rf %s", f->dir);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(f->file.arch);
	free(f->file.path);
	free(f->r.arch);
	free(f->r.suite);
	free(f->r.file);
	free(f->st.apt_root);
	free(f->st.work_dir);
	free(f->st.cache_dir);
	plan_release(&f->p);
	plan_release(&f->twins);
}

static int select_twins(struct fixture *f)
{
	return twinsrc_select(&f->twins, &f->ix, &f->p, &f->r, &f->st, fake_download,
			      accel_select);
}

#define STANZA(name, ver, extra) \
	"Package: " name "\nVersion: " ver "\n" extra "Filename: pool/" name "_" ver ".deb\n" \
	"Size: 7\nSHA256: " SHA "\n\n"

/*
 * The recipe's own repositories carry the host's architecture: twins come from there, for the
 * plan's source versions (a binNMU is the same source), with what the tools depend on; the
 * host's sources are not read.
 */
START_TEST(from_recipe_indexes)
{
	struct fixture f;

	setup(&f);
	host_sources(&f);
	native_index(&f, STANZA("sed", "4.9-1", "Depends: libc6 (>= 2.34)\n")
			 STANZA("libc6", "2.36-9+deb12u4+b1", "")
			 STANZA("grep", "3.8-5", ""));
	ck_assert_int_eq(select_twins(&f), 0);
	ck_assert_int_eq(downloads, 0);
	ck_assert_uint_eq(f.twins.n, 2);
	ck_assert_str_eq(f.twins.v[0].name, "sed");
	ck_assert_str_eq(f.twins.v[0].arch, arch_host());
	ck_assert_str_eq(f.twins.v[0].url, "http://127.0.0.1:9/debian/pool/sed_4.9-1.deb");
	ck_assert_str_eq(f.twins.v[0].sha256, SHA);
	ck_assert_uint_eq(f.twins.v[0].size, 7);
	ck_assert_str_eq(f.twins.v[1].name, "libc6");
	ck_assert_str_eq(f.twins.v[1].version, "2.36-9+deb12u4+b1");
	teardown(&f);
}
END_TEST

/* Another source version is no twin; nothing emulated or native tools off: no twins at all. */
START_TEST(none_wanted)
{
	struct fixture f;

	setup(&f);
	native_index(&f, STANZA("sed", "4.8-1", ""));
	ck_assert_int_eq(select_twins(&f), 0);
	ck_assert_uint_eq(f.twins.n, 0);
	teardown(&f);

	setup(&f);
	host_sources(&f);
	f.st.no_native_tools = 1;
	ck_assert_int_eq(select_twins(&f), 0);
	ck_assert_uint_eq(f.twins.n, 0);
	ck_assert_int_eq(downloads, 0);
	teardown(&f);

	setup(&f);
	host_sources(&f);
	free(f.r.arch);
	f.r.arch = xstrdup(arch_host());
	ck_assert_int_eq(select_twins(&f), 0);
	ck_assert_uint_eq(f.twins.n, 0);
	ck_assert_int_eq(downloads, 0);
	teardown(&f);
}
END_TEST

/* --no-host-twins, or an apt root without sources: no twins, nothing downloaded, no warning. */
START_TEST(host_sources_not_used)
{
	struct fixture f;
	unsigned warnings = log_warning_count();

	setup(&f);
	host_sources(&f);
	f.st.no_host_twins = 1;
	ck_assert_int_eq(select_twins(&f), 0);
	ck_assert_uint_eq(f.twins.n, 0);
	ck_assert_int_eq(downloads, 0);
	teardown(&f);

	setup(&f); /* the recipe's host_twins = false does the same */
	host_sources(&f);
	f.r.host_twins = 0;
	ck_assert_int_eq(select_twins(&f), 0);
	ck_assert_uint_eq(f.twins.n, 0);
	ck_assert_int_eq(downloads, 0);
	teardown(&f);

	setup(&f);
	ck_assert_int_eq(select_twins(&f), 0);
	ck_assert_uint_eq(f.twins.n, 0);
	ck_assert_int_eq(downloads, 0);
	ck_assert_uint_eq(log_warning_count(), warnings);
	teardown(&f);
}
END_TEST

/* Unreachable host sources are one warning and no twins; an interruption is passed on. */
START_TEST(host_sources_fail)
{
	struct fixture f;
	unsigned warnings = log_warning_count();

	setup(&f);
	host_sources(&f);
	ck_assert_int_eq(select_twins(&f), 0);
	ck_assert_int_gt(downloads, 0);
	ck_assert_uint_eq(f.twins.n, 0);
	ck_assert_uint_eq(log_warning_count(), warnings + 1);
	teardown(&f);

	setup(&f);
	host_sources(&f);
	download_ret = -MKI_E_INTERRUPTED;
	ck_assert_int_eq(select_twins(&f), -MKI_E_INTERRUPTED);
	ck_assert_uint_eq(f.twins.n, 0);
	teardown(&f);
}
END_TEST

Suite *twinsrc_suite(void)
{
	Suite *s = suite_create("twinsrc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, from_recipe_indexes);
	tcase_add_test(tc, none_wanted);
	tcase_add_test(tc, host_sources_not_used);
	tcase_add_test(tc, host_sources_fail);
	suite_add_tcase(s, tc);
	return s;
}
