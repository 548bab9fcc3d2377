/*
 * indexes_parse.c, data-driven: Release texts and what is read from them (or the line refused),
 * clearsigned messages and their signed text, and dates in the forms Release files use.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "lib/err.h"
#include "lib/str.h"
#include "repo/indexes_ctx.h"

#define SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* What was read, in one line: suite|codename|archs|comps|by-hash|no-all|entries. */
static void summary(const struct release_info *ri, struct buf *b)
{
	size_t i;

	buf_addf(b, "%s|%s|", ri->suite ? ri->suite : "-", ri->codename ? ri->codename : "-");
	for (i = 0; i < ri->archs.n; i++)
		buf_addf(b, "%s%s", i ? "," : "", ri->archs.v[i]);
	buf_adds(b, "|");
	for (i = 0; i < ri->comps.n; i++)
		buf_addf(b, "%s%s", i ? "," : "", ri->comps.v[i]);
	buf_addf(b, "|%d|%d|", ri->by_hash, ri->no_all);
	for (i = 0; i < ri->n; i++)
		buf_addf(b, "%s%s=%llu", i ? "," : "", ri->v[i].path,
			 (unsigned long long)ri->v[i].size);
}

static const struct {
	const char *text;
	const char *want; /* summary, or "line N" */
} releases[] = {
	{ "", "-|-|||0|0|" },
	{ "Suite: stable\nCodename: bookworm\nArchitectures: amd64 armhf\nComponents: main\n",
	  "stable|bookworm|amd64,armhf|main|0|0|" },
	{ "suite: s\nacquire-by-hash: yes\nNo-Support-for-Architecture-all: Packages\n",
	  "s|-|||1|1|" },
	{ "Suite: s\nSHA256:\n " SHA " 12 main/binary-armhf/Packages\n " SHA
	  " 0 main/binary-armhf/Packages.xz\n",
	  "s|-|||0|0|main/binary-armhf/Packages=12,main/binary-armhf/Packages.xz=0" },
	{ "Suite: s  \nMD5Sum:\n 0123 1 ignored\n", "s|-|||0|0|" },  /* blanks stripped */
	{ "Architectures: a\n b\n", "-|-|a,b||0|0|" },               /* a continued value */
	{ "Suite: s\n\n", "s|-|||0|0|" },                             /* a blank line at the end */
	{ "Suite: a\n\nSuite: b\n", "line 2" },                          /* a second stanza */
	{ "Suite: a\nno colon here\n", "line 2" },
	{ "Suite: a\nSHA256:\n nothex 12 main/x\n", "line 3" },
	{ "SHA256:\n " SHA " 1 main/a\n " SHA " x main/x\n", "line 3" },
	{ "Suite: a\nsuite: b\n", "line 2" },                            /* a field twice */
	{ " continued\n", "line 1" },
};

START_TEST(release_table)
{
	size_t i;

	for (i = 0; i < sizeof(releases) / sizeof(releases[0]); i++) {
		struct release_info ri = { 0 };
		struct buf got = { 0 };
		int line = 0, ret = indexes_parse_release(releases[i].text, &ri, &line);

		if (ret) {
			ck_assert_int_eq(ret, -MKI_E_PARSE);
			buf_addf(&got, "line %d", line);
		} else {
			summary(&ri, &got);
		}
		ck_assert_msg(!strcmp(got.p, releases[i].want), "case %zu: '%s', wanted '%s'", i,
			      got.p, releases[i].want);
		buf_release(&got);
		indexes_info_release(&ri);
	}
}
END_TEST

START_TEST(rel_find)
{
	struct release_info ri = { 0 };
	int line;

	ck_assert_int_eq(indexes_parse_release("SHA256:\n " SHA " 3 main/a\n " SHA " 4 main/b\n",
					       &ri, &line), 0);
	ck_assert_uint_eq(indexes_rel_find(&ri, "main/b")->size, 4);
	ck_assert_str_eq(indexes_rel_find(&ri, "main/a")->sha256, SHA);
	ck_assert_ptr_null(indexes_rel_find(&ri, "main"));
	indexes_info_release(&ri);
}
END_TEST

