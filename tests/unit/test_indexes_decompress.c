/*
 * A downloaded Packages file (real .xz, .gz or plain, made at test time) decompressed into the
 * cache: checked against the Release's plain entry, bounded, and nothing left behind on refusal.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "lib/readfile.h"
#include "lib/settings.h"
#include "lib/str.h"
#include "repo/indexes_ctx.h"

struct fixture {
	char dir[64];
	struct buf plain;        /* the Packages text */
	char plain_path[40];
	struct rel_entry entry;  /* the Release's entry for the plain file */
	struct settings st;
	struct indexes_ctx c;
	struct want x;
};

/* The download is the Packages text through `compress` ("xz", "gzip -n", "cat", "xz ..."). */
static void setup(struct fixture *f, const char *compress)
{
	FILE *out;
	char *cmd;
	int fd = open("/dev/null", O_WRONLY), i;

	memset(f, 0, sizeof(*f));
	dup2(fd, 2);
	close(fd);
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-decompress.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	for (i = 0; i < 2000; i++)
		buf_addf(&f->plain, "Package: p%d\nVersion: %d\nArchitecture: armhf\n\n", i, i);
	cmd = xasprintf("%s/Packages", f->dir);
	out = fopen(cmd, "w");
	ck_assert_ptr_nonnull(out);
	fwrite(f->plain.p, 1, f->plain.len, out);
	fclose(out);
	free(cmd);
	cmd = xasprintf("%s <%s/Packages >%s/download", compress, f->dir, f->dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	snprintf(f->plain_path, sizeof(f->plain_path), "main/binary-armhf/Packages");
	f->entry.path = f->plain_path;
	f->entry.size = f->plain.len;
	hash_sha256_hex(f->plain.p, f->plain.len, f->entry.sha256);
	f->c.st = &f->st;
	f->x.plain = &f->entry;
	f->x.url = xstrdup("http://127.0.0.1:9/Packages.xz");
	f->x.item.path = xasprintf("%s/download", f->dir);
	f->x.derived = xasprintf("%s/cache/indexes/%s", f->dir, f->entry.sha256);
}

/* Nothing but the download (when kept) is left: no derived file, no temp file. */
static void assert_nothing_cached(struct fixture *f)
{
	char *d = xasprintf("%s/cache/indexes", f->dir);
	DIR *dh = opendir(d);
	struct dirent *e;

	ck_assert_int_eq(access(f->x.derived, F_OK), -1);
	while (dh && (e = readdir(dh)))
		ck_assert_msg(e->d_name[0] == '.', "'%s' left in the cache", e->d_name);
	if (dh)
		closedir(dh);
	free(d);
}

static void teardown(struct fixture *f)
{
	char *cmd = xasprintf("rm -rf %s", f->dir);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(f->x.url);
	free(f->x.item.path);
	free(f->x.derived);
	buf_release(&f->plain);
}

static const char *const formats[] = { "xz", "gzip -n", "bzip2", "cat" };

START_TEST(decompresses_into_cache)
{
	struct fixture f;
	struct buf got = { 0 };

	setup(&f, formats[_i]);
	ck_assert_int_eq(indexes_decompress_want(&f.c, &f.x), 0);
	ck_assert_int_eq(readfile_read(f.x.derived, 1 << 24, &got, NULL), 0);
	ck_assert_uint_eq(got.len, f.plain.len);
	ck_assert_mem_eq(got.p, f.plain.p, got.len);
	ck_assert_int_eq(access(f.x.item.path, F_OK), 0); /* the download stays in the cache */
	buf_release(&got);
	teardown(&f);
}
END_TEST

/* Without a plain entry in the Release, the index-unpacked limit alone bounds the output. */
START_TEST(no_plain_entry)
{
	struct fixture f;

	setup(&f, "xz");
	f.x.plain = NULL;
	ck_assert_int_eq(indexes_decompress_want(&f.c, &f.x), 0);
	ck_assert_int_eq(access(f.x.derived, F_OK), 0);
	teardown(&f);
	setup(&f, "gzip -n");
	f.x.plain = NULL;
	f.st.limits.v[LIMIT_INDEX_UNPACKED] = 1000;
	ck_assert_int_eq(indexes_decompress_want(&f.c, &f.x), -MKI_E_LIMIT_REPO);
	assert_nothing_cached(&f);
	ck_assert_int_eq(access(f.x.item.path, F_OK), -1); /* the refused download is evicted */
	teardown(&f);
}
END_TEST

/* Refusals, each with its own code: the cache keeps nothing, the refused download goes. */
static const struct {
	const char *compress;
	int change; /* 0 digest, 1 declared size smaller, 2 declared larger, 3 corrupt, 4 limit,
		       5 xz memory */
	int want;
} refusals[] = {
	{ "xz", 0, -MKI_E_INTEGRITY },
	{ "cat", 0, -MKI_E_INTEGRITY },
	{ "xz", 1, -MKI_E_INTEGRITY },
	{ "gzip -n", 1, -MKI_E_INTEGRITY },
	{ "xz", 2, -MKI_E_INTEGRITY },
	{ "xz", 3, -MKI_E_PARSE },
	{ "gzip -n", 3, -MKI_E_PARSE },
	{ "xz", 4, -MKI_E_LIMIT_REPO },
	{ "xz --lzma2=dict=64MiB", 5, -MKI_E_LIMIT_REPO },
};

static void corrupt(const char *path)
{
	int fd = open(path, O_RDWR);
	char c;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &c, 1, 200), 1);
	c ^= 0x55;
	ck_assert_int_eq(pwrite(fd, &c, 1, 200), 1);
	close(fd);
}

