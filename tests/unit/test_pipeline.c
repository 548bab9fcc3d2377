/*
 * The build's table of stages (pipeline/pipeline.c): --until's names, what is set up before the
 * stages (outputs, log, cache, work directory) and released after them, the outcome.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/x.h"
#include "pipeline_fixture.h"
#include "pipeline/pipeline.h"
#include "store/cachegc.h"

static char name[] = "t", arch[] = "amd64", ext4[] = "ext4";

/* An amd64 image recipe "t" with no output of its own; options as main.c leaves them. */
static void init(struct build_opts *o, struct recipe *r, struct build *b)
{
	setenv("TMPDIR", dir, 1); /* the work directory's place */
	*o = (struct build_opts){ .until = ST_IMAGE };
	o->st.cache_dir = xasprintf("%s/cache", dir);
	*r = (struct recipe){ .name = name, .arch = arch };
	r->image.format = ext4;
	*b = (struct build){ .work_lock = -1 };
}

static void release(struct build_opts *o, struct build *b)
{
	pipeline_release(o, b);
	free(o->output);
	free(o->st.cache_dir);
	free(o->st.work_dir);
	free(o->st.lock_file);
	cachegc_user_close(o->st.cache_user);
	settings_release_env(&o->st);
}

/* Every stage --until names, the configure stage also by its old name; steps are not stages. */
START_TEST(until_names)
{
	static const char *const names[] = { "sources", "indexes", "resolve", "fetch", "unpack",
					     "configure", "image" };
	enum stage_id id;
	int i;

	for (i = 0; i < 7; i++) {
		ck_assert_int_eq(pipeline_parse_until(names[i], &id), 0);
		ck_assert_int_eq(id, i);
	}
	ck_assert_int_eq(pipeline_parse_until("hooks", &id), 0);
	ck_assert_int_eq(id, ST_CONFIGURE);
	ck_assert_int_eq(pipeline_parse_until("outputs", &id), -1);
	ck_assert_int_eq(pipeline_parse_until("sandbox", &id), -1);
	ck_assert_int_eq(pipeline_parse_until("Image", &id), -1);
	ck_assert_int_eq(pipeline_parse_until("", &id), -1);
}
END_TEST

/*
 * --plan writes nothing beside an image: no output directory, no log; the companions' names are
 * derived all the same, and the work directory is made in TMPDIR and removed at the end.
 */
START_TEST(setup_plan_only)
{
	struct build_opts o;
	struct recipe r;
	struct build b;
	struct stat st;
	char *work;

	init(&o, &r, &b);
	o.plan = 1;
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(pipeline_setup(&o, &r, &b), 0);
	ck_assert_str_eq(o.output, "images/t.ext4");
	ck_assert_str_eq(o.st.lock_file, "images/t.lock");
	ck_assert_str_eq(b.sbom_file, "images/t.spdx.json");
	ck_assert_str_eq(b.report_file, "images/t.report.json");
	ck_assert_str_eq(b.log_file, "images/t.log");
	ck_assert_int_eq(b.log_open, 0);
	ck_assert_int_ne(stat("images", &st), 0);
	ck_assert_ptr_nonnull(o.st.work_dir);
	ck_assert_int_eq(strncmp(o.st.work_dir, b.tmp_dir, strlen(b.tmp_dir)), 0);
	ck_assert_int_eq(stat(o.st.work_dir, &st), 0);
	work = xstrdup(o.st.work_dir);
	release(&o, &b);
	ck_assert_int_ne(stat(work, &st), 0);
	free(work);
}
END_TEST

/* A disk recipe's default output is images/NAME.img, and its default directory is created. */
START_TEST(setup_default_disk_output)
{
	struct build_opts o;
	struct recipe r;
	struct build b;
	struct stat st;

	init(&o, &r, &b);
	r.disk.set = 1;
	log_file_start();
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(pipeline_setup(&o, &r, &b), 0);
	ck_assert_str_eq(o.output, "images/t.img");
	ck_assert_int_eq(b.output_default, 1);
	ck_assert_int_eq(b.log_open, 1);
	ck_assert_int_eq(stat("images", &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	release(&o, &b);
	ck_assert_int_eq(stat("images/t.log", &st), 0); /* the log committed at the end */
}
END_TEST

/* A directory the user named must exist: exit 8 before any work, and no log beside it. */
START_TEST(setup_named_output_dir_missing)
{
	struct build_opts o;
	struct recipe r;
	struct build b;

	init(&o, &r, &b);
	o.output = xasprintf("%s/missing/x.ext4", dir);
	ck_assert_int_eq(pipeline_setup(&o, &r, &b), -MKI_E_IMAGE);
	ck_assert_int_eq(b.log_open, 0);
	ck_assert_ptr_null(o.st.work_dir);
	ck_assert_int_eq(pipeline_finish(&o, &r, &b, -MKI_E_IMAGE), -MKI_E_IMAGE);
	release(&o, &b);
}
END_TEST

/* The build ended early on purpose (--until, --plan, --lock): success. */
START_TEST(finish_done_is_success)
{
	struct build_opts o;
	struct recipe r;
	struct build b;

	init(&o, &r, &b);
	ck_assert_int_eq(pipeline_finish(&o, &r, &b, BUILD_DONE), 0);
	ck_assert_int_eq(pipeline_finish(&o, &r, &b, 0), 0);
	ck_assert_int_eq(pipeline_finish(&o, &r, &b, -MKI_E_NETWORK), -MKI_E_NETWORK);
	release(&o, &b);
}
END_TEST

Suite *pipeline_suite(void)
{
	Suite *s = suite_create("pipeline");
	TCase *tc = tcase_create("pipeline");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, until_names);
	tcase_add_test(tc, setup_plan_only);
	tcase_add_test(tc, setup_default_disk_output);
	tcase_add_test(tc, setup_named_output_dir_missing);
	tcase_add_test(tc, finish_done_is_success);
	suite_add_tcase(s, tc);
	return s;
}
