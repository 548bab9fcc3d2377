/*
 * The bundle's signature: the keys checked (the certificate's key, a chain to the keyring, RSA
 * only), the manifest inside the CMS, no signed attributes, the same bytes twice.
 */
#include <check.h>
#include <openssl/cms.h>
#include <string.h>

#include "image/raucsign.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "pki_fixture.h"

static char dir[] = "/tmp/test-raucsign-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	pki_setup(dir);
	log_set_level(LOG_QUIET);
}

static void teardown(void)
{
	fsutil_remove_tree(dir);
	memcpy(dir, "/tmp/test-raucsign-XXXXXX", sizeof(dir));
}

/* Check CERT.pem with KEY.key against RING.pem. */
static int check(const char *cert, const char *key, const char *ring)
{
	char *c = xasprintf("%s/%s.pem", dir, cert), *k = xasprintf("%s/%s.key", dir, key);
	char *r = xasprintf("%s/%s.pem", dir, ring);
	struct raucsign_keys keys = { c, k, r };
	int ret = raucsign_check(&keys);

	free(c);
	free(k);
	free(r);
	return ret;
}

START_TEST(keys_checked)
{
	ck_assert_int_eq(check("signer", "signer", "ca"), 0);
	ck_assert_int_eq(check("signer", "stranger", "ca"), -MKI_E_RECIPE); /* not its key */
	ck_assert_int_eq(check("stranger", "stranger", "ca"), -MKI_E_RECIPE); /* untrusted */
	ck_assert_int_eq(check("stranger", "stranger", "other-ca"), 0);
	ck_assert_int_eq(check("ec", "ec", "ca"), -MKI_E_RECIPE); /* ECDSA: random signatures */
	ck_assert_int_eq(check("signer", "missing", "ca"), -MKI_E_RECIPE);
	ck_assert_int_eq(check("signer", "signer", "signer"), -MKI_E_RECIPE); /* not a CA */
}
END_TEST

START_TEST(signed_inline_and_stable)
{
	static const char manifest[] = "[update]\ncompatible=x\nversion=1\n";
	char *c = xasprintf("%s/signer.pem", dir), *k = xasprintf("%s/signer.key", dir);
	char *r = xasprintf("%s/ca.pem", dir);
	struct raucsign_keys keys = { c, k, r };
	struct buf a = { 0 }, b = { 0 };
	const unsigned char *p;
	CMS_ContentInfo *cms;
	ASN1_OCTET_STRING **content;
	CMS_SignerInfo *si;

	ck_assert_int_eq(raucsign_sign(&keys, manifest, strlen(manifest), &a), 0);
	ck_assert_int_eq(raucsign_sign(&keys, manifest, strlen(manifest), &b), 0);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert_mem_eq(a.p, b.p, a.len);
	p = (const unsigned char *)a.p;
	cms = d2i_CMS_ContentInfo(NULL, &p, (long)a.len);
	ck_assert_ptr_nonnull(cms);
	ck_assert_int_eq(OBJ_obj2nid(CMS_get0_type(cms)), NID_pkcs7_signed);
	ck_assert_int_eq(CMS_is_detached(cms), 0);
	content = CMS_get0_content(cms);
	ck_assert_ptr_nonnull(content);
	ck_assert_int_eq(ASN1_STRING_length(*content), (int)strlen(manifest));
	ck_assert_mem_eq(ASN1_STRING_get0_data(*content), manifest, strlen(manifest));
	si = sk_CMS_SignerInfo_value(CMS_get0_SignerInfos(cms), 0);
	ck_assert_int_eq(CMS_signed_get_attr_count(si), -1); /* no signing time */
	CMS_ContentInfo_free(cms);
	buf_release(&a);
	buf_release(&b);
	free(c);
	free(k);
	free(r);
}
END_TEST

Suite *raucsign_suite(void)
{
	Suite *s = suite_create("raucsign");
	TCase *tc = tcase_create("raucsign");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, keys_checked);
	tcase_add_test(tc, signed_inline_and_stable);
	suite_add_tcase(s, tc);
	return s;
}
