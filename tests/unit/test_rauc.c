/*
 * The bundle's layout: the manifest as RAUC writes it, the salt from the content and epoch, and a
 * whole bundle read back from its end - size trailer, signature, tree, squashfs - written twice
 * byte for byte, and nothing left at the output when the keys are refused. Test 128 has the
 * real rauc read the bundles of a build.
 */
#include <check.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/rauc.h"
#include "image/rauc_internal.h"
#include "image/verity.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "pki_fixture.h"

static char dir[] = "/tmp/test-rauc-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	log_set_level(LOG_QUIET);
}

static void teardown(void)
{
	fsutil_remove_tree(dir);
	memcpy(dir, "/tmp/test-rauc-XXXXXX", sizeof(dir));
}

START_TEST(manifest_text)
{
	char compat[] = "acme-board", version[] = "2.1";
	struct recipe_update u = { .compatible = compat, .version = version };
	struct rauc_verity v = { .size = 8192 };
	struct buf b = { 0 };

	memset(v.hash, 'a', 64);
	memset(v.salt, 'b', 64);
	rauc_manifest(&b, &u, "rootfs.ext4", "0123", 4096, NULL);
	buf_add(&b, "", 1);
	ck_assert_str_eq(b.p, "[update]\ncompatible=acme-board\nversion=2.1\n\n[bundle]\n"
			 "format=verity\n\n[image.rootfs]\nsha256=0123\nsize=4096\n"
			 "filename=rootfs.ext4\n");
	buf_release(&b);
	rauc_manifest(&b, &u, "rootfs.ext4", "0123", 4096, &v);
	buf_add(&b, "", 1);
	ck_assert_ptr_nonnull(strstr(b.p, "format=verity\nverity-hash=aaaa"));
	ck_assert_ptr_nonnull(strstr(b.p, "\nverity-salt=bbbb"));
	ck_assert_ptr_nonnull(strstr(b.p, "bbbb\nverity-size=8192\n\n[image.rootfs]\n"));
	buf_release(&b);
}
END_TEST

/* A verified root's bundle: the root's image, then its children's, each its own section. */
START_TEST(manifest_children)
{
	char compat[] = "acme-board", version[] = "2.1";
	struct recipe_update u = { .compatible = compat, .version = version };
	struct rauc_image img[3] = { { "rootfs", "rootfs.squashfs", "01", 8192 },
				     { "verity", "rootfs.verity.img", "02", 4096 },
				     { "boot", "boot.ext4", "03", 65536 } };
	struct buf b = { 0 };

	rauc_manifest_images(&b, &u, img, 3, NULL);
	buf_add(&b, "", 1);
	ck_assert_str_eq(b.p, "[update]\ncompatible=acme-board\nversion=2.1\n\n[bundle]\n"
			 "format=verity\n\n[image.rootfs]\nsha256=01\nsize=8192\n"
			 "filename=rootfs.squashfs\n\n[image.verity]\nsha256=02\nsize=4096\n"
			 "filename=rootfs.verity.img\n\n[image.boot]\nsha256=03\nsize=65536\n"
			 "filename=boot.ext4\n");
	buf_release(&b);
}
END_TEST

START_TEST(salt_and_trailer)
{
	uint8_t a[32], b[32], be[8];

	rauc_salt("seed", 1700000000, a);
	rauc_salt("seed", 1700000000, b);
	ck_assert_mem_eq(a, b, 32);
	rauc_salt("seed", 1700000001, b);
	ck_assert(memcmp(a, b, 32));
	rauc_salt("seeD", 1700000000, b);
	ck_assert(memcmp(a, b, 32));
	rauc_put_be64(be, 0x0102030405060708ull);
	ck_assert_mem_eq(be, "\1\2\3\4\5\6\7\10", 8);
}
END_TEST

