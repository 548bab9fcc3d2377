/*
 * The parser's state and readers, shared by recipe.c (the key table) and the files that parse
 * one section of it (recipe_disk.c). Seen only inside the recipe family.
 */
#ifndef MKI_RECIPE_PARSE_H
#define MKI_RECIPE_PARSE_H

#include <libconfig.h>

#include "recipe_internal.h"

struct recipe_ctx {
	struct recipe *r;
	const char *file;
	const struct recipe_checks *checks;
};

/** Log "FILE:LINE: MESSAGE" for setting `s` (line 0 without one); returns -MKI_E_RECIPE. */
int recipe_fail(struct recipe_ctx *c, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** A member of group `g`; NULL when absent or when the group itself is. */
const config_setting_t *recipe_member(const config_setting_t *g, const char *key);
/** Optional string member into `*out` (replacing it): 0, or logged error if the wrong type. */
int recipe_get_str(struct recipe_ctx *c, const config_setting_t *g, const char *key, char **out);
/** Optional boolean member. */
int recipe_get_bool(struct recipe_ctx *c, const config_setting_t *g, const char *key, int *out);
/** "../images/x" against the recipe's directory; newly allocated. */
char *recipe_resolve_output(const char *dir, const char *out);

/* The disk section's rows (recipe_disk.c): see recipe_keys[]. */
int recipe_disk_finish(struct recipe_ctx *c, const config_setting_t *g, void *base);
int recipe_disk_finish_partition(struct recipe_ctx *c, const config_setting_t *g, void *base);
int recipe_disk_parse_output(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base);
int recipe_disk_parse_size(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base);
int recipe_disk_parse_type(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base);
int recipe_disk_parse_contents(struct recipe_ctx *c, const config_setting_t *g,
			       const struct recipe_key *k, void *base);
int recipe_disk_parse_format(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base);
int recipe_disk_check_compression(struct recipe_ctx *c, const config_setting_t *g,
				  const struct recipe_key *k, void *base);
void recipe_disk_fmt_size(struct buf *b, const struct recipe_key *k, const void *base, int digest);
void recipe_disk_fmt_contents(struct buf *b, const struct recipe_key *k, const void *base,
			      int digest);
void recipe_disk_fmt_format(struct buf *b, const struct recipe_key *k, const void *base,
			    int digest);
int recipe_disk_shown(const struct recipe_key *k, const void *base, int digest);
int recipe_disk_shown_contents(const struct recipe_key *k, const void *base, int digest);
int recipe_disk_shown_output(const struct recipe_key *k, const void *base, int digest);

#endif
