/* The stages that make the tree (pipeline/stage_tree.c): what runs, and what --until skips. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/x.h"
#include "pipeline_fixture.h"
#include "pipeline/stage.h"

static char arch[] = "amd64";

/* --until fetch and before never need a namespace: subordinate ids are not asked for. */
START_TEST(sandbox_check_skipped_before_unpack)
{
	struct build_opts o = { .until = ST_FETCH };
	struct build b = { .work_lock = -1 };
	struct recipe r = { 0 };

	ck_assert_int_eq(stage_sandbox_check(&o, &r, &b), 0);
	o.until = ST_RESOLVE;
	ck_assert_int_eq(stage_sandbox_check(&o, &r, &b), 0);
}
END_TEST

/*
 * --until unpack keeps the unconfigured tree: the layer cache, which holds configured trees only,
 * is neither asked nor written, and the tree is unpacked into the work directory.
 */
START_TEST(unpack_until_unpack_skips_the_layer_cache)
{
	struct build_opts o = { .until = ST_UNPACK };
	struct build b = { .work_lock = -1 };
	struct recipe r = { .arch = arch };
	struct stat st;
	char *root;

	o.st.work_dir = xstrdup(dir);
	o.st.jobs = 1;
	ck_assert_int_eq(stage_unpack(&o, &r, &b), 0);
	ck_assert_int_eq(o.st.no_layer_cache, 1);
	ck_assert_str_eq(layer_outcome(b.layer), "off");
	ck_assert_int_eq(layer_restored(b.layer), 0);
	root = xasprintf("%s/root", dir);
	ck_assert_str_eq(b.staging.root, root);
	ck_assert_int_eq(stat(root, &st), 0);
	/* an image recipe: no disk files or kernels to check; no package, no licence */
	ck_assert_int_eq(stage_unpacked(&o, &r, &b), 0);
	ck_assert_uint_eq(b.shipped.n, 0);
	free(root);
	free(o.st.work_dir);
	build_release(&b);
}
END_TEST

Suite *stage_tree_suite(void)
{
	Suite *s = suite_create("stage_tree");
	TCase *tc = tcase_create("stage_tree");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sandbox_check_skipped_before_unpack);
	tcase_add_test(tc, unpack_until_unpack_skips_the_layer_cache);
	suite_add_tcase(s, tc);
	return s;
}