/* A slot image of 1 MiB (patterned, so the squashfs holds more than a block) in DIR/c. */
static void slot_image(void)
{
	char *c = xasprintf("%s/c", dir), *img = xasprintf("%s/c/rootfs.ext4", dir);
	uint8_t buf[4096];
	uint32_t x = 2463534242u;
	int fd, i, j;

	ck_assert_int_eq(mkdir(c, 0755), 0);
	fd = open(img, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	for (i = 0; i < 256; i++) {
		for (j = 0; j < (int)sizeof(buf); j++) { /* xorshift: what zstd cannot shrink */
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[j] = (uint8_t)x;
		}
		ck_assert_int_eq(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	}
	close(fd);
	free(c);
	free(img);
}

static int write_bundle(const char *out, const char *key, struct rauc_bundle *rb)
{
	char *c = xasprintf("%s/c", dir), *cert = xasprintf("%s/signer.pem", dir);
	char *k = xasprintf("%s/%s.key", dir, key), *ring = xasprintf("%s/ca.pem", dir);
	char compat[] = "acme-board", version[] = "1";
	struct recipe_update u = { .compatible = compat, .version = version, .cert = cert,
				   .key = k, .keyring = ring };
	struct rauc_params p = { &u, c, "rootfs.ext4", out, NULL, 1700000000, NULL, NULL, 0 };
	int ret = rauc_write(&p, rb);

	free(c);
	free(cert);
	free(k);
	free(ring);
	return ret;
}

START_TEST(whole_bundle)
{
	char *out = xasprintf("%s/b.raucb", dir), *out2 = xasprintf("%s/b2.raucb", dir);
	struct rauc_bundle rb, rb2;
	struct buf a = { 0 }, b = { 0 };
	uint64_t sig = 0;
	int i;

	pki_setup(dir);
	slot_image();
	ck_assert_int_eq(write_bundle(out, "signer", &rb), 0);
	ck_assert_int_eq(write_bundle(out2, "signer", &rb2), 0);
	ck_assert_int_eq(readfile_read(out, 64 << 20, &a, NULL), 0);
	ck_assert_int_eq(readfile_read(out2, 64 << 20, &b, NULL), 0);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert_mem_eq(a.p, b.p, a.len);
	ck_assert_str_eq(rb.sha256, rb2.sha256);
	ck_assert_uint_eq(a.len, rb.bytes);
	for (i = 0; i < 8; i++)
		sig = sig << 8 | (uint8_t)a.p[a.len - 8 + i];
	ck_assert_uint_eq(sig, rb.signature_bytes);
	ck_assert_uint_eq(rb.payload_bytes % VERITY_BLOCK, 0);
	ck_assert_uint_gt(rb.payload_bytes, VERITY_BLOCK);
	ck_assert_uint_eq(rb.tree_bytes, verity_tree_size(rb.payload_bytes, 0));
	ck_assert_uint_eq(rb.payload_bytes + rb.tree_bytes + sig + 8, a.len);
	ck_assert_mem_eq(a.p, "hsqs", 4);
	ck_assert_ptr_nonnull(memmem(a.p + rb.payload_bytes + rb.tree_bytes, sig,
				     "verity-hash=", 12));
	ck_assert_ptr_nonnull(memmem(a.p + rb.payload_bytes + rb.tree_bytes, sig,
				     rb.verity_hash, 64));
	buf_release(&a);
	buf_release(&b);
	/* refused keys: nothing at the output, no temporary beside it */
	unlink(out);
	ck_assert_int_eq(write_bundle(out, "stranger", &rb), -MKI_E_RECIPE);
	ck_assert_int_eq(access(out, F_OK), -1);
	free(out);
	free(out2);
	out = xasprintf("ls %s | grep -q tmp", dir);
	ck_assert_int_ne(system(out), 0);
	free(out);
}
END_TEST

Suite *rauc_suite(void)
{
	Suite *s = suite_create("rauc");
	TCase *tc = tcase_create("rauc");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, manifest_text);
	tcase_add_test(tc, manifest_children);
	tcase_add_test(tc, salt_and_trailer);
	tcase_add_test(tc, whole_bundle);
	suite_add_tcase(s, tc);
	return s;
}
