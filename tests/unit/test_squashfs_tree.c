/*
 * The inode and directory tables: a directory of 3000 entries (several directory headers and
 * metadata blocks), directory link counts, inode numbers (the root last), a hard link in
 * another directory than its file, read back with unsquashfs and rdsquashfs; an xattr value
 * past 64 KiB refused.
 */
#include <check.h>
#include <unistd.h>

#include "image/squashfs.h"
#include "lib/err.h"
#include "image_fixture.h"

static struct fixture fx;
static char squashfs[] = "squashfs";

static int out_has(char *cmd, const char *re)
{
	char *full = xasprintf("%s 2>&1 | grep -Eq -- '%s'", cmd, re);

	free(cmd);
	return fx_sh(full) == 0;
}

START_TEST(tables)
{
	struct sink k;
	char path[32];
	int i;

	fx_setup(&fx, "squashfs-tree", squashfs);
	fx_mkdir(&fx, "many");
	fx_add(&fx, "many", MF_DIR, 0755, 0);
	for (i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "many/p%04d", i);
		fx_add(&fx, path, MF_FIFO, 0644, 0)->uid = (uint32_t)i % 3;
	}
	fx_add(&fx, "many/sub1", MF_DIR, 0755, 0);
	fx_add(&fx, "many/sub2", MF_DIR, 0755, 0);
	fx_add(&fx, "many/sub2/data3", MF_HARDLINK, 0640, 0)->target = xstrdup("etc/data");
	manifest_sort(&fx.st.manifest);
	fx_tree(&fx);
	sink_init_file(&k, fx.out);
	ck_assert_int_eq(squashfs_write_threads(&fx.t, &fx.p, &k, 1), 0);
	ck_assert_int_eq(sink_commit(&k), 0);
	sink_release(&k);
	/* 3000 fifos, 3 more directories, the fixture's 10 inodes (its 11 entries less a link) */
	ck_assert(out_has(xasprintf("unsquashfs -s '%s'", fx.out), "^Number of inodes 3013$"));
	ck_assert(out_has(xasprintf("rdsquashfs -s / '%s'", fx.out), "^Inode number: 3013$"));
	ck_assert_int_eq(fx_sh(xasprintf("test $(unsquashfs -lln '%s' | grep -c 'squashfs-root/"
					 "many/p[0-9]*$') = 3000", fx.out)), 0);
	ck_assert(out_has(xasprintf("unsquashfs -lln '%s'", fx.out),
			  "^prw-r--r-- 2/0 .* squashfs-root/many/p2999$"));
	ck_assert(out_has(xasprintf("rdsquashfs -s /many '%s'", fx.out), "^Hard link count: 4$"));
	ck_assert(out_has(xasprintf("rdsquashfs -s / '%s'", fx.out), "^Hard link count: 5$"));
	ck_assert(out_has(xasprintf("rdsquashfs -s /many/sub2/data3 '%s'", fx.out),
			  "^Hard link count: 3$"));
	ck_assert_int_eq(fx_sh(xasprintf("unsquashfs -d '%s/x' '%s' >/dev/null && cmp "
					 "'%s/x/many/sub2/data3' '%s/etc/data'", fx.top, fx.out,
					 fx.top, fx.st.root)), 0);
	fx_teardown(&fx);
}
END_TEST

/*
 * An xattr value past the 64 KiB Linux can read back (a package's tar may declare any size):
 * refused, not written where the kernel would never return it; 64 KiB itself is written.
 */
START_TEST(xattr_past_64k)
{
	uint8_t *big = xcalloc(1, 65537);
	struct sink k;

	fx_setup(&fx, "squashfs-xattr", squashfs);
	manifest_set_xattr(manifest_get(&fx.st.manifest, "etc/data"), "user.big", big, 65536);
	fx_tree(&fx);
	sink_init_file(&k, fx.out);
	ck_assert_int_eq(squashfs_write_threads(&fx.t, &fx.p, &k, 1), 0);
	sink_release(&k);
	fx_teardown(&fx);
	fx_setup(&fx, "squashfs-xattr", squashfs);
	manifest_set_xattr(manifest_get(&fx.st.manifest, "etc/data"), "user.big", big, 65537);
	fx_tree(&fx);
	sink_init_file(&k, fx.out);
	ck_assert_int_eq(squashfs_write_threads(&fx.t, &fx.p, &k, 1), -MKI_E_IMAGE);
	sink_release(&k);
	ck_assert_int_ne(access(fx.out, F_OK), 0);
	fx_teardown(&fx);
	free(big);
}
END_TEST

Suite *squashfs_tree_suite(void)
{
	Suite *s = suite_create("squashfs_tree");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, tables);
	tcase_add_test(tc, xattr_past_64k);
	suite_add_tcase(s, tc);
	return s;
}
