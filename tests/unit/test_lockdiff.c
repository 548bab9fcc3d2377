#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"
#include "emit/lockdiff.h"

#define HEAD "format: 1\nrecipe: " SHA "\narchitectures: armhf armel\n"
#define SHA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static char *lock(const char *text)
{
	char *file = xstrdup("/tmp/mkimage-lockdiff-XXXXXX");
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return file;
}

static char *diff(const char *a, const char *b, int *ret)
{
	char *fa = lock(a), *fb = lock(b), *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	*ret = lockdiff_print(fa, fb, f);
	fclose(f);
	unlink(fa);
	unlink(fb);
	free(fa);
	free(fb);
	return out;
}

START_TEST(changes_sorted_with_source)
{
	/* the files list packages out of order: the diff must still come out sorted */
	const char *old = HEAD
		"package: zlib1g:armhf=1:1.2.13-1 sha256=" SHA " size=1\n"
		"package: libc6:armhf=2.36-9 sha256=" SHA " size=1 source=glibc\n"
		"package: gone:armel=1.0 sha256=" SHA " size=1\n"
		"package: same:armhf=1.0 sha256=" SHA " size=1\n"
		"package: rebuilt:armhf=1.0 sha256=" SHA " size=1\n";
	const char *new = HEAD
		"package: same:armhf=1.0 sha256=" SHA " size=1\n"
		"package: libc6:armhf=2.36-9+deb12u4 sha256=" SHB " size=1 source=glibc\n"
		"package: libc6:armel=2.36-9+deb12u4 sha256=" SHB " size=1 source=glibc\n"
		"package: rebuilt:armhf=1.0 sha256=" SHB " size=1\n"
		"package: zlib1g:armhf=1:1.2.13-1 sha256=" SHA " size=1\n";
	int ret;
	char *out = diff(old, new, &ret);

	ck_assert_int_eq(ret, 0);
	ck_assert_str_eq(out, "removed gone:armel 1.0 (source gone)\n"
			      "added   libc6:armel 2.36-9+deb12u4 (source glibc)\n"
			      "changed libc6:armhf 2.36-9 -> 2.36-9+deb12u4 (source glibc)\n"
			      "rebuilt rebuilt:armhf 1.0 (source rebuilt)\n");
	free(out);
}
END_TEST

START_TEST(identical_locks_print_nothing)
{
	const char *l = HEAD "package: a:armhf=1 sha256=" SHA " size=1\n";
	int ret;
	char *out = diff(l, l, &ret);

	ck_assert_int_eq(ret, 0);
	ck_assert_str_eq(out, "");
	free(out);
}
END_TEST

START_TEST(bad_lock_is_a_usage_error)
{
	const char *good = HEAD "package: a:armhf=1 sha256=" SHA " size=1\n";
	const char *bad[] = {
		HEAD "package: a:armhf=1 sha256=" SHA " size=1 source=\n",
		HEAD "package: a:armhf=1 sha256=" SHA " size=1 source=x extra\n",
		HEAD "package: a:armhf=1 sha256=" SHA " size=1 origin=x\n",
		"not a lock file\n",
	};
	size_t i;
	int ret;

	log_set_level(LOG_QUIET);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		free(diff(good, bad[i], &ret));
		ck_assert_int_eq(ret, -MKI_E_USAGE);
	}
	log_set_level(LOG_INFO);
}
END_TEST

Suite *lockdiff_suite(void)
{
	Suite *s = suite_create("lockdiff");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, changes_sorted_with_source);
	tcase_add_test(tc, identical_locks_print_nothing);
	tcase_add_test(tc, bad_lock_is_a_usage_error);
	suite_add_tcase(s, tc);
	return s;
}
