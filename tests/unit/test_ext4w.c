/*
 * The ext4 format's top: the size it first tries and the whole walk into a sink - every kind of
 * entry of the fixture lands with its owner, mode, link target, device numbers, xattr and holes,
 * and the result is a clean filesystem.
 */
#include <check.h>
#include <sys/stat.h>

#include "image/ext4w.h"
#include "image/sink.h"
#include "image_fixture.h"
#include "lib/err.h"

#define MIB (1ull << 20)

static struct fixture fx;
static char ext4[] = "ext4";

START_TEST(estimate_fixed_and_auto)
{
	uint64_t bytes = 0;

	fx_setup(&fx, "ext4w", ext4);
	fx_tree(&fx);
	fx.im.size = 24 * MIB;
	ck_assert_int_eq(ext4w_estimate(&fx.t, &fx.p, &bytes), 0);
	ck_assert_uint_eq(bytes, 24 * MIB);
	fx.im.size = 0;
	ck_assert_int_eq(ext4w_estimate(&fx.t, &fx.p, &bytes), 0);
	ck_assert_uint_ge(bytes, 4 * MIB);
	ck_assert_uint_le(bytes, 64 * MIB);
}
END_TEST

/* `debugfs -R REQUEST` on the image contains `want`. */
static int dbg_has(const char *request, const char *want)
{
	return fx_sh(xasprintf("debugfs -R '%s' '%s' 2>/dev/null | grep -q -- '%s'", request,
			       fx.out, want)) == 0;
}

START_TEST(walk_writes_every_kind)
{
	struct sink k;

	fx_setup(&fx, "ext4w", ext4);
	fx_tree(&fx);
	sink_init_file(&k, fx.out);
	ck_assert_int_eq(ext4w_write(&fx.t, &fx.p, &k), 0);
	ck_assert_int_eq(sink_commit(&k), 0);
	sink_release(&k);
	ck_assert_int_eq(fx_sh(xasprintf("e2fsck -fn '%s' >/dev/null 2>&1", fx.out)), 0);
	ck_assert(dbg_has("stat /etc", "User:     7"));
	ck_assert(dbg_has("stat /etc/data", "User:  1000"));
	ck_assert(dbg_has("stat /etc/data", "Links: 2"));
	ck_assert(dbg_has("stat /etc/link", "Fast link dest: \"data\""));
	ck_assert(dbg_has("stat /etc/fifo", "Type: FIFO"));
	ck_assert(dbg_has("stat /etc/sock", "Type: socket"));
	ck_assert(dbg_has("stat /var/null", "Device major/minor number: 01:03"));
	ck_assert(dbg_has("ea_get /etc/data user.k", "v1"));
	/* The hole in var/sparse stays one: 2 data blocks for 5 blocks of length. */
	ck_assert(dbg_has("stat /var/sparse", "Size: 16484"));
	ck_assert_int_eq(fx_sh(xasprintf("debugfs -R 'blocks /var/sparse' '%s' 2>/dev/null | "
					 "grep -Eqx '[0-9]+ [0-9]+ ?'", fx.out)), 0);
}
END_TEST

/* A fixed size too small for the tree: -MKI_E_NOSPACE, and the sink is dropped by its owner. */
START_TEST(too_small_is_nospace)
{
	struct sink k;
	struct stat st;
	int i;

	fx_setup(&fx, "ext4w", ext4);
	for (i = 0; i < 120; i++) {
		char name[32];

		snprintf(name, sizeof(name), "var/f%03d", i);
		fx_put(&fx, name, 0, 100000, 'x');
		fx_add(&fx, name, MF_REG, 0644, 100000);
	}
	manifest_sort(&fx.st.manifest);
	fx.im.size = 8 * MIB; /* the smallest with a journal; the files need 12 */
	fx_tree(&fx);
	sink_init_file(&k, fx.out);
	ck_assert_int_eq(ext4w_write(&fx.t, &fx.p, &k), -MKI_E_NOSPACE);
	sink_release(&k);
	ck_assert_int_ne(stat(fx.out, &st), 0);
}
END_TEST

static void teardown(void)
{
	fx_teardown(&fx);
}

Suite *ext4w_suite(void)
{
	Suite *s = suite_create("ext4w");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, estimate_fixed_and_auto);
	tcase_add_test(tc, walk_writes_every_kind);
	tcase_add_test(tc, too_small_is_nospace);
	suite_add_tcase(s, tc);
	return s;
}
