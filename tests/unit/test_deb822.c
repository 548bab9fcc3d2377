#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debian/deb822.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"
#include "recipe/lockfile.h"

static int parse_all(const char *text, int *stanzas)
{
	struct deb822 d;
	int ret;

	ck_assert_int_eq(deb822_open_mem(&d, "mem", text, strlen(text)), 0);
	*stanzas = 0;
	while ((ret = deb822_next(&d)) > 0)
		(*stanzas)++;
	deb822_close(&d);
	return ret;
}

START_TEST(fields_and_continuations)
{
	const char *t = "Package: a\nVersion: 1.0\nDescription: short\n more\n .\n end\n\n\n"
			"package: b\r\nDepends: x,\n  y\n";
	struct deb822 d;

	ck_assert_int_eq(deb822_open_mem(&d, "mem", t, strlen(t)), 0);
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_str_eq(deb822_get(&d, "package"), "a");
	ck_assert_str_eq(deb822_get(&d, "Description"), "short\nmore\n.\nend");
	ck_assert_uint_eq(d.n_fields, 3);
	ck_assert_uint_eq(d.fields[2].value_len, strlen("short\nmore\n.\nend"));
	ck_assert_uint_eq(d.stanza_line, 1);
	ck_assert_ptr_null(deb822_get(&d, "Depends"));
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_uint_eq(d.stanza_line, 9);
	ck_assert_str_eq(deb822_get(&d, "Package"), "b");
	ck_assert_str_eq(deb822_get(&d, "Depends"), "x,\ny");
	ck_assert_int_eq(deb822_next(&d), 0);
	deb822_close(&d);
}
END_TEST

START_TEST(seek_back_to_a_stanza)
{
	const char *t = "Package: a\n\nPackage: b\nVersion: 2\n\nPackage: c\n";
	struct deb822 d;
	off_t off;
	unsigned long line;

	ck_assert_int_eq(deb822_open_mem(&d, "mem", t, strlen(t)), 0);
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_int_eq(deb822_next(&d), 1);
	off = d.stanza_offset;
	line = d.stanza_line;
	ck_assert_int_eq(off, 12);
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_int_eq(deb822_seek(&d, off, line), 0);
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_str_eq(deb822_get(&d, "Version"), "2");
	ck_assert_uint_eq(d.stanza_line, 3);
	deb822_close(&d);
}
END_TEST

