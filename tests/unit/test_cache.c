#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "hash.h"
#include "str.h"

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

	sha256_hex("abc", 3, hex);
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

Suite *cache_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, commit_then_lookup);
	tcase_add_test(tc, lock_excludes_other_holders);
	suite_add_tcase(s, tc);
	return s;
}
