#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "debian/dep5.h"

#define FORMAT "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"

/* The expression of copyright text `text` (NULL: NOASSERTION), as a new string. */
static char *expr(const char *text, struct dep5_refs *refs)
{
	return dep5_expression(text, strlen(text), "/usr/share/doc/t/copyright", refs);
}

/* The expression of a file whose only Files paragraph has License `line`. */
static char *line_expr(const char *line)
{
	struct dep5_refs refs = { 0 };
	char *text = xasprintf(FORMAT "\nFiles: *\nCopyright: 2024 Someone\nLicense: %s\n", line);
	char *e = expr(text, &refs);

	dep5_refs_release(&refs);
	free(text);
	return e;
}

static void check_line(const char *line, const char *want)
{
	char *e = line_expr(line);

	if (!want)
		ck_assert_msg(!e, "'%s' gave '%s', expected NOASSERTION", line, e);
	else
		ck_assert_msg(e && !strcmp(e, want), "'%s' gave '%s', expected '%s'", line,
			      e ? e : "NOASSERTION", want);
	free(e);
}

/* zlib1g's copyright, abridged: one Files paragraph, a standard name, the text inline. */
START_TEST(standard_name)
{
	struct dep5_refs refs = { 0 };
	char *e = expr(FORMAT "Upstream-Name: zlib\nSource: https://zlib.net/\n\n"
			      "Files: *\nCopyright: 1995-2022 Jean-loup Gailly and Mark Adler\n"
			      "License: Zlib\n This software is provided 'as-is', without any\n"
			      " express or implied warranty.\n .\n Permission is granted...\n",
		       &refs);

	ck_assert_str_eq(e, "Zlib");
	ck_assert_uint_eq(refs.n, 0);
	free(e);
}
END_TEST

/* The names copyright-format 1.0 defines, their versions and "+", to SPDX identifiers. */
START_TEST(short_names)
{
	check_line("GPL-2+", "GPL-2.0-or-later");
	check_line("GPL-2", "GPL-2.0-only");
	check_line("GPL-2.0+", "GPL-2.0-or-later");
	check_line("GPL", "GPL-1.0-only");
	check_line("LGPL-2.1+", "LGPL-2.1-or-later");
	check_line("lgpl-3", "LGPL-3.0-only");
	check_line("Expat", "MIT");
	check_line("BSD-3-clause", "BSD-3-Clause");
	check_line("BSD-3-Clause", "BSD-3-Clause");
	check_line("Apache-2", "Apache-2.0");
	check_line("Apache-2.0", "Apache-2.0");
	check_line("MPL-1.1+", "MPL-1.1+");
	check_line("CC0-1.0", "CC0-1.0");
	check_line("ZLIB", "Zlib");
	check_line("GFDL-NIV-1.3+", "GFDL-1.3-no-invariants-or-later");
	check_line("Artistic", "Artistic-1.0");
	check_line("Perl", "GPL-1.0-or-later OR Artistic-1.0");
	check_line("LPPL-1.3c", "LPPL-1.3c");
	/* not standard: "MIT" has too many variants, "GPLv3+" is no DEP-5 spelling */
	check_line("MIT", "LicenseRef-MIT");
	check_line("GPLv3+", "LicenseRef-GPLv3-plus");
	check_line("ISC+IBM", "LicenseRef-ISC-plus-IBM");
	check_line("GPL-2.1", "LicenseRef-GPL-2.1");
}
END_TEST

/* and binds tighter than or; a comma closes a group; duplicates fold. */
START_TEST(operators)
{
	check_line("GPL-1+ or Artistic", "GPL-1.0-or-later OR Artistic-1.0");
	check_line("GPL-2+ and BSD-3-clause", "GPL-2.0-or-later AND BSD-3-Clause");
	check_line("Expat or GPL-2+ and ISC", "MIT OR (GPL-2.0-or-later AND ISC)");
	check_line("Expat or GPL-2+, and ISC", "(MIT OR GPL-2.0-or-later) AND ISC");
	check_line("GPL-2+ or Artistic-2.0, and BSD-3-clause",
		   "(GPL-2.0-or-later OR Artistic-2.0) AND BSD-3-Clause");
	check_line("Zlib and Expat, or ISC", "(Zlib AND MIT) OR ISC");
	check_line("GPL-1+ OR Artistic", "GPL-1.0-or-later OR Artistic-1.0");
	check_line("Expat or Expat or ISC", "MIT OR ISC");
	check_line("Perl or Artistic", "GPL-1.0-or-later OR Artistic-1.0");
}
END_TEST

