/* What the stages share (pipeline/build.c): the image path's stem and directory, the release. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/x.h"
#include "pipeline/build.h"

/* The stem is the path less its extension; a dot in a directory or a file's leading dot is none. */
START_TEST(output_stem)
{
	ck_assert_int_eq(build_output_stem("images/x.ext4"), 8);
	ck_assert_int_eq(build_output_stem("images/x.img.zst"), 12);
	ck_assert_int_eq(build_output_stem("x"), 1);
	ck_assert_int_eq(build_output_stem("out.d/x"), 7);
	ck_assert_int_eq(build_output_stem("images/.x"), 9);
}
END_TEST

START_TEST(parent_dir)
{
	char *d;

	d = build_parent_dir("images/x.ext4");
	ck_assert_str_eq(d, "images");
	free(d);
	d = build_parent_dir("x.ext4");
	ck_assert_str_eq(d, ".");
	free(d);
	d = build_parent_dir("/x.ext4");
	ck_assert_str_eq(d, "/");
	free(d);
	d = build_parent_dir("/srv/out/a.b/x");
	ck_assert_str_eq(d, "/srv/out/a.b");
	free(d);
}
END_TEST

/* A build that stopped anywhere, even before its first stage, is released (ASan: no leak). */
START_TEST(release_partial)
{
	struct build b = { .work_lock = -1 };

	build_release(&b);
	b = (struct build){ .work_lock = -1 };
	b.bmap = xstrdup("x.img.bmap");
	b.compressed = xstrdup("x.img.zst");
	buf_adds(&b.disk, "{}");
	build_release(&b);
}
END_TEST

Suite *build_suite(void)
{
	Suite *s = suite_create("build");
	TCase *tc = tcase_create("build");

	tcase_add_test(tc, output_stem);
	tcase_add_test(tc, parent_dir);
	tcase_add_test(tc, release_partial);
	suite_add_tcase(s, tc);
	return s;
}
