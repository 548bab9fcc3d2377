#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/str.h"
#include "store/cache.h"
#include "store/cachegc.h"
#include "sandboxed.h"

/* A fake object KEY (64 hex digits made of `c`) of 8 KiB, last used at `when` (seconds). */
static void put(const char *dir, char c, time_t when, char *key)
{
	struct timespec t[2] = { { when, 0 }, { when, 0 } };
	char *path;
	int fd;

	memset(key, c, 64);
	key[64] = '\0';
	path = cache_object_path(dir, key);
	*strrchr(path, '/') = '\0';
	ck_assert_int_eq(fsutil_mkdirs(path), 0);
	path[strlen(path)] = '/';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(write(fd, memset((char[1024]){ 0 }, c, 1024), 1024), 1024);
	close(fd);
	ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
	free(path);
}

static int present(const char *dir, const char *key)
{
	char *path = cache_object_path(dir, key);
	int ok = !access(path, F_OK);

	free(path);
	return ok;
}

static void rm_rf(const char *dir)
{
	char *cmd = xasprintf("rm -rf %s", dir);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

START_TEST(least_recently_used_first_and_claims_spared)
{
	char dir[] = "/tmp/mki-cachegc-XXXXXX", a[65], b[65], c[65];
	struct cache_gc_result res;
	struct cache_user *u = NULL;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, 'a', 1000, a);
	put(dir, 'b', 3000, b);
	put(dir, 'c', 2000, c);
	/* room for two: the oldest (a) goes */
	ck_assert_int_eq(cachegc_run(dir, 2 * 8192, &res), 0);
	ck_assert_uint_eq(res.objects_before, 3);
	ck_assert_uint_eq(res.objects_removed, 1);
	ck_assert(!present(dir, a) && present(dir, b) && present(dir, c));
	/* a claim spares c and makes it the most recent; b is then the one to go */
	ck_assert_int_eq(cachegc_user_open(dir, &u), 0);
	ck_assert_int_eq(cachegc_claim(u, c), 0);
	ck_assert_int_eq(cachegc_run(dir, 0, &res), 0);
	ck_assert_uint_eq(res.builds, 1);
	ck_assert_uint_eq(res.objects_in_use, 1);
	ck_assert(!present(dir, b) && present(dir, c));
	ck_assert_uint_eq(res.bytes_after, 8192);
	cachegc_user_close(u);
	ck_assert_int_eq(cachegc_run(dir, 0, &res), 0);
	ck_assert(!present(dir, c));
	ck_assert_uint_eq(res.bytes_after, 0);
	rm_rf(dir);
}
END_TEST

/* What a last verified Release names (releases/KEY/verified/indexes) is kept; the rest goes. */
START_TEST(last_verified_indexes_kept)
{
	char dir[] = "/tmp/mki-cachegc-XXXXXX", a[65], b[65], *kept, *text;
	struct cache_gc_result res;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, 'a', 1000, a);
	put(dir, 'b', 2000, b);
	kept = xasprintf("%s/releases/%s/verified", dir, b);
	ck_assert_int_eq(fsutil_mkdirs(kept), 0);
	free(kept);
	kept = xasprintf("%s/releases/%s/verified/indexes", dir, b);
	text = xasprintf("release %s\n%s\nnot a key\n", a, a);
	f = fopen(kept, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(cachegc_run(dir, 0, &res), 0);
	ck_assert(present(dir, a) && !present(dir, b));
	ck_assert_uint_eq(res.objects_kept, 1);
	ck_assert_uint_eq(res.objects_in_use, 0);
	ck_assert_int_eq(access(kept, F_OK), 0);
	free(kept);
	free(text);
	rm_rf(dir);
}
END_TEST

START_TEST(dead_registrations_do_not_protect)
{
	char dir[] = "/tmp/mki-cachegc-XXXXXX", a[65];
	struct cache_gc_result res;
	pid_t pid;
	int st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, 'a', 1000, a);
	pid = fork();
	if (!pid) {
		struct cache_user *u;

		/* claims and dies without unregistering, as a killed build does */
		_exit(cachegc_user_open(dir, &u) || cachegc_claim(u, a));
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_eq(cachegc_run(dir, 0, &res), 0);
	ck_assert_uint_eq(res.builds, 0);
	ck_assert_uint_eq(res.leftovers, 1);
	ck_assert(!present(dir, a));
	rm_rf(dir);
}
END_TEST

START_TEST(claim_rejects_a_bad_key)
{
	char dir[] = "/tmp/mki-cachegc-XXXXXX";
	struct cache_user *u = NULL;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cachegc_claim(NULL, "anything"), 0);
	ck_assert_int_eq(cachegc_user_open(dir, &u), 0);
	ck_assert_int_lt(cachegc_claim(u, "abc"), 0);
	cachegc_user_close(u);
	rm_rf(dir);
}
END_TEST

/* --cache-gc: no cache is nothing to do; an emptied one is said with its figures. */
START_TEST(expire_says_what_it_did)
{
	char dir[] = "/tmp/mki-cachegc-XXXXXX", logf[] = "/tmp/mki-unit-log-XXXXXX", *log, *none;
	char key[65];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	none = xasprintf("%s/none", dir);
	put(dir, 'a', 1000, key);
	unit_log_capture(logf);
	ck_assert_int_eq(cachegc_expire(none, 0), 0);
	ck_assert_int_eq(cachegc_expire(dir, 0), 0);
	log = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(log, "no cache at '"));
	ck_assert_ptr_nonnull(strstr(log, "/none': nothing to remove"));
	ck_assert_ptr_nonnull(strstr(log, "1 objects, 0.0 MiB; removed 1 least recently used"));
	free(log);
	unlink(logf);
	free(none);
	rm_rf(dir);
}
END_TEST

Suite *cachegc_suite(void)
{
	Suite *s = suite_create("cachegc");
	TCase *tc = tcase_create("cachegc");

	tcase_add_test(tc, least_recently_used_first_and_claims_spared);
	tcase_add_test(tc, dead_registrations_do_not_protect);
	tcase_add_test(tc, last_verified_indexes_kept);
	tcase_add_test(tc, claim_rejects_a_bad_key);
	tcase_add_test(tc, expire_says_what_it_did);
	suite_add_tcase(s, tc);
	return s;
}
