/* The last stage (pipeline/stage_emit.c): what lands beside the image, and when nothing does. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/x.h"
#include "pipeline_fixture.h"
#include "pipeline/stage.h"

static char name[] = "t", arch[] = "amd64";

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* No image, no companions: the lock, SBOM and report are not written, and the stage fails. */
START_TEST(no_image_no_companions)
{
	struct build_opts o = { 0 };
	struct build b = { .work_lock = -1 };
	struct recipe r = { .name = name, .arch = arch };

	o.output = xasprintf("%s/x.ext4", dir);
	o.st.lock_file = xasprintf("%s/x.lock", dir);
	b.sbom_file = xasprintf("%s/x.spdx.json", dir);
	b.report_file = xasprintf("%s/x.report.json", dir);
	ck_assert_int_lt(stage_outputs(&o, &r, &b), 0);
	ck_assert(!exists(o.st.lock_file));
	ck_assert(!exists(b.sbom_file));
	ck_assert(!exists(b.report_file));
	free(o.output);
	free(o.st.lock_file);
	free(b.sbom_file);
	free(b.report_file);
	build_release(&b);
}
END_TEST

Suite *stage_emit_suite(void)
{
	Suite *s = suite_create("stage_emit");
	TCase *tc = tcase_create("stage_emit");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, no_image_no_companions);
	suite_add_tcase(s, tc);
	return s;
}
