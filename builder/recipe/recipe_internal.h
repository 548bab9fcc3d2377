/* Recipe: functions exported only for the unit tests (and test drivers); not part of the contract. */
#ifndef MKI_RECIPE_INTERNAL_H
#define MKI_RECIPE_INTERNAL_H

#include "recipe.h"

/**
 * Parse "name[:arch][=version]" into `p` (strings allocated). Returns 0, or -MKI_E_RECIPE with a
 * reason in `*why` (static string).
 */
int recipe_parse_package(const char *spec, struct recipe_package *p, const char **why);

/** As recipe_load, from a string; `name` is used in messages, `dir` resolves relative paths. */
int recipe_parse_text(struct recipe *r, const char *text, const char *name, const char *dir,
		      recipe_format_fn *formats);

#endif
