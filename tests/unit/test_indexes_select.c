/* Which Packages files of a verified Release a source asks for, and where they come from. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/settings.h"
#include "lib/str.h"
#include "repo/indexes_ctx.h"

#define MAX_FILES 8

/* A Release offering `files` (paths and sizes) and a source asking for some of them. */
struct fixture {
	char uri[32], suite[16], origin[8], base[64], cache[64];
	struct rel_entry files[MAX_FILES];
	struct source src;
	struct settings st;
	struct rel r;
	struct indexes_ctx c;
	struct wants w;
};

static void setup(struct fixture *f)
{
	int fd = open("/dev/null", O_WRONLY);

	memset(f, 0, sizeof(*f));
	dup2(fd, 2);
	close(fd);
	snprintf(f->uri, sizeof(f->uri), "http://127.0.0.1:9");
	snprintf(f->suite, sizeof(f->suite), "bookworm");
	snprintf(f->origin, sizeof(f->origin), "test");
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:9/dists/bookworm");
	snprintf(f->cache, sizeof(f->cache), "/tmp/mki-unit-select.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->cache));
	f->src.uri = f->uri;
	f->src.suite = f->suite;
	f->src.origin = f->origin;
	f->st.cache_dir = f->cache;
	f->r.src = &f->src;
	f->r.base = f->base;
	f->c.st = &f->st;
	f->c.rels = &f->r;
	f->c.n = 1;
	f->r.info.v = f->files;
}

/* The Release declares `path` with `size` bytes; its digest is the file's number in hex. */
static void offer(struct fixture *f, const char *path, uint64_t size)
{
	struct rel_entry *e = &f->files[f->r.info.n];

	ck_assert_uint_lt(f->r.info.n, MAX_FILES);
	e->path = xstrdup(path);
	e->size = size;
	memset(e->sha256, "0123456789abcdef"[f->r.info.n++], 64);
}

static void teardown(struct fixture *f)
{
	char *cmd = xasprintf("rm -rf %s", f->cache);
	size_t i;

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	for (i = 0; i < f->r.info.n; i++)
		free(f->files[i].path);
	strv_release(&f->r.info.archs);
	strv_release(&f->r.info.comps);
	strv_release(&f->src.components);
	strv_release(&f->src.archs);
	indexes_wants_release(&f->w);
}

/* main/armhf and all, each as .gz and .xz, and the plain armhf file. */
static void bookworm(struct fixture *f)
{
	strv_push(&f->r.info.comps, "main");
	strv_push(&f->r.info.archs, "armhf");
	strv_push(&f->r.info.archs, "all");
	offer(f, "main/binary-armhf/Packages.gz", 100);
	offer(f, "main/binary-armhf/Packages.xz", 80);
	offer(f, "main/binary-armhf/Packages", 1000);
	offer(f, "main/binary-all/Packages.gz", 50);
	strv_push(&f->src.components, "main");
	strv_push(&f->src.archs, "armhf");
}

/* .xz is preferred; the plain entry is kept to check the decompressed file; "all" comes too. */
START_TEST(preferred_compression_and_all)
{
	struct fixture f;

	setup(&f);
	bookworm(&f);
	ck_assert_int_eq(indexes_want_release_files(&f.c, &f.w, 0), 0);
	ck_assert_uint_eq(f.w.n, 2);
	ck_assert_str_eq(f.w.v[0].comp, "main");
	ck_assert_str_eq(f.w.v[0].arch, "armhf");
	ck_assert_ptr_eq(f.w.v[0].file, &f.files[1]);
	ck_assert_ptr_eq(f.w.v[0].plain, &f.files[2]);
	ck_assert_str_eq(f.w.v[0].url, "http://127.0.0.1:9/dists/bookworm/main/binary-armhf/"
				       "Packages.xz");
	ck_assert_str_eq(f.w.v[1].arch, "all");
	ck_assert_ptr_eq(f.w.v[1].file, &f.files[3]);
	ck_assert_ptr_null(f.w.v[1].plain);
	ck_assert_int_eq(f.w.v[0].native_tools + f.w.v[1].native_tools, 0);
	teardown(&f);
}
END_TEST

/* by-hash URLs when the Release offers them; No-Support-for-Architecture-all: no "all" file. */
START_TEST(by_hash_and_no_all)
{
	struct fixture f;
	char *want;

	setup(&f);
	bookworm(&f);
	f.r.info.by_hash = 1;
	f.r.info.no_all = 1;
	ck_assert_int_eq(indexes_want_release_files(&f.c, &f.w, 0), 0);
	ck_assert_uint_eq(f.w.n, 1);
	want = xasprintf("http://127.0.0.1:9/dists/bookworm/main/binary-armhf/by-hash/SHA256/%s",
			 f.files[1].sha256);
	ck_assert_str_eq(f.w.v[0].url, want);
	free(want);
	teardown(&f);
}
END_TEST

/* A file already decompressed in the cache is reused; the derived path is named by digest. */
START_TEST(cached_reused)
{
	struct fixture f;
	char *dir, *file;
	int fd;

	setup(&f);
	bookworm(&f);
	dir = xasprintf("%s/indexes", f.cache);
	file = xasprintf("%s/%s", dir, f.files[1].sha256);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	fd = open(file, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(indexes_want_release_files(&f.c, &f.w, 0), 0);
	ck_assert_str_eq(f.w.v[0].derived, file);
	ck_assert_int_eq(f.w.v[0].reuse, 1);
	ck_assert_int_eq(f.w.v[1].reuse, 0);
	free(dir);
	free(file);
	teardown(&f);
}
END_TEST

/* "updates/main" in the Release's Components names the component "main". */
START_TEST(component_with_prefix)
{
	struct fixture f;

	setup(&f);
	strv_push(&f.r.info.comps, "updates/main");
	strv_push(&f.r.info.archs, "armhf");
	offer(&f, "main/binary-armhf/Packages.xz", 80);
	strv_push(&f.src.components, "main");
	strv_push(&f.src.archs, "armhf");
	ck_assert_int_eq(indexes_want_release_files(&f.c, &f.w, 0), 0);
	ck_assert_uint_eq(f.w.n, 1);
	teardown(&f);
}
END_TEST

/* A host source skips (with a warning) an architecture its Release lacks, as apt does. */
START_TEST(host_source_skips_arch)
{
	struct fixture f;
	unsigned warnings = log_warning_count();

	setup(&f);
	bookworm(&f);
	strv_push(&f.src.archs, "arm64");
	f.src.from_host = 1;
	ck_assert_int_eq(indexes_want_release_files(&f.c, &f.w, 0), 0);
	ck_assert_uint_eq(f.w.n, 2);
	ck_assert_str_eq(f.w.v[0].arch, "armhf");
	ck_assert_str_eq(f.w.v[1].arch, "all");
	ck_assert_uint_eq(log_warning_count(), warnings + 1);
	teardown(&f);
}
END_TEST

/* What the Release does not offer, or declares too large, is refused before any download. */
enum refusal { COMPONENT, ARCH, NO_FILE, INDEX_SIZE, INDEX_UNPACKED };

static const struct {
	enum refusal what;
	int want;
} refusals[] = {
	{ COMPONENT, -MKI_E_SOURCE },  /* the source asks for a component not offered */
	{ ARCH, -MKI_E_SOURCE },       /* an architecture not offered */
	{ NO_FILE, -MKI_E_SOURCE },    /* offered, but no Packages file listed for it */
	{ INDEX_SIZE, -MKI_E_LIMIT_REPO },
	{ INDEX_UNPACKED, -MKI_E_LIMIT_REPO },
};

START_TEST(refused)
{
	struct fixture f;

	setup(&f);
	bookworm(&f);
	switch (refusals[_i].what) {
	case COMPONENT: strv_push(&f.src.components, "contrib"); break;
	case ARCH: strv_push(&f.src.archs, "arm64"); break;
	case NO_FILE:
		strv_push(&f.src.archs, "arm64");
		strv_push(&f.r.info.archs, "arm64");
		break;
	case INDEX_SIZE: f.st.limits.v[LIMIT_INDEX_SIZE] = 79; break;
	case INDEX_UNPACKED: f.st.limits.v[LIMIT_INDEX_UNPACKED] = 999; break;
	}
	ck_assert_int_eq(indexes_want_release_files(&f.c, &f.w, 0), refusals[_i].want);
	teardown(&f);
}
END_TEST

/* Offline, a host-arch index for native tools not in the cache is left out, not a failure. */
START_TEST(offline_native_left_out)
{
	struct fixture f;

	setup(&f);
	bookworm(&f);
	strv_push(&f.r.info.archs, "amd64");
	offer(&f, "main/binary-amd64/Packages.xz", 80);
	f.c.native_arch = "amd64";
	f.st.offline = 1;
	ck_assert_int_eq(indexes_want_release_files(&f.c, &f.w, 0), 0);
	ck_assert_uint_eq(f.w.n, 2);
	ck_assert_str_eq(f.w.v[1].arch, "all");
	f.st.offline = 0;
	indexes_wants_release(&f.w);
	memset(&f.w, 0, sizeof(f.w));
	ck_assert_int_eq(indexes_want_release_files(&f.c, &f.w, 0), 0);
	ck_assert_uint_eq(f.w.n, 3);
	ck_assert_str_eq(f.w.v[2].arch, "amd64");
	ck_assert_int_eq(f.w.v[2].native_tools, 1);
	teardown(&f);
}
END_TEST

static size_t wants_of(const char *native_arch, int native_only, const char *src_arch,
		       struct wants *w)
{
	char uri[] = "http://127.0.0.1:9", suite[] = "bookworm", origin[] = "test";
	char cache[] = "/nonexistent-mki/cache", base[] = "http://127.0.0.1:9/dists/bookworm";
	char xz[] = "main/binary-amd64/Packages.xz", hf[] = "main/binary-armhf/Packages.xz";
	char all[] = "main/binary-all/Packages.xz";
	struct rel_entry files[] = { { .path = xz, .size = 10 }, { .path = hf, .size = 10 },
				     { .path = all, .size = 10 } };
	struct source src = { .uri = uri, .suite = suite, .origin = origin, .from_host = 1 };
	struct settings st = { .cache_dir = cache };
	struct rel r = { .src = &src, .base = base };
	struct indexes_ctx c = { .st = &st, .rels = &r, .n = 1, .native_arch = native_arch,
				 .native_only = native_only };

	for (size_t i = 0; i < 3; i++)
		memset(files[i].sha256, 'a' + (int)i, 64);
	r.info.v = files;
	r.info.n = 3;
	strv_push(&r.info.archs, "amd64");
	strv_push(&r.info.archs, "armhf");
	strv_push(&r.info.archs, "all");
	strv_push(&r.info.comps, "main");
	strv_push(&src.components, "main");
	strv_push(&src.archs, src_arch);
	ck_assert_int_eq(indexes_want_release_files(&c, w, 0), 0);
	strv_release(&r.info.archs);
	strv_release(&r.info.comps);
	strv_release(&src.components);
	strv_release(&src.archs);
	return w->n;
}

/*
 * The host's sources for native tools' twins: only the host arch's Packages file, marked for
 * native tools (never resolved), not "all" nor whatever the entry names; a recipe's source gets
 * its archs, "all" and the host arch's file marked apart.
 */
START_TEST(twins_want_the_host_arch_alone)
{
	struct wants w = { 0 };

	ck_assert_uint_eq(wants_of("amd64", 1, "amd64", &w), 1);
	ck_assert_str_eq(w.v[0].arch, "amd64");
	ck_assert_int_eq(w.v[0].native_tools, 1);
	indexes_wants_release(&w);
	memset(&w, 0, sizeof(w));
	ck_assert_uint_eq(wants_of("amd64", 0, "armhf", &w), 3);
	ck_assert_str_eq(w.v[0].arch, "armhf");
	ck_assert_str_eq(w.v[1].arch, "all");
	ck_assert_str_eq(w.v[2].arch, "amd64");
	ck_assert_int_eq(w.v[0].native_tools + w.v[1].native_tools, 0);
	ck_assert_int_eq(w.v[2].native_tools, 1);
	indexes_wants_release(&w);
}
END_TEST


Suite *indexes_select_suite(void)
{
	Suite *s = suite_create("indexes_select");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, preferred_compression_and_all);
	tcase_add_test(tc, by_hash_and_no_all);
	tcase_add_test(tc, cached_reused);
	tcase_add_test(tc, component_with_prefix);
	tcase_add_test(tc, host_source_skips_arch);
	tcase_add_loop_test(tc, refused, 0, sizeof(refusals) / sizeof(refusals[0]));
	tcase_add_test(tc, offline_native_left_out);
	tcase_add_test(tc, twins_want_the_host_arch_alone);
	suite_add_tcase(s, tc);
	return s;
}
