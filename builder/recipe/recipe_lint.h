/*
 * libconfig's traps, found in a recipe's text before libconfig reads it: what it accepts silently
 * (adjacent string literals joined into one) and what it reports only as a bare "syntax error"
 * (a group list written with [ ], a string list written with { }).
 */
#ifndef MKI_RECIPE_LINT_H
#define MKI_RECIPE_LINT_H

/**
 * Scan the libconfig text `text` of `file` (a recipe or an @include'd file; both borrowed):
 * comments (#, //, block) and string escapes are skipped. On the first trap logs
 * "FILE:LINE: ..." saying what to write instead and returns -MKI_E_RECIPE; 0 when none.
 */
int recipe_lint_text(const char *file, const char *text);

#endif