#define BEGIN "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
#define SIG "-----BEGIN PGP SIGNATURE-----\n\niQ==\n-----END PGP SIGNATURE-----\n"

static const struct {
	const char *msg, *text; /* text NULL: refused */
} signed_msgs[] = {
	{ BEGIN "A: 1\n" SIG, "A: 1\n" },
	{ BEGIN "A: 1\r\n- -x\n" SIG "\n \n", "A: 1\n-x\n" }, /* CRLF, dash-escaping, blanks */
	{ BEGIN SIG, "" },
	{ "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n" "A: 1\n" SIG, NULL }, /* no blank */
	{ BEGIN "-x\n" SIG, NULL },                              /* bad dash-escaping */
	{ BEGIN "A: 1\n" SIG "B: 2\n", NULL },                    /* data after the signature */
	{ "B: 2\n" BEGIN "A: 1\n" SIG, NULL },                    /* data before */
	{ BEGIN "A: 1\n-----BEGIN PGP SIGNATURE-----\n", NULL }, /* unterminated */
};

START_TEST(signed_text_table)
{
	size_t i;

	for (i = 0; i < sizeof(signed_msgs) / sizeof(signed_msgs[0]); i++) {
		struct buf b = { 0 };
		int ret = indexes_signed_text(signed_msgs[i].msg, strlen(signed_msgs[i].msg), &b);

		if (!signed_msgs[i].text) {
			ck_assert_msg(ret == -MKI_E_PARSE, "case %zu accepted", i);
		} else {
			ck_assert_msg(ret == 0, "case %zu refused", i);
			ck_assert_str_eq(b.p, signed_msgs[i].text);
		}
		buf_release(&b);
	}
}
END_TEST

START_TEST(date_table)
{
	static const struct {
		const char *s;
		int ret;
		int64_t t;
	} t[] = {
		{ "Sat, 10 Jun 2023 08:46:48 UTC", 0, 1686386808 },
		{ "Sat, 10 Jun 2023 08:46:48 GMT", 0, 1686386808 },
		{ "Sat, 10 Jun 2023 08:46:48", 0, 1686386808 },
		{ "10 Jun 2023 08:46:48 +0200", 0, 1686386808 - 7200 },
		{ "Sat, 10 Jun 2023 08:46:48 -0130", 0, 1686386808 + 5400 },
		{ "Sat, 10 Jun 2023 08:46:48 CEST", -MKI_E_PARSE, 0 },
		{ "Sat, 10 Jun 2023 08:46:48 +02", -MKI_E_PARSE, 0 },
		{ "someday", -MKI_E_PARSE, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int64_t got = 0;

		ck_assert_msg(indexes_parse_date(t[i].s, &got) == t[i].ret, "'%s'", t[i].s);
		if (!t[i].ret)
			ck_assert_msg(got == t[i].t, "'%s': %lld", t[i].s, (long long)got);
	}
}
END_TEST

/* The newest Date of the signed Releases: the default epoch; an unreadable one does not count. */
START_TEST(newest_date)
{
	static char sat[] = "Sat, 10 Jun 2023 08:46:48 UTC", sun[] = "Sun, 11 Jun 2023 08:46:48 UTC",
		    bad[] = "not a date";
	struct index_release rel[] = { { .date = sat }, { .date = NULL }, { .date = sun },
				       { .date = bad } };
	struct indexes ix = { .releases = rel, .n_releases = 4 };

	ck_assert_int_eq(indexes_newest_date(&ix), 1686473208);
	ix.n_releases = 2;
	ck_assert_int_eq(indexes_newest_date(&ix), 1686386808);
	ix.n_releases = 0;
	ck_assert_int_eq(indexes_newest_date(&ix), 0);
}
END_TEST

Suite *indexes_parse_suite(void)
{
	Suite *s = suite_create("indexes_parse");
	TCase *tc = tcase_create("indexes_parse");

	tcase_add_test(tc, release_table);
	tcase_add_test(tc, rel_find);
	tcase_add_test(tc, signed_text_table);
	tcase_add_test(tc, date_table);
	tcase_add_test(tc, newest_date);
	suite_add_tcase(s, tc);
	return s;
}
