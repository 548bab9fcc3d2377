#include <check.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/settings.h"
#include "lib/str.h"
#include "store/cache.h"
#include "store/fetch.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

/* DIR/Packages.xz holding `bytes`, its file:// URL, and DIR/cache for the cache. */
static void served(const char *dir, const char *bytes, char **src, char **url, char **cache)
{
	FILE *f;

	*src = xasprintf("%s/Packages.xz", dir);
	*url = xasprintf("file://%s", *src);
	*cache = xasprintf("%s/cache", dir);
	f = fopen(*src, "w");
	ck_assert_ptr_nonnull(f);
	fputs(bytes, f);
	fclose(f);
}

/*
 * Two items with one SHA-256 (identical indexes of two components) while another process holds
 * the object's lock and then dies without storing it: the first item takes over and downloads,
 * the second must not wait on the lock its own process now holds (it used to, for ever).
 */
START_TEST(same_object_twice_after_the_holder_dies)
{
	char dir[] = "/tmp/mki-unit-fetch.XXXXXX", hex[65], *src, *url, *cache;
	struct settings st = { .jobs = 2, .source_date_epoch = -1 };
	struct fetch_item it[2] = { { 0 } };
	int sync[2], wst, i;
	char go;
	pid_t holder;

	settings_read_env(&st);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	served(dir, "same bytes", &src, &url, &cache);
	hash_sha256_hex("same bytes", 10, hex);
	st.cache_dir = cache;
	ck_assert_int_eq(pipe(sync), 0);
	holder = fork();
	if (holder == 0) {
		int fd = cache_lock(cache, hex, 0);

		go = fd >= 0 ? 'y' : 'n';
		(void)!write(sync[1], &go, 1);
		usleep(300 * 1000);
		_exit(0);
	}
	ck_assert_int_eq(read(sync[0], &go, 1), 1);
	ck_assert_int_eq(go, 'y');
	for (i = 0; i < 2; i++)
		it[i] = (struct fetch_item){ .url = url, .what = "Packages.xz", .size = 10,
					     .sha256 = hex };
	alarm(20); /* a wait cycle would hang here: fail instead */
	ck_assert_int_eq(fetch_items(it, 2, &st, "indexes", NULL), 0);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(it[i].result, 0);
		ck_assert_ptr_nonnull(it[i].path);
		free(it[i].path);
	}
	waitpid(holder, &wst, 0);
	close(sync[0]);
	close(sync[1]);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(src);
	free(url);
	free(cache);
	settings_release_env(&st);
}
END_TEST

/*
 * A mismatch_ok item (an index of a mirror mid-sync): the wrong bytes are its result, said in
 * `mismatch`, never an error logged and never cached; without mismatch_ok, the same is logged.
 */
START_TEST(mismatch_is_a_result_when_asked)
{
	char dir[] = "/tmp/mki-unit-fetch.XXXXXX", hex[65], *src, *url, *cache, *obj;
	struct settings st = { .jobs = 1, .source_date_epoch = -1 };
	struct fetch_item it = { 0 };
	size_t errors;

	settings_read_env(&st);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	served(dir, "old index", &src, &url, &cache);
	hash_sha256_hex("new index!", 10, hex);
	st.cache_dir = cache;
	it = (struct fetch_item){ .url = url, .what = "Packages.xz", .size = 10, .sha256 = hex,
				  .mismatch_ok = 1 };
	errors = log_errors()->n;
	ck_assert_int_eq(fetch_items(&it, 1, &st, "indexes", NULL), -MKI_E_INTEGRITY);
	ck_assert_int_eq(it.result, -MKI_E_INTEGRITY);
	ck_assert_str_eq(it.mismatch, "has 9 bytes, the index says 10");
	ck_assert_uint_eq(log_errors()->n, errors);
	ck_assert_ptr_null(it.path);
	obj = cache_object_path(cache, hex);
	ck_assert_int_ne(access(obj, F_OK), 0);
	it = (struct fetch_item){ .url = url, .what = "Packages.xz", .size = 10, .sha256 = hex };
	ck_assert_int_eq(fetch_items(&it, 1, &st, "indexes", NULL), -MKI_E_INTEGRITY);
	ck_assert_uint_eq(log_errors()->n, errors + 1);
	ck_assert_int_ne(access(obj, F_OK), 0);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(obj);
	free(src);
	free(url);
	free(cache);
	settings_release_env(&st);
}
END_TEST

Suite *fetch_suite(void)
{
	Suite *s = suite_create("fetch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, same_object_twice_after_the_holder_dies);
	tcase_add_test(tc, mismatch_is_a_result_when_asked);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}
