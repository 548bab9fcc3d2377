/*
 * The build as a table of stages (builder/README.md, "Modules"): set up, run the rows in one loop
 * that times them, names the one that failed and stops where --until says, then finish.
 * main.c calls these in order: pipeline_setup, pipeline_run, pipeline_finish, pipeline_release.
 */
#ifndef MKI_PIPELINE_H
#define MKI_PIPELINE_H

#include "build.h"
#include "recipe/recipe.h"

/** --until's STAGE into *out; "hooks" is the configure stage's old name (mkimage(1)). 0 or -1. */
int pipeline_parse_until(const char *s, enum stage_id *out);

/**
 * Before the stages: the image's path and its companions' (o->output completed), its directory
 * checked (created when it is the default) and the build log opened beside it - from here on a
 * failure has a report and a log -, the cache and a work directory. 0 or a negative code (logged).
 */
int pipeline_setup(struct build_opts *o, const struct recipe *r, struct build *b);

/** The stages, in order, until one fails or ends the build: 0, BUILD_DONE or a negative code. */
int pipeline_run(struct build_opts *o, const struct recipe *r, struct build *b);

/**
 * The outcome of what ran (`ret`, from any point of the build): BUILD_DONE is success, a signal
 * is "interrupted"; a failure with the log open leaves NAME.report.json beside where the image
 * would have been. Returns 0 or the negative code main() exits with.
 */
int pipeline_finish(struct build_opts *o, const struct recipe *r, struct build *b, int ret);

/** The stages' outputs freed, the work directory removed (or kept), the log committed. */
void pipeline_release(struct build_opts *o, struct build *b);

#endif