START_TEST(malformed_input)
{
	int n;

	log_set_level(LOG_QUIET);
	ck_assert_int_eq(parse_all("Package a\n", &n), -MKI_E_PARSE);
	ck_assert_int_eq(parse_all(" cont\n", &n), -MKI_E_PARSE);
	ck_assert_int_eq(parse_all("A: 1\na: 2\n", &n), -MKI_E_PARSE);
	ck_assert_int_eq(parse_all(": x\n", &n), -MKI_E_PARSE);
	ck_assert_int_eq(parse_all("A: 1\0\n", &n), 0); /* strlen stops at the NUL: one stanza */
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(parse_all("", &n), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(parse_all("\n\n# comment\nA: 1\n\n\n", &n), 0);
	ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(nul_byte_is_an_error)
{
	static const char t[] = "A: 1\nB: x\0y\n";
	struct deb822 d;

	log_set_level(LOG_QUIET);
	ck_assert_int_eq(deb822_open_mem(&d, "mem", t, sizeof(t) - 1), 0);
	ck_assert_int_eq(deb822_next(&d), -MKI_E_PARSE);
	deb822_close(&d);
}
END_TEST

START_TEST(limits)
{
	size_t n = runlimits_get(NULL, LIMIT_LINE) + 10, i;
	char *big = xmalloc(n + 1);
	struct buf b = { 0 };
	int stanzas;

	log_set_level(LOG_QUIET);
	memcpy(big, "A: ", 3);
	memset(big + 3, 'x', n - 3);
	big[n] = 0;
	ck_assert_int_eq(parse_all(big, &stanzas), -MKI_E_LIMIT_REPO);
	free(big);
	for (i = 0; i <= runlimits_get(NULL, LIMIT_FIELDS); i++)
		buf_addf(&b, "F%zu: v\n", i);
	ck_assert_int_eq(parse_all(b.p, &stanzas), -MKI_E_LIMIT_REPO);
	buf_release(&b);
}
END_TEST

/* Limits set at run time, and the code a package's control file gets. */
START_TEST(limits_configured)
{
	const char *t = "A: 1\nB: 2\nC: 333333\n";
	struct limits l;
	struct deb822 d;

	log_set_level(LOG_QUIET);
	runlimits_init(&l);
	l.v[LIMIT_FIELDS] = 2;
	ck_assert_int_eq(deb822_open_mem(&d, "mem", t, strlen(t)), 0);
	deb822_set_limits(&d, &l, -MKI_E_LIMIT_PKG);
	ck_assert_int_eq(deb822_next(&d), -MKI_E_LIMIT_PKG);
	deb822_close(&d);
	l.v[LIMIT_FIELDS] = 3;
	l.v[LIMIT_LINE] = 8;
	ck_assert_int_eq(deb822_open_mem(&d, "mem", t, strlen(t)), 0);
	deb822_set_limits(&d, &l, -MKI_E_LIMIT_REPO);
	ck_assert_int_eq(deb822_next(&d), -MKI_E_LIMIT_REPO);
	deb822_close(&d);
	l.v[LIMIT_LINE] = 64;
	l.v[LIMIT_STANZA] = 12;
	ck_assert_int_eq(deb822_open_mem(&d, "mem", t, strlen(t)), 0);
	deb822_set_limits(&d, &l, -MKI_E_LIMIT_REPO);
	ck_assert_int_eq(deb822_next(&d), -MKI_E_LIMIT_REPO);
	deb822_close(&d);
	l.v[LIMIT_STANZA] = 64;
	ck_assert_int_eq(deb822_open_mem(&d, "mem", t, strlen(t)), 0);
	deb822_set_limits(&d, &l, -MKI_E_LIMIT_REPO);
	ck_assert_int_eq(deb822_next(&d), 1);
	deb822_close(&d);
}
END_TEST

START_TEST(long_values_across_reads)
{
	struct buf b = { 0 };
	struct deb822 d;
	size_t i;

	buf_adds(&b, "Package: p\nProvides: ");
	for (i = 0; i < 20000; i++)
		buf_addf(&b, "v%zu, ", i);
	buf_adds(&b, "end\n\nPackage: q\n");
	ck_assert_int_eq(deb822_open_mem(&d, "mem", b.p, b.len), 0);
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert(str_ends_with(deb822_get(&d, "Provides"), "v19999, end"));
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_str_eq(deb822_get(&d, "Package"), "q");
	deb822_close(&d);
	buf_release(&b);
}
END_TEST

START_TEST(lock_round_trip)
{
	char dir[] = "/tmp/mki-unit-lock.XXXXXX", *file;
	struct lockfile lk = { 0 }, back;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	file = xasprintf("%s/x.lock", dir);
	memset(lk.recipe, 'a', 64);
	strv_push(&lk.archs, "armhf");
	strv_push(&lk.archs, "armel");
	lk.pkgs = xcalloc(2, sizeof(*lk.pkgs));
	lk.n_pkgs = lk.alloc_pkgs = 2;
	lk.pkgs[0] = (struct lock_pkg){ xstrdup("zlib"), xstrdup("armel"), xstrdup("1:1.2"), "", 7, 0, NULL };
	lk.pkgs[1] = (struct lock_pkg){ xstrdup("base"), xstrdup("all"), xstrdup("1"), "", 9, 1, NULL };
	memset(lk.pkgs[0].sha256, 'b', 64);
	memset(lk.pkgs[1].sha256, 'c', 64);
	ck_assert_int_eq(lockfile_write(&lk, file), 0);
	ck_assert_int_eq(lockfile_read(&back, file), 0);
	ck_assert_uint_eq(back.n_pkgs, 2);
	ck_assert_str_eq(back.pkgs[0].name, "base"); /* written sorted */
	ck_assert_int_eq(back.pkgs[0].local, 1);
	ck_assert_str_eq(back.pkgs[1].version, "1:1.2");
	ck_assert_uint_eq(back.pkgs[1].size, 7);
	ck_assert_str_eq(back.archs.v[1], "armel");
	ck_assert_int_eq(memcmp(back.recipe, lk.recipe, 65), 0);
	lockfile_release(&back);
	lockfile_release(&lk);
	unlink(file);
	rmdir(dir);
	free(file);
}
END_TEST

/* Silent: nothing logged, the kind of error, its line and the message kept for the caller. */
START_TEST(silent_errors_name_kind_and_line)
{
	static const struct {
		const char *text;
		enum deb822_error kind;
		unsigned long line;
		int ret;
	} t[] = {
		{ "A: 1\nno colon\n", DEB822_E_LINE, 2, -MKI_E_PARSE },
		{ "# c\n cont\n", DEB822_E_CONTINUATION, 2, -MKI_E_PARSE },
		{ "A: 1\n\nB: 2\n-C: 3\n", DEB822_E_NAME, 4, -MKI_E_PARSE },
		{ "A: 1\nB: 2\na: 3\n", DEB822_E_DUPLICATE, 3, -MKI_E_PARSE },
		{ "A: 1\n", DEB822_OK, 0, 0 },
	};
	struct deb822 d;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ck_assert_int_eq(deb822_open_mem(&d, "f", t[i].text, strlen(t[i].text)), 0);
		deb822_set_silent(&d);
		while ((ret = deb822_next(&d)) > 0)
			;
		ck_assert_int_eq(ret, t[i].ret);
		ck_assert_int_eq(d.error, t[i].kind);
		ck_assert_uint_eq(d.error_line, t[i].line);
		if (t[i].ret)
			ck_assert(!strncmp(d.error_msg, "f:", 2));
		deb822_close(&d);
	}
}
END_TEST

/* Each field knows its line, comments and continuations counted. */
START_TEST(field_lines)
{
	const char *t = "\n# c\nA: 1\n more\n# c\nB: 2\n\nC: 3\n";
	struct deb822 d;

	ck_assert_int_eq(deb822_open_mem(&d, "f", t, strlen(t)), 0);
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_uint_eq(d.fields[0].line, 3);
	ck_assert_uint_eq(d.fields[1].line, 6);
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_uint_eq(d.fields[0].line, 8);
	deb822_close(&d);
}
END_TEST

/* Verbatim (a .deb's control file for dpkg's status): values as written. */
START_TEST(verbatim_values)
{
	const char *t = "Package: x  \r\nDescription:\t short\n  two spaces \n .\n \n"
			"Empty:\n\nNext: y\n";
	struct deb822 d;

	ck_assert_int_eq(deb822_open_mem(&d, "f", t, strlen(t)), 0);
	deb822_set_verbatim(&d);
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_str_eq(deb822_get(&d, "Package"), "x  \r");
	ck_assert_str_eq(deb822_get(&d, "Description"), "short\n  two spaces \n .\n ");
	ck_assert_str_eq(deb822_get(&d, "Empty"), "");
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_str_eq(deb822_get(&d, "Next"), "y");
	deb822_close(&d);

	/* a line of blanks continues the field in verbatim mode; it ends the stanza otherwise */
	t = "A: 1\n \nB: 2\n";
	ck_assert_int_eq(deb822_open_mem(&d, "f", t, strlen(t)), 0);
	ck_assert_int_eq(deb822_next(&d), 1);
	ck_assert_uint_eq(d.n_fields, 1);
	deb822_close(&d);
}
END_TEST

Suite *deb822_suite(void)
{
	Suite *s = suite_create("deb822");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, fields_and_continuations);
	tcase_add_test(tc, seek_back_to_a_stanza);
	tcase_add_test(tc, malformed_input);
	tcase_add_test(tc, nul_byte_is_an_error);
	tcase_add_test(tc, limits);
	tcase_add_test(tc, limits_configured);
	tcase_add_test(tc, long_values_across_reads);
	tcase_add_test(tc, lock_round_trip);
	tcase_add_test(tc, silent_errors_name_kind_and_line);
	tcase_add_test(tc, field_lines);
	tcase_add_test(tc, verbatim_values);
	suite_add_tcase(s, tc);
	return s;
}