START_TEST(exceptions)
{
	struct dep5_refs refs = { 0 };
	char *e;

	check_line("GPL-2 with Linux-syscall-note exception",
		   "GPL-2.0-only WITH Linux-syscall-note");
	check_line("GPL-2+ with Font exception or Expat",
		   "GPL-2.0-or-later WITH Font-exception-2.0 OR MIT");
	/* no SPDX exception: the whole "name with exception" is the file's own licence */
	e = expr(FORMAT "\nFiles: *\nCopyright: x\nLicense: GPL-2+ with OpenSSL exception\n\n"
			"License: GPL-2+ with OpenSSL exception\n This program is free...\n"
			" .\n In addition, as a special exception...\n",
		 &refs);
	ck_assert_str_eq(e, "LicenseRef-GPL-2-plus-with-OpenSSL-exception");
	ck_assert_uint_eq(refs.n, 1);
	ck_assert_str_eq(refs.v[0].name, "GPL-2+ with OpenSSL exception");
	ck_assert_str_eq(refs.v[0].text,
			 "This program is free...\n\nIn addition, as a special exception...");
	free(e);
	dep5_refs_release(&refs);
	/* an exception needs its keyword and the word "exception" */
	check_line("GPL-2+ with", NULL);
	check_line("GPL-2+ with exception", NULL);
	check_line("GPL-2+ with OpenSSL", NULL);
}
END_TEST

/*
 * perl's copyright in miniature: many Files paragraphs, repeated licences, a comma group and
 * names only the file defines (one with a stand-alone paragraph, one without any text).
 */
START_TEST(files_paragraphs_combine)
{
	struct dep5_refs refs = { 0 };
	char *e = expr(FORMAT "Upstream-Name: perl\n\n"
			      "Files: *\nCopyright: Larry Wall\nLicense: GPL-1+ or Artistic\n\n"
			      "Files: regcomp.c\nCopyright: Henry Spencer\n"
			      "License: REGCOMP, and GPL-1+ or Artistic\n\n"
			      "Files: lib/unicore/*\nCopyright: Unicode, Inc.\nLicense: Unicode\n\n"
			      "Files: cpan/x/*\nCopyright: y\nLicense: GPL-1+ or Artistic\n\n"
			      "Files: cpan/z/*\nCopyright: y\nLicense: Artistic-dist\n\n"
			      "License: REGCOMP\n Copyright (c) 1986 by University of Toronto.\n\n"
			      "License: Unicode\n Permission is hereby granted...\n",
		       &refs);

	ck_assert_str_eq(e, "(GPL-1.0-or-later OR Artistic-1.0) AND LicenseRef-REGCOMP AND "
			    "LicenseRef-Unicode AND LicenseRef-Artistic-dist");
	ck_assert_uint_eq(refs.n, 3);
	ck_assert_str_eq(refs.v[0].id, "LicenseRef-REGCOMP");
	ck_assert_str_eq(refs.v[0].text, "Copyright (c) 1986 by University of Toronto.");
	ck_assert_str_eq(refs.v[0].origin, "/usr/share/doc/t/copyright");
	ck_assert_ptr_nonnull(strstr(refs.v[2].text, "without giving its text"));
	free(e);
	dep5_refs_release(&refs);
}
END_TEST

