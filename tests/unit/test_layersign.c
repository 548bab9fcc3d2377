/* Layer signatures (layer/layersign.c): sign, verify, and what is refused. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layersign_fixture.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "layer/layersign.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define KEY2 "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DIGEST "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define DIGEST2 "sha256:baaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static char dir[] = "/tmp/mki-layersign.XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	layersign_fixture_key(dir, "farm");
	layersign_fixture_key(dir, "rogue");
	log_set_level(LOG_ERROR);
}

static void teardown(void)
{
	fsutil_remove_tree(dir);
}

static char *path(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

/* signer loads farm.key; verifier trusts the public keys named */
static struct layersign *load(const char *sign, const char *trust)
{
	struct strv t = { 0 };
	struct layersign *ls = NULL;
	char *s = sign ? path(sign) : NULL;

	if (trust)
		strv_push_take(&t, path(trust));
	ck_assert_int_eq(layersign_load(&ls, s, &t), 0);
	strv_release(&t);
	free(s);
	return ls;
}

START_TEST(sign_and_verify)
{
	struct layersign *signer = load("farm.key", NULL), *v = load(NULL, "farm.pub");
	struct layersign *other = load(NULL, "rogue.pub");
	char fpr[LAYERSIGN_FPR_LEN + 1];
	struct buf sig = { 0 };

	ck_assert(layersign_can_sign(signer));
	ck_assert(!layersign_can_sign(v));
	ck_assert_uint_eq(layersign_n_trusted(v), 1);
	ck_assert_int_eq(layersign_sign(signer, KEY, DIGEST, 1234, &sig, fpr), 0);
	ck_assert_uint_eq(strlen(sig.p), 88);
	ck_assert_int_eq(layersign_verify(v, KEY, DIGEST, 1234, sig.p, fpr), 0);
	/* another size, digest or layer: not what was signed */
	ck_assert_int_eq(layersign_verify(v, KEY, DIGEST, 1235, sig.p, fpr), -EBADMSG);
	ck_assert_int_eq(layersign_verify(v, KEY, DIGEST2, 1234, sig.p, fpr), -EBADMSG);
	ck_assert_int_eq(layersign_verify(v, KEY2, DIGEST, 1234, sig.p, fpr), -EBADMSG);
	/* a key nobody trusts, no signer, no signature, a malformed one */
	ck_assert_int_eq(layersign_verify(other, KEY, DIGEST, 1234, sig.p, fpr), -ENOKEY);
	ck_assert_int_eq(layersign_verify(v, KEY, DIGEST, 1234, sig.p, NULL), -ENOKEY);
	ck_assert_int_eq(layersign_verify(v, KEY, DIGEST, 1234, NULL, fpr), -EBADMSG);
	ck_assert_int_eq(layersign_verify(v, KEY, DIGEST, 1234, "AAAA", fpr), -EBADMSG);
	sig.p[3] = sig.p[3] == 'A' ? 'B' : 'A';
	ck_assert_int_eq(layersign_verify(v, KEY, DIGEST, 1234, sig.p, fpr), -EBADMSG);
	ck_assert_int_eq(layersign_sign(v, KEY, DIGEST, 1, &sig, fpr), -EINVAL);
	buf_release(&sig);
	layersign_free(signer);
	layersign_free(v);
	layersign_free(other);
}
END_TEST

START_TEST(bad_key_files)
{
	struct strv t = { 0 };
	struct layersign *ls = NULL;
	char *pub = path("farm.pub"), *missing = path("missing.pub");

	/* a public key where the private one belongs, a missing file, a private key as trusted */
	ck_assert_int_eq(layersign_load(&ls, pub, &t), -EINVAL);
	ck_assert_ptr_null(ls);
	strv_push(&t, missing);
	ck_assert_int_lt(layersign_load(&ls, NULL, &t), 0);
	strv_release(&t);
	strv_push_take(&t, path("farm.key"));
	ck_assert_int_eq(layersign_load(&ls, NULL, &t), -EINVAL);
	strv_release(&t);
	free(pub);
	free(missing);
}
END_TEST

START_TEST(message)
{
	struct buf b = { 0 };

	layersign_message(KEY, DIGEST, 42, &b);
	ck_assert_str_eq(b.p, "mkimage layer signature 1\nlayer " KEY "\nblob " DIGEST "\nsize 42\n");
	buf_release(&b);
}
END_TEST

Suite *layersign_suite(void)
{
	Suite *s = suite_create("layersign");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sign_and_verify);
	tcase_add_test(tc, bad_key_files);
	tcase_add_test(tc, message);
	suite_add_tcase(s, tc);
	return s;
}