START_TEST(refused)
{
	struct fixture f;

	setup(&f, refusals[_i].compress);
	switch (refusals[_i].change) {
	case 0: f.entry.sha256[0] = f.entry.sha256[0] == '0' ? '1' : '0'; break;
	case 1: f.entry.size -= 1; break;
	case 2: f.entry.size += 1; break;
	case 3: corrupt(f.x.item.path); break;
	case 4: f.st.limits.v[LIMIT_INDEX_UNPACKED] = 1000; break;
	case 5: f.st.limits.v[LIMIT_XZ_MEMORY] = 4 << 20; break;
	}
	ck_assert_int_eq(indexes_decompress_want(&f.c, &f.x), refusals[_i].want);
	assert_nothing_cached(&f);
	ck_assert_int_eq(access(f.x.item.path, F_OK), -1);
	teardown(&f);
}
END_TEST

/* A download that vanished before decompression: open's own error. */
START_TEST(missing_download_gives_its_errno)
{
	char dir[] = "/tmp/mki-unit-indexes.XXXXXX";
	struct settings st = { 0 };
	struct indexes_ctx c = { .st = &st };
	char path[] = "main/binary-armhf/Packages.xz";
	struct rel_entry f = { .path = path, .size = 1 };
	struct want x = { .file = &f };
	int fd = open("/dev/null", O_WRONLY);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	x.derived = xasprintf("%s/derived", dir);
	x.url = xstrdup("http://127.0.0.1:9/Packages.xz");
	x.item.path = xasprintf("%s/gone", dir);
	dup2(fd, 2);
	ck_assert_int_eq(indexes_decompress_want(&c, &x), -ENOENT);
	ck_assert_int_eq(access(x.derived, F_OK), -1);
	close(fd);
	free(x.derived);
	free(x.url);
	free(x.item.path);
	rmdir(dir);
}
END_TEST

Suite *indexes_decompress_suite(void)
{
	Suite *s = suite_create("indexes_decompress");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, decompresses_into_cache, 0, sizeof(formats) / sizeof(formats[0]));
	tcase_add_test(tc, no_plain_entry);
	tcase_add_loop_test(tc, refused, 0, sizeof(refusals) / sizeof(refusals[0]));
	tcase_add_test(tc, missing_download_gives_its_errno);
	suite_add_tcase(s, tc);
	return s;
}