/* LicenseRefs are per document: the same name and text is one entry, another text another id. */
START_TEST(refs_shared_by_packages)
{
	struct dep5_refs refs = { 0 };
	const char *a = FORMAT "\nFiles: *\nCopyright: x\nLicense: Beerware\n wrote this file.\n";
	const char *b = FORMAT "\nFiles: *\nCopyright: x\nLicense: beerware\n wrote this file.\n";
	const char *c = FORMAT "\nFiles: *\nCopyright: x\nLicense: Beerware\n other text.\n";
	/* public-domain is a standard name: one entry whatever each file says about it */
	const char *pd = FORMAT "\nFiles: *\nCopyright: none\nLicense: public-domain\n Said so.\n";
	const char *pd2 = FORMAT "\nFiles: *\nCopyright: none\nLicense: public-domain\n";
	const char *const texts[] = { a, b, c, pd, pd2 };
	const char *const want[] = { "LicenseRef-Beerware", "LicenseRef-Beerware",
				     "LicenseRef-Beerware-2", "LicenseRef-public-domain",
				     "LicenseRef-public-domain" };
	size_t i;

	for (i = 0; i < 5; i++) {
		char *e = expr(texts[i], &refs);

		ck_assert_str_eq(e, want[i]);
		free(e);
	}
	ck_assert_uint_eq(refs.n, 3);
	ck_assert_ptr_nonnull(strstr(refs.v[2].text, "Public domain"));
	dep5_refs_release(&refs);
}
END_TEST

/* Free-form copyright files (libc6's, hello's) and other formats declare nothing. */
START_TEST(not_machine_readable)
{
	struct dep5_refs refs = { 0 };
	static const char *const texts[] = {
		"This is the Debian prepackaged version of the GNU C Library version 2.36.\n\n"
		"It was put together by the GNU Libc Maintainers <debian-glibc@lists.debian.org>\n",
		"Format-Specification: "
		"http://svn.debian.org/wsvn/dep/web/deps/dep5.mdwn?rev=135\n\n"
		"Files: *\nCopyright: x\nLicense: GPL-2+\n",
		"Format: http://dep.debian.net/deps/dep5\n\n"
		"Files: *\nCopyright: x\nLicense: GPL-2+\n",
		"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/2.0/\n\n"
		"Files: *\nCopyright: x\nLicense: GPL-2+\n",
		"",
		"\n\n\n",
		FORMAT,
		FORMAT "\nLicense: GPL-2+\n text\n",
		"Upstream-Name: x\n\nFormat: https://www.debian.org/doc/packaging-manuals/"
		"copyright-format/1.0/\n\nFiles: *\nCopyright: x\nLicense: GPL-2+\n",
	};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char *e = expr(texts[i], &refs);

		ck_assert_msg(!e, "text %zu gave '%s'", i, e);
	}
	ck_assert_uint_eq(refs.n, 0);
}
END_TEST

/* The Format line need not come first; http and a missing final '/' are the same format. */
START_TEST(format_variants)
{
	struct dep5_refs refs = { 0 };
	static const char *const texts[] = {
		"Format: http://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n"
		"Files: *\nCopyright: x\nLicense: ISC\n",
		"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0\n\n"
		"Files: *\nCopyright: x\nLicense: ISC\n",
		"# a comment\n\nUpstream-Name: x\n" FORMAT
		"\nFiles: *\nCopyright: x\nLicense: ISC\n",
	};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char *e = expr(texts[i], &refs);

		ck_assert_msg(e && !strcmp(e, "ISC"), "text %zu gave '%s'", i, e);
		free(e);
	}
}
END_TEST

/* One paragraph that cannot be read makes the whole file NOASSERTION, and adds no ref. */
START_TEST(unparseable)
{
	struct dep5_refs refs = { 0 };
	char *e;

	check_line("BSD-3-clause and/or GPL-3+", NULL); /* findutils */
	check_line("The main library is licensed under GNU Lesser", NULL);
	check_line("GPL-2+ or", NULL);
	check_line("or GPL-2+", NULL);
	check_line("GPL-2+ and and MIT", NULL);
	check_line("(GPL-2+ or Expat) and ISC", NULL);
	check_line("GPL-2+, Expat", NULL);
	check_line("GPL-2+,", NULL);
	check_line(",", NULL);
	e = expr(FORMAT "\nFiles: a\nCopyright: x\nLicense: MyOwn\n text\n\n"
			"Files: b\nCopyright: x\n\n",
		 &refs);
	ck_assert_ptr_null(e);
	e = expr(FORMAT "\nFiles: a\nCopyright: x\nLicense: MyOwn\n\nComment: stray\n", &refs);
	ck_assert_ptr_null(e);
	e = expr(FORMAT "\nFiles: a\nCopyright: x\nLicense:\n text without a name\n", &refs);
	ck_assert_ptr_null(e);
	e = expr(FORMAT "\nFiles: a\nLicense: ISC\nnot a field\n", &refs);
	ck_assert_ptr_null(e);
	e = expr(FORMAT "\nFiles: a\nLicense: ISC\nLicense: MIT\n", &refs);
	ck_assert_ptr_null(e);
	ck_assert_uint_eq(refs.n, 0); /* MyOwn was seen, but its file declared nothing */
}
END_TEST

