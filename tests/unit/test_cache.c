#include <check.h>
#include <errno.h>
#include <signal.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "lib/str.h"
#include "store/cache.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

static void rm_tree(char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

static char *tmpdir(void)
{
	char *d = xstrdup("/tmp/mki-unit-cache.XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

START_TEST(commit_then_lookup)
{
	char *dir = tmpdir(), *final, *tmp = NULL, *path = NULL, hex[65];
	int fd;

	hash_sha256_hex("abc", 3, hex);
	ck_assert_int_eq(cache_lookup(dir, hex, 3, &path), 0);
	final = cache_object_path(dir, hex);
	fd = cache_tmp_open(final, &tmp);
	ck_assert_int_ge(fd, 0);
	/* The temp file is a dot-file beside the object, never the object's name. */
	ck_assert(strstr(tmp, "/.") != NULL);
	ck_assert_int_eq(cache_lookup(dir, hex, 3, &path), 0);
	ck_assert_int_eq(write(fd, "abc", 3), 3);
	ck_assert_int_eq(cache_commit(fd, tmp, final), 0);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	ck_assert_int_eq(cache_lookup(dir, hex, 3, &path), 1);
	ck_assert_str_eq(path, final);
	free(path);
	/* A wrong expected size is a miss. */
	ck_assert_int_eq(cache_lookup(dir, hex, 4, &path), 0);
	free(tmp);
	free(final);
	rm_tree(dir);
}
END_TEST

START_TEST(lock_excludes_other_holders)
{
	char *dir = tmpdir();
	int a = cache_lock(dir, "k", 0), b;

	ck_assert_int_ge(a, 0);
	/* flock locks belong to the open file description: a second open conflicts. */
	b = cache_lock(dir, "k", 0);
	ck_assert_int_eq(b, -EWOULDBLOCK);
	cache_unlock(a);
	b = cache_lock(dir, "k", 0);
	ck_assert_int_ge(b, 0);
	cache_unlock(b);
	rm_tree(dir);
}
END_TEST

/* A waiting lock gives up on a signal instead of waiting for the holder (each test forks, so the
 * interrupted flag does not leak into other tests). */
START_TEST(lock_wait_stops_on_interrupt)
{
	char *dir = tmpdir();
	int a = cache_lock(dir, "k", 0);

	ck_assert_int_ge(a, 0);
	err_set_interrupted(SIGINT);
	ck_assert_int_eq(cache_lock(dir, "k", 1), -MKI_E_INTERRUPTED);
	cache_unlock(a);
	rm_tree(dir);
}
END_TEST

static void touch(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	fclose(f);
	free(p);
}

static int exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	int r = access(p, F_OK) == 0;

	free(p);
	return r;
}

/* Only the object's own temp names (.NAME. + six characters) are removed. */
START_TEST(sweep_removes_only_the_objects_temp_files)
{
	char *dir = tmpdir(), *final = xasprintf("%s/abcd", dir);

	touch(dir, ".abcd.Xy12Zq");
	touch(dir, ".abcd.short");
	touch(dir, ".abcde.Xy12Zq");
	touch(dir, "abcd");
	cache_sweep_tmp(final);
	ck_assert(!exists(dir, ".abcd.Xy12Zq"));
	ck_assert(exists(dir, ".abcd.short"));
	ck_assert(exists(dir, ".abcde.Xy12Zq"));
	ck_assert(exists(dir, "abcd"));
	free(final);
	rm_tree(dir);
}
END_TEST

/* A whole file stored under its final name, dated as asked; nothing left when it cannot be. */
START_TEST(store_whole_file_dated)
{
	char *dir = tmpdir(), *final = xasprintf("%s/releases/k/InRelease", dir), *bad;
	struct stat st;
	char got[16] = { 0 };
	FILE *f;

	ck_assert_int_eq(cache_store(final, "signed\n", 7, 1700000000), 0);
	ck_assert_int_eq(stat(final, &st), 0);
	ck_assert_int_eq((long)st.st_mtime, 1700000000);
	ck_assert_ptr_nonnull(f = fopen(final, "r"));
	ck_assert_uint_eq(fread(got, 1, sizeof(got) - 1, f), 7);
	fclose(f);
	ck_assert_str_eq(got, "signed\n");
	/* a second store replaces it whole, its mtime left as written when none is asked */
	ck_assert_int_eq(cache_store(final, "", 0, 0), 0);
	ck_assert_int_eq(stat(final, &st), 0);
	ck_assert_int_eq((long)st.st_size, 0);
	ck_assert_int_ne((long)st.st_mtime, 1700000000);
	/* under a file, not a directory: an error, and no temp file beside it */
	bad = xasprintf("%s/x", final);
	ck_assert_int_lt(cache_store(bad, "y", 1, 0), 0);
	ck_assert_int_eq(access(bad, F_OK), -1);
	free(bad);
	free(final);
	rm_tree(dir);
}
END_TEST

Suite *cache_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, commit_then_lookup);
	tcase_add_test(tc, lock_excludes_other_holders);
	tcase_add_test(tc, lock_wait_stops_on_interrupt);
	tcase_add_test(tc, sweep_removes_only_the_objects_temp_files);
	tcase_add_test(tc, store_whole_file_dated);
	suite_add_tcase(s, tc);
	return s;
}
