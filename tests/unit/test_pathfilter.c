#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "debian/pathfilter.h"
#include "lib/str.h"

/* A filter from "-GLOB" (exclude) and "+GLOB" (include) words, in order. */
static void rules(struct pathfilter *f, const char *const *words)
{
	memset(f, 0, sizeof(*f));
	for (; *words; words++)
		pathfilter_add(f, *words + 1, **words == '+');
}

struct verdict {
	const char *path;
	int dir_or_link, skip;
};

/* Check each verdict against `f`, naming the path that disagrees. */
static void expect(const struct pathfilter *f, const struct verdict *v)
{
	for (; v->path; v++)
		ck_assert_msg(pathfilter_skips(f, v->path, v->dir_or_link) == v->skip,
			      "'%s' (%s): expected %s", v->path, v->dir_or_link ? "dir" : "file",
			      v->skip ? "left out" : "kept");
}

START_TEST(no_rules_keep_everything)
{
	static const struct verdict v[] = {
		{ "/usr/share/doc/x/README", 0, 0 },
		{ "/usr/share/doc", 1, 0 },
		{ NULL, 0, 0 },
	};
	struct pathfilter f = { 0 };

	expect(&f, v);
}
END_TEST

START_TEST(globs_as_fnmatch_without_flags)
{
	/* '*' and '?' cross '/', as dpkg's man page says */
	static const struct verdict v[] = {
		{ "/usr/share/doc/package/README", 0, 1 },
		{ "/usr/READ", 0, 0 }, /* the second "/" is literal */
		{ "/usr/share/doc/package/NEWS", 0, 0 },
		{ "/etc/motd", 0, 1 },
		{ "/etc/mmotd", 0, 0 },
		{ "/opt/a/", 0, 1 },
		{ "/opt/c1", 0, 0 },
		/* leading dots are ordinary characters (no FNM_PERIOD) */
		{ "/usr/.hidden/READ", 0, 1 },
		{ NULL, 0, 0 },
	};
	static const char *const w[] = { "-/usr/*/READ*", "-/etc/?otd", "-/opt/[ab]?", NULL };
	struct pathfilter f;

	rules(&f, w);
	expect(&f, v);
	pathfilter_release(&f);
}
END_TEST

START_TEST(last_match_decides)
{
	static const struct verdict v[] = {
		{ "/usr/share/doc/a/changelog.gz", 0, 1 },
		{ "/usr/share/doc/a/copyright", 0, 0 },
		{ "/usr/share/doc/secret/copyright", 0, 1 },
		{ "/usr/bin/a", 0, 0 },
		{ NULL, 0, 0 },
	};
	static const char *const w[] = { "-/usr/share/doc/*", "+/usr/share/doc/*/copyright",
		"-/usr/share/doc/secret/*", NULL };
	struct pathfilter f;

	rules(&f, w);
	expect(&f, v);
	pathfilter_release(&f);
}
END_TEST

START_TEST(include_below_exclude_keeps_directories)
{
	/* a package's doc directory (or a symlink to another's) may receive its copyright */
	static const struct verdict v[] = {
		{ "/usr/share/doc/a", 1, 0 },
		{ "/usr/share/doc/a/examples", 1, 0 },
		/* the same path as a file is not needed */
		{ "/usr/share/doc/a/examples", 0, 1 },
		/* no include starts below /usr/share/man */
		{ "/usr/share/man/man1", 1, 1 },
		{ NULL, 0, 0 },
	};
	static const char *const w[] = { "-/usr/share/doc/*", "+/usr/share/doc/*/copyright",
		"-/usr/share/man/*", NULL };
	struct pathfilter f;

	rules(&f, w);
	expect(&f, v);
	pathfilter_release(&f);
}
END_TEST

START_TEST(literal_head_stops_at_any_wildcard)
{
	static const struct verdict v[] = {
		{ "/srv/www/site", 1, 0 },
		{ "/srv/www", 1, 1 }, /* shorter than "/srv/www/sit" */
		{ "/srv/dz", 1, 0 }, /* head "/srv/d" */
		{ "/srv/ez", 1, 0 }, /* head "/srv/e" */
		{ "/srv/fz", 1, 1 },
		{ "/srv/www/site/index.html", 0, 0 },
		{ NULL, 0, 0 },
	};
	static const char *const w[] = { "-/srv/*", "+/srv/www/sit?/index.html", "+/srv/d[ab]/x",
		"+/srv/e\\*/y", NULL };
	struct pathfilter f;

	rules(&f, w);
	expect(&f, v);
	pathfilter_release(&f);
}
END_TEST

