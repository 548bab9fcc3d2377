/*
 * The parser's state, the key table's shape and the readers, shared by the recipe's files:
 * recipe.c (load, print, release) hands the table of recipe_keys.c, whose rows (and those of
 * recipe_disk.c) read through recipe_read.c, to recipe_read.c's walker. Seen only inside the
 * recipe family.
 */
#ifndef MKI_RECIPE_PARSE_H
#define MKI_RECIPE_PARSE_H

#include <libconfig.h>

#include "recipe_internal.h"

struct recipe_ctx;

/* A section: what its unknown-key message calls it, what an element that is no group is told. */
struct recipe_section_info {
	const char *name;  /* its key path (recipe_section_name) */
	const char *where; /* "unknown key 'x' in WHERE" */
	const char *shape; /* a list's element that is not a group */
	size_t size;       /* of a list's element */
	size_t line;       /* of a list element's `line` */
	/* After its keys: the checks that span them. */
	int (*finish)(struct recipe_ctx *c, const config_setting_t *g, void *base);
};

/* A key table and its sections, as the walker (recipe_read.c) runs it. */
struct recipe_table {
	const struct recipe_key *keys;                /* ends with a NULL name */
	const struct recipe_section_info *sections;   /* indexed by enum recipe_section */
};

/** The recipe's own table (recipe_keys.c): recipe_keys[] and its sections. */
extern const struct recipe_table recipe_table;

struct recipe_ctx {
	struct recipe *r;
	const char *file;
	const struct recipe_checks *checks;
	const struct recipe_table *t; /* what the walker reads */
};

/* Where a row's value lives in its section's struct. */
static inline void *recipe_field(void *base, size_t offset)
{
	return (char *)base + offset;
}

static inline const void *recipe_cfield(const void *base, size_t offset)
{
	return (const char *)base + offset;
}

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

/* ---- the readers a row uses (recipe_read.c) ---- */

/** An array of strings (a single string is accepted as a one-element array). */
int recipe_get_strv(struct recipe_ctx *c, const config_setting_t *g, const char *key,
		    struct strv *out);
/** Resolve a recipe-relative path and require that it exists. */
int recipe_get_path(struct recipe_ctx *c, const config_setting_t *s, const char *what, char **out);
/** A list of path filter globs or kept locales, each checked with its own line. */
int recipe_get_checked(struct recipe_ctx *c, const config_setting_t *g, const char *key,
		       int (*check)(const char *, const char **), struct strv *out);
/** An optional unsigned member of at most `max`. */
int recipe_get_uint(struct recipe_ctx *c, const config_setting_t *g, const char *key, unsigned max,
		    unsigned *out);
/** libconfig string literal with escapes, so the normalized form parses back. */
void recipe_fmt_str(struct buf *b, const char *s);
/** A key shown in the normalized form only when set: recipes written before it keep their digest. */
int recipe_shown_if_set(const struct recipe_key *k, const void *base, int digest);
/** A boolean whose default is true, only when turned off: older recipes keep their digest. */
int recipe_shown_if_false(const struct recipe_key *k, const void *base, int digest);
/** A number shown only when it is not its default. */
int recipe_shown_if_not_default(const struct recipe_key *k, const void *base, int digest);

/* ---- the walker (recipe_read.c) ---- */

/** Refuse a key of `group` that section `sec` of c->t does not have (naming the closest one). */
int recipe_check_keys(struct recipe_ctx *c, const config_setting_t *group, enum recipe_section sec);
/**
 * Read every key of section `sec` from `g` (NULL: an absent group, every default) into `base`,
 * then the section's finish: 0 or a logged -MKI_E_RECIPE.
 */
int recipe_read_keys(struct recipe_ctx *c, const config_setting_t *g, enum recipe_section sec,
		     void *base);
/** A list of groups, key `k` of `g`: an array of zeroed structs, each read by its section. */
int recipe_read_list(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		     void *base);
/** The normalized form of `r` (digest: files by content, no output path) appended to `b`. */
void recipe_walk_format(const struct recipe_table *t, const struct recipe *r, struct buf *b,
			int digest);