static int valid_idstring(const char *id)
{
	static const char idchars[] = "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-";

	if (strncmp(id, "LicenseRef-", 11) || !id[11])
		return 0;
	return strspn(id + 11, idchars) == strlen(id + 11);
}

/* Names no SPDX id could hold still make valid LicenseRefs; their text may be any bytes. */
START_TEST(weird_names)
{
	struct dep5_refs refs = { 0 };
	char *e = expr(FORMAT "\nFiles: *\nCopyright: x\nLicense: Lizenz-\xc3\xa4nderbar and +++ "
			      "and *** and \xff\xfe and \"quoted\" and a/b\\c and "
			      "LicenseRef-x and NOASSERTION\n \xe9t\xe9 \x01\n",
		       &refs);
	size_t i;

	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e, "LicenseRef-Lizenz-nderbar AND LicenseRef-plus-plus-plus AND "
			    "LicenseRef-unnamed AND LicenseRef-unnamed-2 AND LicenseRef-quoted AND "
			    "LicenseRef-a-b-c AND LicenseRef-LicenseRef-x AND "
			    "LicenseRef-NOASSERTION");
	for (i = 0; i < refs.n; i++)
		ck_assert_msg(valid_idstring(refs.v[i].id), "bad id '%s'", refs.v[i].id);
	free(e);
	/* a name far longer than any licence's is cut to a bounded id */
	{
		char line[600];

		memset(line, 'x', sizeof(line) - 1);
		line[sizeof(line) - 1] = 0;
		e = line_expr(line);
		ck_assert_ptr_nonnull(e);
		ck_assert_uint_le(strlen(e), 11 + 100);
		free(e);
	}
	dep5_refs_release(&refs);
}
END_TEST

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A file built to cost time or memory is refused within bounds, quickly. */
START_TEST(hostile_sizes)
{
	struct dep5_refs refs = { 0 };
	struct buf b = { 0 };
	double t0 = now();
	size_t i;
	char *e;

	/* thousands of Files paragraphs, each with its own licence */
	buf_adds(&b, FORMAT "\n");
	for (i = 0; b.len < DEP5_MAX_SIZE - 64; i++)
		buf_addf(&b, "Files: f%zu\nCopyright: x\nLicense: L%zu\n\n", i, i);
	e = dep5_expression(b.p, b.len, "big", &refs);
	ck_assert_ptr_null(e);
	/* fewer paragraphs, each line as long as a line may be with distinct names */
	b.len = 0;
	buf_adds(&b, FORMAT "\n");
	for (i = 0; i < 200; i++) {
		size_t k;

		buf_addf(&b, "Files: f%zu\nCopyright: x\nLicense: N%zu-0", i, i);
		for (k = 1; k < 128; k++)
			buf_addf(&b, " and N%zu-%zu", i, k);
		buf_adds(&b, "\n\n");
	}
	e = dep5_expression(b.p, b.len, "wide", &refs);
	ck_assert_ptr_null(e);
	/* one line beyond the tokens a License line may have */
	b.len = 0;
	buf_adds(&b, FORMAT "\nFiles: *\nCopyright: x\nLicense: ISC");
	for (i = 0; i < 300; i++)
		buf_adds(&b, " and ISC");
	e = dep5_expression(b.p, b.len, "long", &refs);
	ck_assert_ptr_null(e);
	/* a NUL byte */
	e = dep5_expression(FORMAT "\nFiles: *\nCopyright: x\nLicense: ISC\0\n",
			    sizeof(FORMAT "\nFiles: *\nCopyright: x\nLicense: ISC\0\n") - 1, "nul",
			    &refs);
	ck_assert_ptr_null(e);
	ck_assert_uint_eq(refs.n, 0);
	ck_assert_msg(now() - t0 < 5, "hostile files took %.1f s", now() - t0);
	buf_release(&b);
}
END_TEST

