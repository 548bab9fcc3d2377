/* A lock's sources back into --source specifications, with real keys made by gpg once. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/readfile.h"
#include "lib/str.h"
#include "recipe/recipe.h"
#include "repo/locksrc.h"

#define SHA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEAD "format: 1\nrecipe: " SHA "\narchitectures: armhf\n"
#define URI "http://127.0.0.1/debian"
#define DATE " date=Sat, 10 Jun 2023 08:56:02 UTC\n"

static char dir[] = "/tmp/mki-unit-locksrc.XXXXXX";
static char *fpr_a, *fpr_b;

/* Key A in a.gpg (the recipe's keyring), key B in the host's apt/trusted.gpg.d/b.gpg. */
static const char keys_sh[] =
	"set -e; cd %s; export GNUPGHOME=$PWD/home; mkdir -m 700 home; mkdir -p apt/trusted.gpg.d;"
	"for k in a b; do gpg --batch --quiet --passphrase '' --quick-gen-key "
	"\"mkimage unit $k <$k@example.org>\" ed25519 sign never 2>/dev/null;"
	"gpg --batch --with-colons --list-keys $k@example.org 2>/dev/null | awk -F: '/^fpr/ "
	"{print $10; exit}' >$k.fpr; done; gpg --batch --export a@example.org >a.gpg;"
	"gpg --batch --export b@example.org >apt/trusted.gpg.d/b.gpg; gpgconf --kill gpg-agent";

static char *read_line(const char *name)
{
	struct buf b = { 0 };
	char *p = xasprintf("%s/%s", dir, name);

	ck_assert_int_eq(readfile_read(p, 4096, &b, NULL), 0);
	free(p);
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
}

static void keys_teardown(void)
{
	char *cmd = xasprintf("rm -rf %s", dir);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(fpr_a);
	free(fpr_b);
}

/* locksrc_specs() on a lock with `sources` (whole "source: ..." lines) and a recipe whose one
 * source has the keyring a.gpg; the host's apt root is DIR/apt. */
static int specs_of(const char *sources, struct strv *specs)
{
	struct recipe_source src = { 0 };
	struct recipe r = { 0 };
	char *lock = xasprintf("%s/lock", dir), *apt = xasprintf("%s/apt", dir);
	FILE *f = fopen(lock, "w");
	int fd = open("/dev/null", O_WRONLY), ret;

	dup2(fd, 2);
	close(fd);
	ck_assert_ptr_nonnull(f);
	fprintf(f, HEAD "%s", sources);
	fclose(f);
	src.keyring = xasprintf("%s/a.gpg", dir);
	r.sources = &src;
	r.n_sources = 1;
	ret = locksrc_specs(lock, &r, apt, specs);
	unlink(lock);
	free(src.keyring);
	free(lock);
	free(apt);
	return ret;
}

static char *source_line(const char *comps, const char *keys)
{
	return xasprintf("source: " URI " bookworm sha256=" SHA "%s%s%s%s" DATE,
			 comps ? " components=" : "", comps ? comps : "", keys ? " keys=" : "",
			 keys ? keys : "");
}

/* The recipe's keyring first, then the host's trusted.gpg.d. */
START_TEST(keyring_found)
{
	struct strv specs = { 0 };
	char *line = source_line("main,contrib", fpr_a), *want;

	ck_assert_int_eq(specs_of(line, &specs), 0);
	ck_assert_uint_eq(specs.n, 1);
	want = xasprintf(URI " bookworm main contrib signed-by=%s/a.gpg", dir);
	ck_assert_str_eq(specs.v[0], want);
	free(want);
	free(line);
	line = source_line("main", fpr_b);
	ck_assert_int_eq(specs_of(line, &specs), 0);
	ck_assert_uint_eq(specs.n, 2);
	want = xasprintf(URI " bookworm main signed-by=%s/apt/trusted.gpg.d/b.gpg", dir);
	ck_assert_str_eq(specs.v[1], want);
	free(want);
	free(line);
	strv_release(&specs);
}
END_TEST

/* A lock that names no key recorded a trusted source; an older lock names no components. */
START_TEST(trusted_and_older_lock)
{
	struct strv specs = { 0 };
	char *line = source_line("main", NULL);

	ck_assert_int_eq(specs_of(line, &specs), 0);
	ck_assert_uint_eq(specs.n, 1);
	ck_assert_str_eq(specs.v[0], URI " bookworm main trusted=yes");
	free(line);
	strv_release(&specs);
	line = source_line(NULL, fpr_a);
	ck_assert_int_eq(specs_of(line, &specs), 0);
	ck_assert_uint_eq(specs.n, 0);
	free(line);
}
END_TEST

/*
 * Keys split over two keyrings, each holding one: -MKI_E_SOURCE, nothing appended. Every keyring
 * of the machine's /usr/share/keyrings is read first: this takes a few seconds.
 */
START_TEST(key_not_found)
{
	struct strv specs = { 0 };
	char *keys = xasprintf("%s,%s", fpr_a, fpr_b), *line = source_line("main", keys);

	ck_assert_int_eq(specs_of(line, &specs), -MKI_E_SOURCE);
	ck_assert_uint_eq(specs.n, 0);
	free(line);
	free(keys);
}
END_TEST

START_TEST(bad_lock)
{
	struct strv specs = { 0 };
	struct recipe r = { 0 };
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	close(fd);
	ck_assert_int_eq(locksrc_specs("/nonexistent/lock", &r, "/nonexistent", &specs),
			 -MKI_E_LOCK);
	ck_assert_int_eq(specs_of("source: " URI "\n", &specs), -MKI_E_LOCK);
	ck_assert_uint_eq(specs.n, 0);
}
END_TEST

Suite *locksrc_suite(void)
{
	Suite *s = suite_create("locksrc");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30); /* gpg runs once per keyring searched */
	tcase_add_unchecked_fixture(tc, keys_setup, keys_teardown);
	tcase_add_test(tc, keyring_found);
	tcase_add_test(tc, trusted_and_older_lock);
	tcase_add_test(tc, key_not_found);
	tcase_add_test(tc, bad_lock);
	suite_add_tcase(s, tc);
	return s;
}