/** As recipe_field_digests, for table `t`. */
void recipe_walk_digests(const struct recipe_table *t, const struct recipe *r, struct strv *out);
/** Every tree-affecting key of `r`, "recipe PATH VALUE" a line, appended to `out`. */
void recipe_walk_tree(const struct recipe_table *t, const struct recipe *r, struct buf *out);
/** Free what section `sec` of `base` holds (not `base` itself). */
void recipe_walk_release(const struct recipe_table *t, enum recipe_section sec, void *base);

/* The disk section's rows (recipe_disk.c): see recipe_keys[]. */
int recipe_disk_finish(struct recipe_ctx *c, const config_setting_t *g, void *base);
int recipe_board_check(struct recipe_ctx *c, const config_setting_t *g,
			    const struct recipe_key *k, void *base);
int recipe_board_check_table(struct recipe_ctx *c, const config_setting_t *g,
			    const struct recipe_key *k, void *base);
/* The board's defaults and rules on disk `d`, its partitions read (recipe_board.c). */
int recipe_board_apply(struct recipe_ctx *c, const config_setting_t *g, struct recipe_disk *d);
/* Partition i's element of the disk's list (the group for a board's loader), for messages. */
const config_setting_t *recipe_disk_part_setting(const config_setting_t *g,
						 const struct recipe_disk *d, size_t i);
/* Partition `p`'s type set to the type named `name` ("raw"), as the recipe would name it. */
void recipe_disk_set_type(struct recipe_partition *p, const char *name);

/* recipe_sdk.c: the sdk group (mkimage --sdk), shown only when set, never in the digest */
int recipe_sdk_shown(const struct recipe_key *k, const void *base, int digest);
int recipe_sdk_shown_key(const struct recipe_key *k, const void *base, int digest);
int recipe_sdk_check_arch(struct recipe_ctx *c, const config_setting_t *g,
			  const struct recipe_key *k, void *base);
int recipe_sdk_parse_packages(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_key *k, void *base);
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

/* The layers section's rows (recipe_layers.c): see recipe_keys[]. */
int recipe_layers_shown(const struct recipe_key *k, const void *base, int digest);
int recipe_layers_shown_key(const struct recipe_key *k, const void *base, int digest);
int recipe_layers_check_registry(struct recipe_ctx *c, const config_setting_t *g,
				 const struct recipe_key *k, void *base);
int recipe_layers_parse_key(struct recipe_ctx *c, const config_setting_t *g,
			    const struct recipe_key *k, void *base);
int recipe_layers_parse_trusted(struct recipe_ctx *c, const config_setting_t *g,
				const struct recipe_key *k, void *base);

/* The update section's rows (recipe_update.c): see recipe_keys[]. */
int recipe_update_finish(struct recipe_ctx *c, const config_setting_t *g, void *base);
int recipe_update_shown(const struct recipe_key *k, const void *base, int digest);
int recipe_update_shown_cert(const struct recipe_key *k, const void *base, int digest);
int recipe_update_shown_key(const struct recipe_key *k, const void *base, int digest);
int recipe_update_check_format(struct recipe_ctx *c, const config_setting_t *g,
				const struct recipe_key *k, void *base);
int recipe_update_parse_path(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base);
int recipe_update_check_sign(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base);
int recipe_update_check_attempts(struct recipe_ctx *c, const config_setting_t *g,
				 const struct recipe_key *k, void *base);
int recipe_update_check_text(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base);
/* A verified root's slots (recipe_update_verity.c), from recipe_update_finish. */
int recipe_update_check_verity_root(struct recipe_ctx *c, const config_setting_t *g,
				    struct recipe_update *u, const struct recipe_disk *d);
int recipe_update_check_verity_slots(struct recipe_ctx *c, const config_setting_t *g,
				     struct recipe_update *u, const struct recipe_disk *d);

#endif
