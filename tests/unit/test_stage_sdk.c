/* The SDK's steps (pipeline/stage_sdk.c): nothing without --sdk; no C library, no SDK files. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/x.h"
#include "pipeline/sdk.h"
#include "pipeline/stage.h"
#include "pipeline_fixture.h"

START_TEST(nothing_without_sdk)
{
	struct build_opts o = { 0 };
	struct build b = { .work_lock = -1 };
	struct recipe r = { 0 };

	ck_assert_int_eq(stage_sdk_request(&o, &r, &b), 0);
	ck_assert_int_eq(stage_sdk_files(&o, &r, &b), 0);
	ck_assert_ptr_null(b.staging.root);
}
END_TEST

/* Its programs need the SDK's C library, whose version its environment script checks. */
START_TEST(files_need_the_c_library)
{
	struct build_opts o = { 0 };
	struct build b = { .work_lock = -1 };
	struct sdk s = { 0 };
	char arch[] = "amd64";
	struct recipe r = { .arch = arch };

	b.sdk = &s;
	ck_assert_int_eq(stage_sdk_files(&o, &r, &b), -MKI_E_RESOLVE);
}
END_TEST

Suite *stage_sdk_suite(void)
{
	Suite *s = suite_create("stage_sdk");
	TCase *tc = tcase_create("stage_sdk");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, nothing_without_sdk);
	tcase_add_test(tc, files_need_the_c_library);
	suite_add_tcase(s, tc);
	return s;
}
