#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/str.h"
#include "repo/sources.h"
#include "repo/sources_internal.h"

START_TEST(dearmor_decodes)
{
	/* "hello world!" in base64, with armor headers and a checksum line. */
	const char *text = "junk\n-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: x\n\n"
			   "aGVsbG8g\nd29ybGQh\n=abcd\n-----END PGP PUBLIC KEY BLOCK-----\n";
	struct buf b = { 0 };

	ck_assert_int_eq(sources_dearmor(text, &b), 0);
	ck_assert_uint_eq(b.len, 12);
	ck_assert(!memcmp(b.p, "hello world!", 12));
	buf_release(&b);
}
END_TEST

START_TEST(dearmor_refuses_garbage)
{
	struct buf b = { 0 };

	ck_assert_int_eq(sources_dearmor("not a key", &b), -MKI_E_PARSE);
	ck_assert_int_eq(sources_dearmor("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\naGk=\n", &b),
			 -MKI_E_PARSE);
	buf_release(&b);
}
END_TEST

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/*
 * Native tools' twins from the host's apt sources: the entries that serve the host arch, with a
 * key; an armhf-only entry and a trusted=yes one are left out. No entry at all is no error.
 */
START_TEST(twins_from_host_entries_with_a_key)
{
	char dir[] = "/tmp/mki-unit-sources.XXXXXX", file[] = "x.cfg", suite[] = "bookworm";
	struct recipe r = { .file = file, .suite = suite };
	struct settings st = { 0 };
	struct sources s;
	char *key, *list;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	st.apt_root = st.work_dir = dir;
	key = xasprintf("%s/key.gpg", dir);
	list = xasprintf("%s/sources.list", dir);
	ck_assert_int_eq(sources_load_twins(&s, &r, &st, "amd64"), 0);
	ck_assert_uint_eq(s.n, 0);
	write_file(key, "binary");
	f = fopen(list, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "deb [arch=armhf signed-by=%s] http://127.0.0.1:1/armhf bookworm main\n"
		   "deb [trusted=yes] http://127.0.0.1:2/unsigned bookworm main\n"
		   "deb-src [signed-by=%s] http://127.0.0.1:3/src bookworm main\n"
		   "deb [signed-by=%s] http://127.0.0.1:4/debian/ bookworm main contrib\n",
		key, key, key);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(sources_load_twins(&s, &r, &st, "amd64"), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.v[0].uri, "http://127.0.0.1:4/debian");
	ck_assert_str_eq(s.v[0].suite, "bookworm");
	ck_assert_uint_eq(s.v[0].archs.n, 1);
	ck_assert_str_eq(s.v[0].archs.v[0], "amd64");
	ck_assert_uint_eq(s.v[0].components.n, 2);
	ck_assert_str_eq(s.v[0].keyring, key);
	ck_assert_int_eq(s.v[0].trusted, 0);
	sources_release(&s);
	unlink(list);
	unlink(key);
	rmdir(dir);
	free(list);
	free(key);
}
END_TEST

Suite *sources_suite(void)
{
	Suite *s = suite_create("sources");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, dearmor_decodes);
	tcase_add_test(tc, dearmor_refuses_garbage);
	tcase_add_test(tc, twins_from_host_entries_with_a_key);
	suite_add_tcase(s, tc);
	return s;
}
