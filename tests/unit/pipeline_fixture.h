/* A temporary directory for each test of the pipeline family's suites (each test forks). */
#ifndef MKI_TEST_PIPELINE_FIXTURE_H
#define MKI_TEST_PIPELINE_FIXTURE_H

#include <check.h>
#include <stdlib.h>

#include "lib/fsutil.h"
#include "lib/log.h"

static char dir[] = "/tmp/mkimage-pipeline-XXXXXX";

static inline void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	log_set_level(LOG_QUIET);
}

static inline void teardown(void)
{
	fsutil_remove_tree(dir);
}

#endif