START_TEST(minimize_preset)
{
	static const struct verdict v[] = {
		{ "/usr/share/doc/bash/README.gz", 0, 1 },
		{ "/usr/share/doc/bash/copyright", 0, 0 },
		{ "/usr/share/info/bash.info.gz", 0, 1 },
		{ "/usr/share/lintian/overrides/bash", 0, 1 },
		{ "/usr/share/man/man8/ls.8.gz", 0, 1 },
		{ "/usr/share/man/man1/ls.1.gz", 0, 0 }, /* recipe's */
		{ "/usr/share/zoneinfo/UTC", 0, 1 },
		{ "/usr/share/locale/fr/LC_MESSAGES/x.mo", 0, 1 },
		{ "/usr/share/locale/de/LC_MESSAGES/x.mo", 0, 0 },
		{ "/usr/share/locale/de_AT/LC_MESSAGES/x.mo", 0, 0 },
		{ "/usr/share/locale/pt_BR/LC_MESSAGES/x.mo", 0, 0 },
		{ "/usr/share/locale/pt/LC_MESSAGES/x.mo", 0, 1 },
		{ "/usr/share/locale/dsb/LC_MESSAGES/x.mo", 0, 1 },
		{ "/usr/share/locale/locale.alias", 0, 0 },
		{ "/usr/bin/bash", 0, 0 },
		{ NULL, 0, 0 },
	};
	struct strv none = { 0 }, locales = { 0 }, ex = { 0 }, in = { 0 };
	struct pathfilter f = { 0 };

	strv_push(&locales, "pt_BR");
	strv_push(&locales, "de");
	strv_push(&ex, "/usr/share/zoneinfo/*");
	strv_push(&in, "/usr/share/man/man1/*");
	pathfilter_build(&f, 1, &locales, &ex, &in);
	expect(&f, v);
	pathfilter_release(&f);
	pathfilter_build(&f, 0, &locales, &none, &none);
	ck_assert_uint_eq(f.n, 0);
	pathfilter_release(&f);
	strv_release(&locales);
	strv_release(&ex);
	strv_release(&in);
}
END_TEST

START_TEST(bad_globs)
{
	static const char *const bad[] = { "", "usr/share/doc/*", "/usr/share/doc/", "/a\\",
		"/usr/[abc", "/usr/\nx", "/usr/[!]", NULL };
	static const char *const good[] = { "/usr/share/doc/*", "*.mo", "?usr", "/", "[/]usr",
		"/usr/[]]x", "/usr/[!a]x", "/usr/\\[x", "/usr/[[:digit:]]x", "/usr/[a\\]]", NULL };
	char *huge = xmalloc(5000);
	const char *why;
	size_t i;

	for (i = 0; bad[i]; i++) {
		why = NULL;
		ck_assert_msg(pathfilter_check_glob(bad[i], &why) == -EINVAL, "'%s' accepted", bad[i]);
		ck_assert_ptr_nonnull(why);
	}
	for (i = 0; good[i]; i++)
		ck_assert_msg(pathfilter_check_glob(good[i], &why) == 0, "'%s': %s", good[i], why);
	memset(huge, 'a', 4999);
	huge[0] = '/';
	huge[4999] = 0;
	ck_assert_int_eq(pathfilter_check_glob(huge, &why), -EINVAL);
	free(huge);
}
END_TEST

START_TEST(locale_names)
{
	static const char *const good[] = { "en", "pt_BR", "sr@latin", "ca@valencia", "C", NULL };
	static const char *const bad[] = { "", "en/*", "*", "_x", "e n", "de[", "../x",
		"abcdefghijklmnopqrstuvwxyzabcdefg", NULL };
	const char *why;
	size_t i;

	for (i = 0; good[i]; i++)
		ck_assert_msg(pathfilter_check_locale(good[i], &why) == 0, "'%s': %s", good[i], why);
	for (i = 0; bad[i]; i++)
		ck_assert_msg(pathfilter_check_locale(bad[i], &why) == -EINVAL, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(dpkg_cfg_fragment)
{
	static const char *const w[] = { "-/usr/share/doc/*", "+/usr/share/doc/*/copyright", NULL };
	struct pathfilter f;
	struct buf b = { 0 };
	const char *body;

	rules(&f, w);
	pathfilter_format_dpkg_cfg(&f, &b);
	body = strstr(b.p, "path-");
	ck_assert_ptr_nonnull(body);
	ck_assert_str_eq(body, "path-exclude=/usr/share/doc/*\npath-include=/usr/share/doc/*/copyright\n");
	ck_assert_int_eq(b.p[0], '#');
	buf_release(&b);
	pathfilter_release(&f);
}
END_TEST

START_TEST(counts)
{
	struct pathfilter_count c = { 0 };

	pathfilter_count_add(&c, 1, 0);
	pathfilter_count_add(&c, 0, 100);
	pathfilter_count_add(&c, 0, 0);
	ck_assert_uint_eq(c.dirs, 1);
	ck_assert_uint_eq(c.files, 2);
	ck_assert_uint_eq(c.bytes, 100);
}
END_TEST

/* A hostile package's longest path against many wildcards: glibc's fnmatch stays polynomial. */
START_TEST(no_blowup_on_long_paths)
{
	static const char *const w[] = { "-/*a*a*a*a*a*a*b", "-/*?*?*?*?*?*?*b", "+/*[a]*[a]*b",
		NULL };
	char *path = xmalloc(4096);
	struct pathfilter f;

	memset(path, 'a', 4095);
	path[0] = '/';
	path[4095] = 0;
	rules(&f, w);
	ck_assert_int_eq(pathfilter_skips(&f, path, 0), 0);
	ck_assert_int_eq(pathfilter_skips(&f, path, 1), 0);
	pathfilter_release(&f);
	free(path);
}
END_TEST

Suite *pathfilter_suite(void)
{
	Suite *s = suite_create("pathfilter");
	TCase *tc = tcase_create("pathfilter");

	tcase_add_test(tc, no_rules_keep_everything);
	tcase_add_test(tc, globs_as_fnmatch_without_flags);
	tcase_add_test(tc, last_match_decides);
	tcase_add_test(tc, include_below_exclude_keeps_directories);
	tcase_add_test(tc, literal_head_stops_at_any_wildcard);
	tcase_add_test(tc, minimize_preset);
	tcase_add_test(tc, bad_globs);
	tcase_add_test(tc, locale_names);
	tcase_add_test(tc, dpkg_cfg_fragment);
	tcase_add_test(tc, counts);
	tcase_add_test(tc, no_blowup_on_long_paths);
	suite_add_tcase(s, tc);
	return s;
}
