/*
 * Where an entry lands and how it is written (unpack_write.c): paths that climb out of the tree
 * through symlinks refused (through unpack_plan), and the helpers alone.
 */
#include "unpack_fixture.h"
#include "unpack/unpack_ctx.h"

START_TEST(hostile_paths_refused)
{
	struct fx f;
	char *evil;

	fx_init(&f);
	evil = xasprintf("%s/evil", f.dir);
	deb(&f, "a", "armhf", "1", "", "usr/lib/up->../../../..");
	deb(&f, "b", "armhf", "1", "", "usr/lib/up/evil=E");
	ck_assert_int_eq(run(&f), -MKI_E_PACKAGE);
	ck_assert_int_ne(access(evil, F_OK), 0);
	free(evil);
	fx_release(&f);

	/* an absolute link restarts at the tree's root: the file lands inside */
	fx_init(&f);
	deb(&f, "a", "armhf", "1", "", "usr/lib/abs->/opt");
	deb(&f, "b", "armhf", "1", "", "opt/;usr/lib/abs/f=F");
	ck_assert_int_eq(run(&f), 0);
	ASSERT_TREE(&f, "opt/f", "F");
	fx_release(&f);
}
END_TEST

START_TEST(owner_added_once)
{
	struct manifest_entry me = { 0 };

	unpack_owner_add(&me, "a");
	unpack_owner_add(&me, "b:amd64");
	unpack_owner_add(&me, "a");
	ck_assert_uint_eq(me.owners.n, 2);
	ck_assert_str_eq(me.owners.v[0], "a");
	ck_assert_str_eq(me.owners.v[1], "b:amd64");
	strv_release(&me.owners);
}
END_TEST

START_TEST(open_beneath_refuses_symlinks)
{
	char dir[] = "/tmp/mki-uw.XXXXXX";
	int root, fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	sh("mkdir -p %s/usr/lib && ln -s usr/lib %s/lib && ln -s / %s/usr/up", dir, dir, dir);
	root = open(dir, O_PATH | O_DIRECTORY);
	ck_assert_int_ge(root, 0);
	fd = unpack_open_beneath(root, "usr/lib", O_PATH);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_lt(unpack_open_beneath(root, "lib", O_PATH), 0);
	ck_assert_int_lt(unpack_open_beneath(root, "usr/up/usr", O_PATH), 0);
	close(root);
	sh("rm -rf %s", dir);
}
END_TEST

START_TEST(times_set_on_the_link)
{
	char dir[] = "/tmp/mki-uw.XXXXXX";
	struct stat st;
	int root;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	sh("touch %s/f && ln -s f %s/l", dir, dir);
	root = open(dir, O_PATH | O_DIRECTORY);
	unpack_set_times(root, "l", 1700000000);
	ck_assert_int_eq(fstatat(root, "l", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(st.st_mtime, 1700000000);
	ck_assert_int_eq(fstatat(root, "f", &st, 0), 0);
	ck_assert_int_ne(st.st_mtime, 1700000000);
	close(root);
	sh("rm -rf %s", dir);
}
END_TEST

Suite *unpack_write_suite(void)
{
	Suite *s = suite_create("unpack_write");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, hostile_paths_refused);
	tcase_add_test(tc, owner_added_once);
	tcase_add_test(tc, open_beneath_refuses_symlinks);
	tcase_add_test(tc, times_set_on_the_link);
	suite_add_tcase(s, tc);
	return s;
}
