#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "configure/accel.h"
#include "lib/fsutil.h"
#include "lib/str.h"
#include "lib/strv.h"

static void put(const char *dir, const char *rel, const char *text)
{
	char *path = xasprintf("%s/%s", dir, rel), *parent = xstrdup(path);

	*strrchr(parent, '/') = 0;
	ck_assert_int_eq(fsutil_mkdirs(parent), 0);
	ck_assert_int_eq(fsutil_write_atomic(path, text, strlen(text)), 0);
	free(parent);
	free(path);
}

/* The guard lands where mkimage-exec starts it, whole. */
START_TEST(guard_written_into_the_copy)
{
	char dir[] = "/tmp/mki-accel-python-XXXXXX", *path, *text = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	path = xasprintf("%s/mkimage-accel", dir);
	ck_assert_int_eq(fsutil_mkdirs(path), 0);
	free(path);
	ck_assert_int_eq(accel_python_write(dir), 0);
	path = xasprintf("%s/mkimage-accel/pycompile.py", dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(getdelim(&text, &len, 0, f), 1000);
	fclose(f);
	ck_assert(str_starts_with(text, "# mkimage: py_compile run natively"));
	ck_assert_ptr_nonnull(strstr(text, "\nsys.exit(main())\n"));
	free(text);
	free(path);
	fsutil_remove_tree(dir);
}
END_TEST

/*
 * The record's "python PATH" lines (escaped as the profile's) named by the packages whose file
 * lists hold them; the profile's own lines, malformed ones and files of no package are not.
 */
START_TEST(emulated_files_named_by_package)
{
	char dir[] = "/tmp/mki-accel-python-XXXXXX", *root, *record;
	struct accel a = { 0 };
	struct strv pkgs = { 0 };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	root = xasprintf("%s/root", dir);
	record = xasprintf("%s/record", dir);
	put(root, "var/lib/dpkg/info/zeta.list", "/usr\n/usr/lib/z/x.py\n");
	put(root, "var/lib/dpkg/info/alpha:armhf.list", "/usr/lib/a/y z.py\n");
	put(root, "var/lib/dpkg/info/other.list", "/usr/lib/o/x.py\n");
	put(root, "var/lib/dpkg/info/alpha:armhf.postinst", "/usr/lib/o/x.py\n");
	put(dir, "record", "native 1 2 /usr/bin/sed\n"
			   "python /usr/lib/z/x.py\n"
			   "python /usr/lib/a/y\\x20z.py\n"
			   "python /usr/lib/z/x.py\n"
			   "python relative.py\n"
			   "python /usr/lib/bad\\x2\n"
			   "python /usr/lib/z/x\\x2g.py\n"
			   "python /nowhere.py\n");
	a.root = root;
	a.profile = record;
	a.python = 1;
	accel_python_emulated(&a, &pkgs);
	ck_assert_uint_eq(pkgs.n, 2);
	ck_assert_str_eq(pkgs.v[0], "alpha:armhf");
	ck_assert_str_eq(pkgs.v[1], "zeta");
	strv_release(&pkgs);
	/* without a native python there is nothing to say */
	a.python = 0;
	accel_python_emulated(&a, &pkgs);
	ck_assert_uint_eq(pkgs.n, 0);
	fsutil_remove_tree(dir);
	free(root);
	free(record);
}
END_TEST

Suite *accel_python_suite(void)
{
	Suite *s = suite_create("accel_python");
	TCase *tc = tcase_create("accel_python");

	tcase_add_test(tc, guard_written_into_the_copy);
	tcase_add_test(tc, emulated_files_named_by_package);
	suite_add_tcase(s, tc);
	return s;
}
