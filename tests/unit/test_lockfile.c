#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"
#include "recipe/lockfile.h"

#define SHA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEAD "format: 1\nrecipe: " SHA "\narchitectures: armhf\n"
#define DATE " date=Sat, 10 Jun 2023 08:56:02 UTC\n"

static int read_text(const char *text, struct lockfile *lk)
{
	char file[] = "/tmp/mkimage-lock-XXXXXX";
	int fd = mkstemp(file), ret;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ret = lockfile_read(lk, file);
	unlink(file);
	return ret;
}

START_TEST(source_fields_round_trip)
{
	struct lockfile lk, back;
	char file[] = "/tmp/mkimage-lock-XXXXXX";
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(read_text(HEAD "source: http://h/d bookworm sha256=" SHA
				   " components=main,contrib keys=ABCD,EF01" DATE, &lk), 0);
	ck_assert_uint_eq(lk.n_sources, 1);
	ck_assert_uint_eq(lk.sources[0].components.n, 2);
	ck_assert_str_eq(lk.sources[0].components.v[1], "contrib");
	ck_assert_str_eq(lk.sources[0].keys.v[1], "EF01");
	ck_assert_str_eq(lk.sources[0].date, "Sat, 10 Jun 2023 08:56:02 UTC");
	ck_assert_int_eq(lockfile_write(&lk, file), 0);
	ck_assert_int_eq(lockfile_read(&back, file), 0);
	ck_assert_uint_eq(back.sources[0].keys.n, 2);
	ck_assert_str_eq(back.sources[0].date, lk.sources[0].date);
	lockfile_release(&lk);
	lockfile_release(&back);
	unlink(file);
}
END_TEST

START_TEST(older_source_lines_still_read)
{
	struct lockfile lk;

	ck_assert_int_eq(read_text(HEAD "source: http://h/d bookworm sha256=-" DATE, &lk), 0);
	ck_assert_uint_eq(lk.sources[0].components.n, 0);
	ck_assert_uint_eq(lk.sources[0].keys.n, 0);
	lockfile_release(&lk);
	ck_assert_int_eq(read_text(HEAD "source: http://h/d bookworm sha256=- components=main" DATE, &lk), 0);
	ck_assert_uint_eq(lk.sources[0].keys.n, 0);
	lockfile_release(&lk);
}
END_TEST

START_TEST(bad_source_lists_refused)
{
	const char *bad[] = {
		HEAD "source: http://h/d bookworm sha256=- components=" DATE,
		HEAD "source: http://h/d bookworm sha256=- components=main,,x" DATE,
		HEAD "source: http://h/d bookworm sha256=- keys=A, components=main" DATE,
		HEAD "source: http://h/d bookworm sha256=- components=main\n",
	};
	struct lockfile lk;
	size_t i;

	log_set_level(LOG_QUIET);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_int_eq(read_text(bad[i], &lk), -MKI_E_LOCK);
	log_set_level(LOG_INFO);
}
END_TEST

Suite *lockfile_suite(void)
{
	Suite *s = suite_create("lockfile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, source_fields_round_trip);
	tcase_add_test(tc, older_source_lines_still_read);
	tcase_add_test(tc, bad_source_lists_refused);
	suite_add_tcase(s, tc);
	return s;
}
