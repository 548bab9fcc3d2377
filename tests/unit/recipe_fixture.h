/* A temporary directory and recipes written into it, for the suites of the recipe_* modules. */
#ifndef MKI_TEST_RECIPE_FIXTURE_H
#define MKI_TEST_RECIPE_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/format.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "recipe/recipe.h"
#include "recipe/recipe_internal.h"

/* Overlays are not read here; formats are the image family's. */
static const struct recipe_checks unit_checks = { NULL, format_recipe_check };

/* One per test process: each test forks. */
static char dir[] = "/tmp/mkimage-recipe-XXXXXX";

static inline void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	log_set_level(LOG_QUIET);
}

static inline char *write_recipe(const char *text)
{
	char *path = xasprintf("%s/r.cfg", dir);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

#define MINIMAL "name = \"t\"; architecture = \"armhf\"; packages = { install = [ \"hello\" ]; };\n"

#endif
