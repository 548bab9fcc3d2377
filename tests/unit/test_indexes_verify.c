/*
 * indexes_verify_release with real gpgv on Releases signed at test time by throwaway keys: a
 * good signature, tampered text, the wrong keyring, trusted sources, Valid-Until, another
 * suite's Release, a rollback against the cached Release, malformed text and the size limit.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/settings.h"
#include "repo/indexes_ctx.h"

static char keys[64]; /* made once for the whole case: GNUPGHOME of "good" and "other" */

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;

	va_start(ap, fmt);
	cmd = xvasprintf(fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	free(cmd);
}

static void make_keys(void)
{
	static const char *const names[] = { "good", "other" };
	size_t i;

	snprintf(keys, sizeof(keys), "/tmp/mki-unit-verify-keys.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(keys));
	for (i = 0; i < 2; i++)
		sh("export GNUPGHOME='%s/%s'; mkdir -m 700 \"$GNUPGHOME\" && "
		   "gpg --batch --quiet --passphrase '' --quick-gen-key 'mkimage unit %s' ed25519 "
		   "sign 1d 2>/dev/null && gpg --batch --quiet --export >'%s/%s.gpg'",
		   keys, names[i], names[i], keys, names[i]);
}

static void remove_keys(void)
{
	sh("rm -rf '%s'", keys);
}

struct fx {
	char dir[64];
	struct settings st;
	struct source src;
	struct indexes_ctx c;
	struct rel r;
};

#define RELEASE(suite, extra)                                                                \
	"Origin: Debian\nSuite: " suite "\nCodename: " suite "\n"                            \
	"Date: Sat, 10 Jun 2023 08:46:48 UTC\n" extra "Architectures: armhf\n"               \
	"Components: main\nSHA256:\n"                                                        \
	" e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 0 "                   \
	"main/binary-armhf/Packages\n"

/* InRelease with `text`, clearsigned by key `signer` (NULL: a plain, unsigned Release). */
static void fx_init(struct fx *f, const char *text, const char *signer, const char *keyring)
{
	char *plain;
	FILE *out;

	memset(f, 0, sizeof(*f));
	log_set_level(LOG_QUIET);
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-verify.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	plain = xasprintf("%s/Release", f->dir);
	ck_assert_ptr_nonnull(out = fopen(plain, "w"));
	fputs(text, out);
	fclose(out);
	if (signer)
		sh("GNUPGHOME='%s/%s' gpg --batch --quiet --yes --clearsign -o '%s/InRelease' '%s'",
		   keys, signer, f->dir, plain);
	f->st.work_dir = xstrdup(f->dir);
	f->src.uri = xstrdup("http://127.0.0.1/debian");
	f->src.suite = xstrdup("bookworm");
	f->src.origin = xstrdup("test");
	f->src.keyring = keyring ? xasprintf("%s/%s.gpg", keys, keyring) : NULL;
	f->src.trusted = !keyring;
	f->c.st = &f->st;
	f->r.src = &f->src;
	f->r.inrelease = signer != NULL;
	f->r.signed_path = signer ? xasprintf("%s/InRelease", f->dir) : plain;
	f->r.cache_dir = xasprintf("%s/cache", f->dir);
	mkdir(f->r.cache_dir, 0755);
	if (signer)
		free(plain);
}

static void fx_release(struct fx *f)
{
	sh("rm -rf '%s'", f->dir);
	free(f->st.work_dir);
	free(f->src.uri);
	free(f->src.suite);
	free(f->src.origin);
	free(f->src.keyring);
	free(f->r.signed_path);
	free(f->r.cache_dir);
	buf_release(&f->r.text);
	indexes_info_release(&f->r.info);
}

static int verify(struct fx *f)
{
	return indexes_verify_release(&f->c, &f->r);
}

START_TEST(good_signature)
{
	struct fx f;

	fx_init(&f, RELEASE("bookworm", ""), "good", "good");
	ck_assert_int_eq(verify(&f), 0);
	ck_assert_str_eq(f.r.info.suite, "bookworm");
	ck_assert_uint_eq(f.r.info.n, 1);
	ck_assert_uint_eq(strlen(f.r.sha256), 64);
	ck_assert_ptr_nonnull(strstr(f.r.text.p, "Components: main\n"));
	fx_release(&f);
}
END_TEST

START_TEST(tampered_and_wrong_key_refused)
{
	struct fx f;

	fx_init(&f, RELEASE("bookworm", ""), "good", "good");
	sh("sed -i 's/Components: main/Components: evil/' '%s'", f.r.signed_path);
	ck_assert_int_eq(verify(&f), -MKI_E_SIGNATURE);
	fx_release(&f);

	fx_init(&f, RELEASE("bookworm", ""), "other", "good");
	ck_assert_int_eq(verify(&f), -MKI_E_SIGNATURE);
	fx_release(&f);

	/* text outside the signed part */
	fx_init(&f, RELEASE("bookworm", ""), "good", "good");
	sh("echo 'Suite: evil' >>'%s'", f.r.signed_path);
	ck_assert_int_eq(verify(&f), -MKI_E_SIGNATURE);
	fx_release(&f);
}
END_TEST

/* A trusted source's plain Release is read without gpgv. */
START_TEST(trusted_unsigned)
{
	struct fx f;

	fx_init(&f, RELEASE("bookworm", ""), NULL, NULL);
	ck_assert_int_eq(verify(&f), 0);
	ck_assert_str_eq(f.r.info.codename, "bookworm");
	fx_release(&f);
}
END_TEST

START_TEST(valid_until)
{
	struct fx f;

	fx_init(&f, RELEASE("bookworm", "Valid-Until: Sat, 17 Jun 2023 08:46:48 UTC\n"), "good",
		"good");
	ck_assert_int_eq(verify(&f), -MKI_E_EXPIRED);
	fx_release(&f);

	fx_init(&f, RELEASE("bookworm", "Valid-Until: Sat, 17 Jun 2023 08:46:48 UTC\n"), "good",
		"good");
	f.st.ignore_valid_until = 1;
	ck_assert_int_eq(verify(&f), 0);
	fx_release(&f);

	fx_init(&f, RELEASE("bookworm", "Valid-Until: Fri, 01 Jan 2100 00:00:00 UTC\n"), "good",
		"good");
	ck_assert_int_eq(verify(&f), 0);
	fx_release(&f);

	fx_init(&f, RELEASE("bookworm", "Valid-Until: someday\n"), "good", "good");
	ck_assert_int_eq(verify(&f), -MKI_E_PARSE);
	fx_release(&f);
}
END_TEST

/* Another suite's validly signed Release: a replay, refused. */
START_TEST(foreign_suite)
{
	struct fx f;

	fx_init(&f, RELEASE("buster", ""), "good", "good");
	ck_assert_int_eq(verify(&f), -MKI_E_SIGNATURE);
	fx_release(&f);
}
END_TEST

/* A fresh Release older than the one verified before: refused unless allowed. */
START_TEST(rollback)
{
	struct fx f;
	int allow;

	for (allow = 0; allow < 2; allow++) {
		fx_init(&f, RELEASE("bookworm", ""), "good", "good");
		sh("sed 's/2023/2024/' '%s/Release' >'%s/Release'", f.dir, f.r.cache_dir);
		f.r.fresh = 1;
		f.st.allow_rollback = allow;
		ck_assert_int_eq(verify(&f), allow ? 0 : -MKI_E_EXPIRED);
		fx_release(&f);
	}
	/* newer than the cached one: accepted and kept in the cache */
	fx_init(&f, RELEASE("bookworm", ""), "good", "good");
	sh("sed 's/2023/2022/' '%s/Release' >'%s/Release'", f.dir, f.r.cache_dir);
	f.r.fresh = 1;
	ck_assert_int_eq(verify(&f), 0);
	sh("cmp -s '%s/InRelease' '%s'", f.r.cache_dir, f.r.signed_path);
	fx_release(&f);
}
END_TEST

START_TEST(malformed_and_oversized)
{
	struct fx f;

	fx_init(&f, "Suite: bookworm\nthis line has no colon\n", "good", "good");
	ck_assert_int_eq(verify(&f), -MKI_E_PARSE);
	fx_release(&f);

	fx_init(&f, RELEASE("bookworm", ""), "good", "good");
	runlimits_init(&f.st.limits);
	f.st.limits.v[LIMIT_RELEASE_SIZE] = 100;
	ck_assert_int_eq(verify(&f), -MKI_E_LIMIT_REPO);
	fx_release(&f);
}
END_TEST

Suite *indexes_verify_suite(void)
{
	Suite *s = suite_create("indexes_verify");
	TCase *tc = tcase_create("indexes_verify");

	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, make_keys, remove_keys);
	tcase_add_test(tc, good_signature);
	tcase_add_test(tc, tampered_and_wrong_key_refused);
	tcase_add_test(tc, trusted_unsigned);
	tcase_add_test(tc, valid_until);
	tcase_add_test(tc, foreign_suite);
	tcase_add_test(tc, rollback);
	tcase_add_test(tc, malformed_and_oversized);
	suite_add_tcase(s, tc);
	return s;
}
