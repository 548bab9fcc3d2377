/* A mirror mid-sync: which suites may stand in, and how (the last verified Release, or without). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/settings.h"
#include "lib/str.h"
#include "repo/indexes_ctx.h"

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/* A trusted source (no gpgv needed) of one suite whose armhf index did not match its Release. */
struct fixture {
	char cache[64], work[80];
	struct source src;
	struct settings st;
	struct rel r;
	struct indexes_ctx c;
	struct wants w;
	struct rel_entry file;
};

static void setup(struct fixture *f, const char *suite)
{
	int fd = open("/dev/null", O_WRONLY);

	memset(f, 0, sizeof(*f));
	dup2(fd, 2);
	close(fd);
	snprintf(f->cache, sizeof(f->cache), "/tmp/mki-unit-stale.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->cache));
	snprintf(f->work, sizeof(f->work), "%s/work", f->cache);
	ck_assert_int_eq(mkdir(f->work, 0755), 0);
	f->src.uri = xstrdup("http://127.0.0.1:9");
	f->src.suite = xstrdup(suite);
	f->src.origin = xstrdup("test.list:3");
	f->src.trusted = 1;
	strv_push(&f->src.components, "main");
	strv_push(&f->src.archs, "armhf");
	f->st.cache_dir = f->cache;
	f->st.work_dir = f->work;
	f->st.midsync_wait = 10;
	runlimits_init(&f->st.limits);
	f->r.src = &f->src;
	f->r.base = xasprintf("%s/dists/%s", f->src.uri, suite);
	f->r.cache_dir = xasprintf("%s/releases/key", f->cache);
	f->r.info.date = xstrdup("Fri, 04 Dec 2026 10:00:00 UTC");
	f->c.st = &f->st;
	f->c.rels = &f->r;
	f->c.n = 1;
	f->file.path = xstrdup("main/binary-armhf/Packages.xz");
	f->file.size = 2;
	memset(f->file.sha256, 'b', 64);
	f->w.v = xcalloc(1, sizeof(*f->w.v));
	f->w.n = f->w.alloc = 1;
	f->w.v[0].comp = xstrdup("main");
	f->w.v[0].arch = xstrdup("armhf");
	f->w.v[0].file = &f->file;
	f->w.v[0].url = xstrdup("http://127.0.0.1/P.xz");
	f->w.v[0].by_hash_missing = 1;
	f->w.v[0].item.result = -MKI_E_INTEGRITY;
	snprintf(f->w.v[0].item.mismatch, sizeof(f->w.v[0].item.mismatch),
		 "has 1 bytes, the index says 2");
}

static void teardown(struct fixture *f)
{
	char *cmd = xasprintf("rm -rf %s", f->cache);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	indexes_wants_release(&f->w);
	free(f->r.base);
	free(f->r.cache_dir);
	free(f->r.signed_path);
	free(f->r.sig_path);
	free(f->r.served_date);
	free(f->r.why);
	buf_release(&f->r.text);
	indexes_info_release(&f->r.info);
	free(f->file.path);
	free(f->src.uri);
	free(f->src.suite);
	free(f->src.origin);
	strv_release(&f->src.components);
	strv_release(&f->src.archs);
	strv_release(&f->st.allow_stale);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp;
	char *dir = xstrdup(path), *cmd;

	*strrchr(dir, '/') = '\0';
	cmd = xasprintf("mkdir -p %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
	free(cmd);
	free(dir);
}

/* A kept Release (of a trusted source: no signature) naming SHA_A, valid until `until`. */
static void keep_release(struct fixture *f, const char *until)
{
	char *text = xasprintf("Suite: %s\nDate: Mon, 30 Nov 2026 10:00:00 UTC\nValid-Until: %s\n"
			       "Architectures: armhf\nComponents: main\nSHA256:\n %s 5 "
			       "main/binary-armhf/Packages.xz\n", f->src.suite, until, SHA_A);
	char *path = xasprintf("%s/verified/Release", f->r.cache_dir);

	write_file(path, text);
	free(path);
	free(text);
}

START_TEST(allowed_words)
{
	struct strv allow = { 0 };

	ck_assert(indexes_suite_is_update("bookworm-security"));
	ck_assert(indexes_suite_is_update("bookworm-updates"));
	ck_assert(indexes_suite_is_update("buster/updates"));
	ck_assert(!indexes_suite_is_update("bookworm"));
	ck_assert(!indexes_suite_is_update("bookworm-backports"));
	strv_push(&allow, "trixie,updates");
	strv_push(&allow, "sid");
	ck_assert(indexes_stale_allowed(&allow, "bookworm-security"));
	ck_assert(indexes_stale_allowed(&allow, "trixie"));
	ck_assert(indexes_stale_allowed(&allow, "sid"));
	ck_assert(!indexes_stale_allowed(&allow, "bookworm"));
	ck_assert(!indexes_stale_allowed(&allow, "trix"));
	strv_release(&allow);
}
END_TEST

/* A word naming no source's suite is said; "updates", a suite's name and empty words are not. */
START_TEST(unknown_words_warned)
{
	struct strv allow = { 0 };
	struct source v[2] = { { .suite = (char[]){ "bookworm" } },
			       { .suite = (char[]){ "bookworm-security" } } };
	struct sources s = { .v = v, .n = 2 };
	size_t before = log_warning_count();

	strv_push(&allow, "updates,bookworm,,bookworm-security");
	indexes_stale_check_words(&allow, &s);
	ck_assert_uint_eq(log_warning_count(), before);
	strv_push(&allow, "bookwrom-security");
	indexes_stale_check_words(&allow, &s);
	ck_assert_uint_eq(log_warning_count(), before + 1);
	strv_release(&allow);
}
END_TEST

/* Without --allow-stale: the error, and nothing changed. */
START_TEST(not_allowed_is_an_error)
{
	struct fixture f;

	setup(&f, "bookworm-security");
	ck_assert_uint_eq(indexes_midsync_count(&f.w, SIZE_MAX), 1);
	ck_assert_uint_eq(indexes_midsync_count(&f.w, 1), 0);
	ck_assert_int_eq(indexes_stale_resolve(&f.c, &f.w), -MKI_E_INTEGRITY);
	ck_assert_str_eq(f.r.why, "'main/binary-armhf/Packages.xz' from 'http://127.0.0.1/P.xz' has 1 "
				  "bytes, the index says 2 and by-hash has no copy of it");
	ck_assert_int_eq(f.r.use, INDEX_CURRENT);
	teardown(&f);
}
END_TEST

/* No Release kept: an -updates/-security suite is left out, a base suite never. */
START_TEST(fresh_cache_omits_only_updates)
{
	struct fixture f;

	setup(&f, "bookworm-security");
	strv_push(&f.st.allow_stale, "updates");
	ck_assert_int_eq(indexes_stale_resolve(&f.c, &f.w), 0);
	ck_assert_int_eq(f.r.use, INDEX_OMITTED);
	ck_assert_uint_eq(f.w.n, 0);
	teardown(&f);
	setup(&f, "bookworm");
	strv_push(&f.st.allow_stale, "bookworm,updates");
	ck_assert_int_eq(indexes_stale_resolve(&f.c, &f.w), -MKI_E_INTEGRITY);
	ck_assert_int_eq(f.r.use, INDEX_CURRENT);
	teardown(&f);
}
END_TEST

/* The kept Release stands in, checked again, with its index from the cache. */
START_TEST(kept_release_stands_in)
{
	struct fixture f;
	char *idx;

	setup(&f, "bookworm");
	strv_push(&f.st.allow_stale, "bookworm");
	keep_release(&f, "Fri, 01 Jan 2100 00:00:00 UTC");
	idx = xasprintf("%s/indexes/%s", f.cache, SHA_A);
	write_file(idx, "Package: a\n");
	ck_assert_int_eq(indexes_stale_resolve(&f.c, &f.w), 0);
	ck_assert_int_eq(f.r.use, INDEX_STALE);
	ck_assert_str_eq(f.r.served_date, "Fri, 04 Dec 2026 10:00:00 UTC");
	ck_assert_str_eq(f.r.info.date, "Mon, 30 Nov 2026 10:00:00 UTC");
	ck_assert_uint_eq(f.w.n, 1);
	ck_assert(f.w.v[0].reuse);
	ck_assert_str_eq(f.w.v[0].derived, idx);
	free(idx);
	teardown(&f);
}
END_TEST

START_TEST(kept_release_expired_or_gone)
{
	struct fixture f;

	setup(&f, "bookworm-updates");
	strv_push(&f.st.allow_stale, "updates");
	keep_release(&f, "Fri, 01 Jan 2010 00:00:00 UTC");
	ck_assert_int_eq(indexes_stale_resolve(&f.c, &f.w), -MKI_E_EXPIRED);
	teardown(&f);
	setup(&f, "bookworm");
	strv_push(&f.st.allow_stale, "bookworm");
	keep_release(&f, "Fri, 01 Jan 2100 00:00:00 UTC"); /* its index not in the cache */
	ck_assert_int_eq(indexes_stale_resolve(&f.c, &f.w), -MKI_E_INTEGRITY);
	teardown(&f);
}
END_TEST

/* A good build keeps its Release and the keys of its indexes; the same Release adds keys. */
START_TEST(remember_keeps_release_and_keys)
{
	struct fixture f;
	struct buf b = { 0 };
	char *path, *src;

	setup(&f, "bookworm");
	f.w.v[0].item.result = 0;
	src = xasprintf("%s/Release", f.work);
	write_file(src, "Suite: bookworm\n");
	f.r.signed_path = src;
	memset(f.r.sha256, 'c', 64);
	indexes_stale_remember(&f.c, &f.w);
	path = xasprintf("%s/verified/indexes", f.r.cache_dir);
	ck_assert_int_eq(readfile_read(path, 4096, &b, NULL), 0);
	ck_assert_str_eq(b.p, "release cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\n"
			      "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n");
	buf_release(&b);
	memset(f.file.sha256, 'd', 64);
	indexes_stale_remember(&f.c, &f.w);
	ck_assert_int_eq(readfile_read(path, 4096, &b, NULL), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "bbbb\ndddd"));
	buf_release(&b);
	free(path);
	path = xasprintf("%s/verified/Release", f.r.cache_dir);
	ck_assert_int_eq(readfile_read(path, 4096, &b, NULL), 0);
	ck_assert_str_eq(b.p, "Suite: bookworm\n");
	buf_release(&b);
	free(path);
	teardown(&f);
}
END_TEST

START_TEST(report_member)
{
	char uri[] = "http://127.0.0.1/m", suite[] = "bookworm-security", date[] = "D", why[] = "w";
	struct source s = { .uri = uri, .suite = suite };
	struct index_release r[2] = { { .src = &s }, { .src = &s, .use = INDEX_OMITTED,
						       .served_date = date, .why = why } };
	struct indexes ix = { .releases = r, .n_releases = 1 };
	struct buf b = { 0 };

	indexes_report_json(&ix, &b);
	ck_assert_ptr_null(b.p);
	ix.n_releases = 2;
	indexes_report_json(&ix, &b);
	ck_assert_str_eq(b.p, "  \"indexes\": [\n    { \"uri\": \"http://127.0.0.1/m\", \"suite\": "
			      "\"bookworm-security\", \"used\": \"omitted\", \"release_date\": "
			      "null, \"valid_until\": null, \"served_date\": \"D\", \"why\": \"w\" }"
			      "\n  ]");
	buf_release(&b);
}
END_TEST

Suite *indexes_stale_suite(void)
{
	Suite *s = suite_create("indexes_stale");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, allowed_words);
	tcase_add_test(tc, unknown_words_warned);
	tcase_add_test(tc, not_allowed_is_an_error);
	tcase_add_test(tc, fresh_cache_omits_only_updates);
	tcase_add_test(tc, kept_release_stands_in);
	tcase_add_test(tc, kept_release_expired_or_gone);
	tcase_add_test(tc, remember_keeps_release_and_keys);
	tcase_add_test(tc, report_member);
	suite_add_tcase(s, tc);
	return s;
}
