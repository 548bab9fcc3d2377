#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/readfile.h"
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
	ck_assert_int_eq(read_text(HEAD "source: http://127.0.0.1/d bookworm sha256=" SHA
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

/* index=stale and index=omitted (a mirror mid-sync) read, written back and read again. */
START_TEST(source_index_use_round_trip)
{
	struct lockfile lk, back;
	char file[] = "/tmp/mkimage-lock-XXXXXX";
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(read_text(HEAD "source: http://127.0.0.1/d bookworm sha256=" SHA
				   " components=main keys=ABCD" DATE
				   "source: http://127.0.0.1/d bookworm-security sha256=" SHA
				   " components=main keys=ABCD index=omitted" DATE, &lk), 0);
	ck_assert_ptr_null(lk.sources[0].index);
	ck_assert_str_eq(lk.sources[1].index, "omitted");
	free(lk.sources[1].index);
	lk.sources[1].index = xstrdup("stale");
	ck_assert_int_eq(lockfile_write(&lk, file), 0);
	ck_assert_int_eq(lockfile_read(&back, file), 0);
	ck_assert_str_eq(back.sources[1].index, "stale");
	ck_assert_str_eq(back.sources[1].date, "Sat, 10 Jun 2023 08:56:02 UTC");
	lockfile_release(&lk);
	lockfile_release(&back);
	unlink(file);
	ck_assert_int_eq(read_text(HEAD "source: http://127.0.0.1/d b sha256=" SHA " index=maybe" DATE, &lk),
			 -MKI_E_LOCK);
}
END_TEST

/* field:, twins: and twin: lines read, written back in place and read again the same. */
START_TEST(fields_and_twins_round_trip)
{
	struct lockfile lk, back;
	char file[] = "/tmp/mkimage-lock-XXXXXX";
	struct buf text = { 0 };
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(read_text(HEAD "package: sed:armhf=4.9 sha256=" SHA " size=10\n"
				   "field: packages.install " SHA "\nfield: name " SHA "\n"
				   "twins: host hosts=127.0.0.1:81,h.example packages=2 bytes=30\n"
				   "twin: sed:amd64=4.9 sha256=" SHA " size=10\n"
				   "twin: dash:amd64=0.5 sha256=" SHA " size=20\n", &lk), 0);
	ck_assert_uint_eq(lk.fields.n, 2);
	ck_assert_str_eq(lk.fields.v[0], "packages.install " SHA);
	ck_assert_str_eq(lk.twins_info.from, "host");
	ck_assert_uint_eq(lk.twins_info.hosts.n, 2);
	ck_assert_str_eq(lk.twins_info.hosts.v[1], "h.example");
	ck_assert_uint_eq(lk.twins_info.packages, 2);
	ck_assert_uint_eq(lk.twins_info.bytes, 30);
	ck_assert_uint_eq(lk.n_twins, 2);
	ck_assert_str_eq(lk.twins[0].name, "dash"); /* sorted */
	ck_assert_uint_eq(lk.n_pkgs, 1);
	ck_assert_int_eq(lockfile_write(&lk, file), 0);
	ck_assert_int_eq(readfile_read(file, 1 << 20, &text, NULL), 0);
	ck_assert_ptr_nonnull(strstr(text.p, "size=10\nfield: packages.install " SHA "\nfield: name "
				     SHA "\ntwins: host hosts=127.0.0.1:81,h.example packages=2 "
				     "bytes=30\ntwin: dash:amd64=0.5 "));
	ck_assert_int_eq(lockfile_read(&back, file), 0);
	ck_assert_uint_eq(back.n_twins, 2);
	ck_assert_uint_eq(back.fields.n, 2);
	ck_assert_str_eq(back.twins_info.hosts.v[0], "127.0.0.1:81");
	buf_release(&text);
	lockfile_release(&lk);
	lockfile_release(&back);
	unlink(file);
}
END_TEST

/* Each malformed field: or twins: line is refused with its line number. */
static const char *const bad_new_lines[] = {
	"field: packages.install\n",
	"field: packages.install nothex\n",
	"field: a b " SHA "\n",
	"twins: elsewhere hosts= packages=1 bytes=1\n",
	"twins: host packages=1 bytes=1\n",
	"twins: host hosts= packages=x bytes=1\n",
	"twins: host hosts=,a packages=1 bytes=1\n",
	"twins: host hosts= packages=1 bytes=1 more\n",
	"twins: host hosts= packages=1 bytes=1\ntwins: host hosts= packages=1 bytes=1\n",
	"twin: dash:amd64 sha256=" SHA " size=1\n",
};

START_TEST(bad_new_lines_refused)
{
	struct lockfile lk;
	char *text = xasprintf(HEAD "%s", bad_new_lines[_i]);

	ck_assert_int_eq(read_text(text, &lk), -MKI_E_LOCK);
	free(text);
}
END_TEST

START_TEST(older_source_lines_still_read)
{
	struct lockfile lk;

	ck_assert_int_eq(read_text(HEAD "source: http://127.0.0.1/d bookworm sha256=-" DATE, &lk), 0);
	ck_assert_uint_eq(lk.sources[0].components.n, 0);
	ck_assert_uint_eq(lk.sources[0].keys.n, 0);
	lockfile_release(&lk);
	ck_assert_int_eq(read_text(HEAD "source: http://127.0.0.1/d bookworm sha256=- components=main" DATE, &lk), 0);
	ck_assert_uint_eq(lk.sources[0].keys.n, 0);
	lockfile_release(&lk);
}
END_TEST

START_TEST(bad_source_lists_refused)
{
	const char *bad[] = {
		HEAD "source: http://127.0.0.1/d bookworm sha256=- components=" DATE,
		HEAD "source: http://127.0.0.1/d bookworm sha256=- components=main,,x" DATE,
		HEAD "source: http://127.0.0.1/d bookworm sha256=- keys=A, components=main" DATE,
		HEAD "source: http://127.0.0.1/d bookworm sha256=- components=main\n",
	};
	struct lockfile lk;
	size_t i;

	log_set_level(LOG_QUIET);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_int_eq(read_text(bad[i], &lk), -MKI_E_LOCK);
	log_set_level(LOG_INFO);
}
END_TEST

/* A lock line holding ESC or a second line's worth of text is malformed. */
START_TEST(control_characters_rejected)
{
	const char *bad[] = {
		HEAD "package: a:armhf=1 sha256=" SHA " size=1 source=e\x1b[2J\n",
		HEAD "package: a:armhf=1\r sha256=" SHA " size=1\n",
		HEAD "source: http://127.0.0.1/d book\tworm sha256=-" DATE,
		HEAD "source: http://127.0.0.1/d bookworm sha256=- date=Sat\x7f\n",
	};
	struct lockfile lk;
	size_t i;

	log_set_level(LOG_QUIET);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_int_eq(read_text(bad[i], &lk), -MKI_E_LOCK);
	log_set_level(LOG_INFO);
}
END_TEST

/* What would break a lock line - a newline, ESC, a space in a token - is never written. */
static const struct {
	int field;
	const char *value;
} hostile[] = {
	{ 0, "evil\x1b[2J" },
	{ 0, "evil\npackage: forged:armhf=1 sha256=" SHA " size=1" },
	{ 0, "two words" },
	{ 1, "1.0\n" },
	{ 2, "Sat\x1b]0;PWNED\x07" },
	{ 3, "bookworm\r" },
	{ 4, "main\n" },
};

START_TEST(hostile_fields_refused)
{
	char file[] = "/tmp/mkimage-lock-XXXXXX";
	int fd = mkstemp(file);
	struct lockfile lk;
	char **slot;

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(file);
	ck_assert_int_eq(read_text(HEAD "source: http://127.0.0.1/d bookworm sha256=- components=main"
				   DATE "package: a:armhf=1 sha256=" SHA " size=1 source=b\n",
				   &lk), 0);
	slot = hostile[_i].field == 0   ? &lk.pkgs[0].source
	       : hostile[_i].field == 1 ? &lk.pkgs[0].version
	       : hostile[_i].field == 2 ? &lk.sources[0].date
	       : hostile[_i].field == 3 ? &lk.sources[0].suite
					: &lk.sources[0].components.v[0];
	free(*slot);
	*slot = xstrdup(hostile[_i].value);
	log_set_level(LOG_QUIET);
	ck_assert_int_eq(lockfile_write(&lk, file), -MKI_E_PARSE);
	log_set_level(LOG_INFO);
	ck_assert_int_ne(access(file, F_OK), 0); /* nothing written */
	lockfile_release(&lk);
}
END_TEST

START_TEST(field_ok)
{
	ck_assert_int_eq(lockfile_field_ok("libc6", 0), 1);
	ck_assert_int_eq(lockfile_field_ok("1:2.36-9+deb12u4~bpo", 0), 1);
	ck_assert_int_eq(lockfile_field_ok("Sat, 10 Jun 2023 08:56:02 UTC", 1), 1);
	ck_assert_int_eq(lockfile_field_ok("Sat, 10 Jun", 0), 0);
	ck_assert_int_eq(lockfile_field_ok("a\nb", 1), 0);
	ck_assert_int_eq(lockfile_field_ok("\x1b", 1), 0);
	ck_assert_int_eq(lockfile_field_ok("caf\xc3\xa9", 1), 0);
	ck_assert_int_eq(lockfile_field_ok("", 0), 1);
}
END_TEST

Suite *lockfile_suite(void)
{
	Suite *s = suite_create("lockfile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, source_fields_round_trip);
	tcase_add_test(tc, source_index_use_round_trip);
	tcase_add_test(tc, older_source_lines_still_read);
	tcase_add_test(tc, fields_and_twins_round_trip);
	tcase_add_loop_test(tc, bad_new_lines_refused, 0,
			    sizeof(bad_new_lines) / sizeof(bad_new_lines[0]));
	tcase_add_test(tc, bad_source_lists_refused);
	tcase_add_test(tc, control_characters_rejected);
	tcase_add_loop_test(tc, hostile_fields_refused, 0, sizeof(hostile) / sizeof(hostile[0]));
	tcase_add_test(tc, field_ok);
	suite_add_tcase(s, tc);
	return s;
}
