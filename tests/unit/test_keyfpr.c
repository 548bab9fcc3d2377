/* Real keys made by gpg in a throwaway GNUPGHOME, once for the suite. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/readfile.h"
#include "lib/str.h"
#include "repo/keyfpr.h"

static char dir[] = "/tmp/mki-unit-keyfpr.XXXXXX";
static char *fpr_a, *fpr_b, *sub_a;

/*
 * Keys A (with an encryption subkey) and B: a.gpg, b.gpg, ab.gpg (both), a.asc (armored), and
 * each primary fingerprint in a.fpr, b.fpr, A's subkey's in a.sub.
 */
static const char keys_sh[] =
	"set -e; cd %s; export GNUPGHOME=$PWD/home; mkdir -m 700 home;"
	"for k in a b; do gpg --batch --quiet --passphrase '' --quick-gen-key "
	"\"mkimage unit $k <$k@example.org>\" ed25519 sign never 2>/dev/null;"
	"gpg --batch --with-colons --list-keys $k@example.org 2>/dev/null |"
	"awk -F: '/^fpr/ {print $10; exit}' >$k.fpr; gpg --batch --export $k@example.org >$k.gpg; done;"
	"gpg --batch --quiet --passphrase '' --quick-add-key $(cat a.fpr) cv25519 encr never;"
	"gpg --batch --with-colons --list-keys a@example.org 2>/dev/null |"
	"awk -F: '/^fpr/ {n++} n == 2 {print $10; exit}' >a.sub; gpg --batch --export a@example.org >a.gpg;"
	"gpg --batch --armor --export a@example.org >a.asc; cat a.gpg b.gpg >ab.gpg;"
	"printf 'not a key\\n' >text.gpg; : >empty.gpg; gpgconf --kill gpg-agent";

static char *path(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static char *read_line(const char *name)
{
	struct buf b = { 0 };
	char *p = path(name);

	ck_assert_int_eq(readfile_read(p, 4096, &b, NULL), 0);
	free(p);
	ck_assert_uint_gt(b.len, 1);
	b.p[strcspn(b.p, "\n")] = '\0';
	return buf_detach(&b);
}

static void keys_setup(void)
{
	char *cmd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	cmd = xasprintf(keys_sh, dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	fpr_a = read_line("a.fpr");
	fpr_b = read_line("b.fpr");
	sub_a = read_line("a.sub");
	ck_assert_str_ne(fpr_a, sub_a);
}

static void keys_teardown(void)
{
	char *cmd = xasprintf("rm -rf %s", dir);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(fpr_a);
	free(fpr_b);
	free(sub_a);
}

static void quiet(void)
{
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	close(fd);
}

/* Primary fingerprints only (not the subkey's), upper case, sorted, appended after what was. */
START_TEST(list_primary_sorted)
{
	struct strv out = { 0 };
	char *ab = path("ab.gpg");
	int a_first = strcmp(fpr_a, fpr_b) < 0;

	strv_push(&out, "kept");
	ck_assert_int_eq(keyfpr_list(ab, &out), 0);
	ck_assert_uint_eq(out.n, 3);
	ck_assert_str_eq(out.v[0], "kept");
	ck_assert_str_eq(out.v[1], a_first ? fpr_a : fpr_b);
	ck_assert_str_eq(out.v[2], a_first ? fpr_b : fpr_a);
	ck_assert(!strv_contains(&out, sub_a));
	ck_assert_uint_eq(strlen(out.v[1]), 40);
	ck_assert_uint_eq(strspn(out.v[1], "0123456789ABCDEF"), 40);
	strv_release(&out);
	free(ab);
}
END_TEST

START_TEST(list_armored)
{
	struct strv out = { 0 };
	char *asc = path("a.asc");

	ck_assert_int_eq(keyfpr_list(asc, &out), 0);
	ck_assert_uint_eq(out.n, 1);
	ck_assert_str_eq(out.v[0], fpr_a);
	strv_release(&out);
	free(asc);
}
END_TEST

/* No key in the file, or no file: -MKI_E_SOURCE and nothing appended. */
static const char *const keyless[] = { "text.gpg", "empty.gpg", "missing.gpg", "home" };

START_TEST(list_keyless)
{
	struct strv out = { 0 };
	char *p = path(keyless[_i]);

	quiet();
	ck_assert_int_eq(keyfpr_list(p, &out), -MKI_E_SOURCE);
	ck_assert_uint_eq(out.n, 0);
	free(p);
}
END_TEST

/* The first candidate holding every wanted key; keyless or missing candidates are skipped. */
START_TEST(find_first_holding_all)
{
	struct strv want = { 0 }, cand = { 0 };

	strv_push_take(&cand, path("missing.gpg"));
	strv_push_take(&cand, path("text.gpg"));
	strv_push_take(&cand, path("b.gpg"));
	strv_push_take(&cand, path("a.gpg"));
	strv_push_take(&cand, path("ab.gpg"));
	strv_push(&want, fpr_a);
	ck_assert_int_eq(keyfpr_find(&want, &cand), 3);
	strv_push(&want, fpr_b);
	ck_assert_int_eq(keyfpr_find(&want, &cand), 4);
	strv_release(&want);
	strv_push(&want, sub_a); /* a subkey does not name a keyring's key */
	ck_assert_int_eq(keyfpr_find(&want, &cand), -1);
	strv_release(&want);
	strv_push(&want, "0123456789ABCDEF0123456789ABCDEF01234567");
	ck_assert_int_eq(keyfpr_find(&want, &cand), -1);
	strv_release(&want);
	strv_release(&cand);
}
END_TEST

Suite *keyfpr_suite(void)
{
	Suite *s = suite_create("keyfpr");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30); /* gpg runs; the machine may be busy */
	tcase_add_unchecked_fixture(tc, keys_setup, keys_teardown);
	tcase_add_test(tc, list_primary_sorted);
	tcase_add_test(tc, list_armored);
	tcase_add_loop_test(tc, list_keyless, 0, sizeof(keyless) / sizeof(keyless[0]));
	tcase_add_test(tc, find_first_holding_all);
	suite_add_tcase(s, tc);
	return s;
}
