/* Recipe: the key table, and functions exported only for the unit tests and test drivers. */
#ifndef MKI_RECIPE_INTERNAL_H
#define MKI_RECIPE_INTERNAL_H

#include <stddef.h>

#include "recipe.h"

/* Where a key may be written: the top level, or a group (of a list) named by another key. */
enum recipe_section {
	RECIPE_IN_TOP,
	RECIPE_IN_SOURCES,  /* each element of sources: struct recipe_source */
	RECIPE_IN_PACKAGES, /* the packages group: fields of struct recipe itself */
	RECIPE_IN_HOOKS,    /* struct recipe_hook */
	RECIPE_IN_OVERLAYS, /* struct recipe_overlay */
	RECIPE_IN_IMAGE,    /* struct recipe_image */
	RECIPE_IN_DEVICES,  /* each element of image.devices: struct recipe_device */
	RECIPE_IN_DISK,     /* the disk group: struct recipe_disk */
	RECIPE_IN_PARTITIONS, /* each element of disk.partitions: struct recipe_partition */
	RECIPE_IN_LAYERS,   /* the layers group: struct recipe_layers */
	RECIPE_IN_UPDATE,   /* the update group: struct recipe_update */
	RECIPE_IN_SDK,      /* the sdk group: struct recipe_sdk */
	RECIPE_N_SECTIONS
};

/* What a key holds, and so how its value is stored at its offset, shown and freed. */
enum recipe_type {
	RECIPE_STRING,   /* char *; NULL: unset */
	RECIPE_BOOL,     /* int, 0 or 1 */
	RECIPE_UINT,     /* unsigned, 0 to max */
	RECIPE_STRV,     /* struct strv: a list of strings (or one string) */
	RECIPE_ENUM,     /* int: an index into choices, written as a string */
	RECIPE_MODE,     /* unsigned: an octal string such as "0600" */
	RECIPE_SIZE,     /* uint64_t bytes: "auto" (0) or a size such as "2G" */
	RECIPE_PATH,     /* char *: a file beside the recipe, made absolute */
	RECIPE_PATHS,    /* struct strv: a list of such files */
	RECIPE_PKGSPECS, /* struct recipe_package * at offset, its length at count */
	RECIPE_OWNER,    /* unsigned uid at offset, gid at count: "UID:GID" */
	RECIPE_DEVTYPE,  /* char 'c', 'b' or 'p': "char", "block" or "fifo" */
	RECIPE_GROUP,    /* the keys of `sub`, in a struct at offset */
	RECIPE_LIST,     /* an array of `sub` structs at offset, its length at count */
};

struct recipe_ctx;        /* the parser's state (recipe_parse.h) */
struct config_setting_t;  /* libconfig's, seen only by the recipe's files */

/*
 * One key of the recipe. The parser (unknown keys, types, defaults), recipe_release(), the
 * normalized form of --check and the recipe digest, and the layer key (recipe_format_tree) all
 * walk this table; a new key is one entry here, its field in recipe.h and its man page entry.
 */
struct recipe_key {
	enum recipe_section section;
	const char *name;
	enum recipe_type type;
	const char *def;      /* the default, as written in a recipe; NULL: none or computed */
	const char *def_doc;  /* what the default is, when def cannot say it */
	const char *doc;      /* one line for the reference */
	int tree;             /* 1: its value changes the configured tree (the layer key) */
	size_t offset;        /* of its value in the section's struct */
	size_t count;         /* PACKAGES, LIST: of the length; OWNER: of the gid */
	unsigned max;         /* UINT */
	const char *const *choices; /* ENUM, NULL-terminated */
	const char *hint;     /* what a wrong value is told it must be */
	enum recipe_section sub;    /* GROUP, LIST */
	int required;         /* GROUP: "'KEY' is required: HINT" when absent */
	/* Instead of the type's own reading (which sets def first); 0 or a logged -MKI_E_RECIPE. */
	int (*parse)(struct recipe_ctx *c, const struct config_setting_t *g,
		     const struct recipe_key *k, void *base);
	/* After reading, present or not: what the type alone cannot check. */
	int (*check)(struct recipe_ctx *c, const struct config_setting_t *g,
		     const struct recipe_key *k, void *base);
	/* Instead of the type's own value text in the normalized form. */
	void (*format)(struct buf *b, const struct recipe_key *k, const void *base, int digest);
	/* Whether the normalized form shows it (NULL: always): a default left out keeps digests. */
	int (*shown)(const struct recipe_key *k, const void *base, int digest);
};

/** Every key, sections in the normalized form's order; ends with a NULL name. */
extern const struct recipe_key recipe_keys[];

/** "" for the top level, else the key path of the group: "sources", "image.devices", ... */
const char *recipe_section_name(enum recipe_section s);

/** The struct of section `s` in `r`: for a list, its first element (NULL when it is empty). */
void *recipe_section_base(struct recipe *r, enum recipe_section s);

/** Append the normalized value of `k` in `base` (its section's struct) to `out`. */
void recipe_format_value(const struct recipe_key *k, const void *base, struct buf *out);

/**
 * Parse "name[:arch][=version]" into `p` (strings allocated). Returns 0, or -MKI_E_RECIPE with a
 * reason in `*why` (static string).
 */
int recipe_parse_package(const char *spec, struct recipe_package *p, const char **why);

/** Whether `name` is a valid host name (RFC 1123 labels, at most 64 bytes). 1 or 0. */
int recipe_valid_hostname(const char *name);


#endif
