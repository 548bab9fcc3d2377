/* The stages before the sandbox (pipeline/stage_fetch.c): room for the image, the network record. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/x.h"
#include "pipeline_fixture.h"
#include "pipeline/stage.h"
#include "pipeline/stage_ctx.h"

/* Installed-Size counts at most 1 TiB a package (plan.h): two of them want more than /tmp has. */
static char huge[] = "1073741824", small[] = "4";

/* Whether an error logged so far says `what`. */
static int logged(const char *what)
{
	const struct strv *e = log_errors();
	size_t i;

	for (i = 0; i < e->n; i++)
		if (strstr(e->v[i], what))
			return 1;
	return 0;
}

static void plan_of(struct plan *p, struct plan_entry *v, size_t n, char *size)
{
	size_t i;

	*p = (struct plan){ .v = v, .n = n };
	for (i = 0; i < n; i++)
		v[i] = (struct plan_entry){ .installed_size = size };
}

/* An image that cannot fit is refused before anything is downloaded, naming the directory. */
START_TEST(room_refused)
{
	struct build_opts o = { .until = ST_IMAGE };
	struct build b = { .work_lock = -1 };
	struct plan_entry v[2];
	struct recipe r = { 0 };

	o.output = xasprintf("%s/x.ext4", dir);
	plan_of(&b.plan, v, 2, huge);
	ck_assert_int_eq(stage_room(&o, &r, &b), -MKI_E_NOSPACE);
	ck_assert(logged("not enough free space for the image in '/tmp/mkimage-pipeline-"));
	free(o.output);
}
END_TEST

/* Without an image (--until before it) there is nothing to make room for; a small one fits. */
START_TEST(room_when_an_image_is_written)
{
	struct build_opts o = { .until = ST_CONFIGURE };
	struct build b = { .work_lock = -1 };
	struct plan_entry v[2];
	struct recipe r = { 0 };

	o.output = xasprintf("%s/x.ext4", dir);
	plan_of(&b.plan, v, 2, huge);
	ck_assert_int_eq(stage_room(&o, &r, &b), 0);
	o.until = ST_IMAGE;
	plan_of(&b.plan, v, 2, small);
	ck_assert_int_eq(stage_room(&o, &r, &b), 0);
	free(o.output);
}
END_TEST

/* Before any download the report's network is an empty list. */
START_TEST(network_empty)
{
	struct buf out = { 0 };

	stage_network_json(&out);
	ck_assert_str_eq(out.p, "  \"network\": []");
	buf_release(&out);
}
END_TEST

Suite *stage_fetch_suite(void)
{
	Suite *s = suite_create("stage_fetch");
	TCase *tc = tcase_create("stage_fetch");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, room_refused);
	tcase_add_test(tc, room_when_an_image_is_written);
	tcase_add_test(tc, network_empty);
	suite_add_tcase(s, tc);
	return s;
}
