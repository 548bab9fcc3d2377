/*
 * str: string predicates and distance. Including it brings the string toolkit every module uses
 * (x.h allocation, strv.h vectors, buf.h buffers) and banned.h, as git's git-compat-util.h does.
 */
#ifndef MKI_STR_H
#define MKI_STR_H

#include "buf.h"
#include "strv.h"
#include "x.h"

int str_starts_with(const char *s, const char *prefix);
int str_ends_with(const char *s, const char *suffix);
/** Levenshtein distance, for "did you mean" suggestions. */
unsigned str_distance(const char *a, const char *b);

#include "banned.h"
#endif