/* ---- reading from a hostile tree ---- */

static char top[64], tree[96];
static int rootfd = -1;

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ck_assert_int_eq(system(cmd), 0);
}

static void tree_setup(void)
{
	snprintf(top, sizeof(top), "/tmp/mki-dep5-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(tree, sizeof(tree), "%s/tree", top);
	run("mkdir -p %1$s/usr/share/doc/zlib1g %1$s/usr/share/doc/fifo %1$s/usr/share/doc/big "
	    "%1$s/usr/share/doc/dir/copyright", tree);
	run("mkdir -p %1$s/outside/doc/escape && echo host >%1$s/outside/doc/escape/copyright",
	    top);
	put("usr/share/doc/zlib1g/copyright", FORMAT "\nFiles: *\nCopyright: x\nLicense: Zlib\n");
	/* Multi-Arch: a library's doc directory is a link to its source's first package's */
	run("ln -s zlib1g %s/usr/share/doc/zlib1g-dev", tree);
	run("ln -s /usr/share/doc/zlib1g %s/usr/share/doc/libz-abs", tree);
	run("ln -s ../../../../outside/doc/escape %s/usr/share/doc/escape", tree);
	run("ln -s /etc %s/usr/share/doc/etc", tree);
	run("mkfifo %s/usr/share/doc/fifo/copyright", tree);
	run("truncate -s 5M %s/usr/share/doc/big/copyright", tree);
	rootfd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rootfd, 0);
}

static void tree_teardown(void)
{
	close(rootfd);
	run("rm -rf %s", top);
}

START_TEST(read_from_tree)
{
	struct buf b = { 0 };
	const char *kind = NULL;

	ck_assert_int_eq(dep5_read(rootfd, "zlib1g", &b, NULL), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "License: Zlib"));
	ck_assert_int_eq(dep5_read(rootfd, "zlib1g-dev", &b, NULL), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "License: Zlib"));
	ck_assert_int_eq(dep5_read(rootfd, "libz-abs", &b, NULL), 0); /* "/" is the tree's root */
	ck_assert_ptr_nonnull(strstr(b.p, "License: Zlib"));
	ck_assert_int_eq(dep5_read(rootfd, "escape", &b, NULL), -ENOENT); /* never the host's file */
	ck_assert_int_eq(dep5_read(rootfd, "etc", &b, NULL), -ENOENT);
	ck_assert_int_eq(dep5_read(rootfd, "missing", &b, NULL), -ENOENT);
	ck_assert_int_eq(dep5_read(rootfd, "fifo", &b, &kind), -EINVAL); /* at once, no writer awaited */
	ck_assert_str_eq(kind, "a FIFO");
	ck_assert_int_eq(dep5_read(rootfd, "dir", &b, NULL), -EINVAL);
	ck_assert_int_eq(dep5_read(rootfd, "big", &b, NULL), -EFBIG);
	buf_release(&b);
}
END_TEST

Suite *dep5_suite(void)
{
	Suite *s = suite_create("dep5");
	TCase *tc = tcase_create("dep5");
	TCase *tt = tcase_create("dep5-tree");

	tcase_add_test(tc, standard_name);
	tcase_add_test(tc, short_names);
	tcase_add_test(tc, operators);
	tcase_add_test(tc, exceptions);
	tcase_add_test(tc, files_paragraphs_combine);
	tcase_add_test(tc, refs_shared_by_packages);
	tcase_add_test(tc, not_machine_readable);
	tcase_add_test(tc, format_variants);
	tcase_add_test(tc, unparseable);
	tcase_add_test(tc, weird_names);
	tcase_add_test(tc, hostile_sizes);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tt, tree_setup, tree_teardown);
	tcase_add_test(tt, read_from_tree);
	suite_add_tcase(s, tt);
	return s;
}
