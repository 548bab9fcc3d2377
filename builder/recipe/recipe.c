/*
 * The recipe: libconfig file -> validated `struct recipe`, with FILE:LINE errors.
 *
 * Every key is a row of recipe_keys[] (recipe_keys.c): its section, type, default, one-line doc,
 * whether it changes the configured tree, and where its value lives. This file loads (the
 * @include checks, libconfig, the digest) and hands that table to the walker (recipe_read.c) that
 * parses, writes the normalized form (--check, the digest) and the layer key's recipe part, and
 * releases.
 */
#include "recipe.h"

#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debian/arch.h"
#include "debian/pathfilter.h"
#include "lib/err.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/manifest.h"
#include "lib/readfile.h"
#include "recipe_lint.h"
#include "recipe_parse.h"

#define RECIPE_MAX (1u << 20) /* a recipe or an @include file */
#define INCLUDE_DEPTH 8

/* ---- the normalized form, its digests, the layer key's part --------------------------------- */

void recipe_format(const struct recipe *r, struct buf *b)
{
	recipe_walk_format(&recipe_table, r, b, 0);
}

void recipe_field_digests(const struct recipe *r, struct strv *out)
{
	recipe_walk_digests(&recipe_table, r, out);
}

void recipe_format_tree(const struct recipe *r, struct buf *out)
{
	recipe_walk_tree(&recipe_table, r, out);
	/* mkimage writes the initramfs' dm-verity support before configuring (configure/bootcfg.h) */
	if (recipe_disk_root_verity(r) >= 0)
		buf_adds(out, "recipe initramfs dm-verity\n");
}

static void json_setting(struct buf *b, const config_setting_t *s, const char *indent);

/* A group's members or a list's elements, one a line. */
static void json_children(struct buf *b, const config_setting_t *s, const char *indent, int obj)
{
	char *inner = xasprintf("%s  ", indent);
	int i, n = config_setting_length(s);

	buf_adds(b, obj ? "{" : "[");
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		buf_addf(b, "%s\n%s", i ? "," : "", inner);
		if (obj)
			json_key(b, config_setting_name(e));
		json_setting(b, e, inner);
	}
	buf_addf(b, "%s%s", n ? "\n" : "", n ? indent : "");
	buf_adds(b, obj ? "}" : "]");
	free(inner);
}

static void json_setting(struct buf *b, const config_setting_t *s, const char *indent)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_GROUP: json_children(b, s, indent, 1); break;
	case CONFIG_TYPE_ARRAY:
	case CONFIG_TYPE_LIST: json_children(b, s, indent, 0); break;
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64: buf_addf(b, "%lld", config_setting_get_int64(s)); break;
	case CONFIG_TYPE_FLOAT: buf_addf(b, "%.17g", config_setting_get_float(s)); break;
	case CONFIG_TYPE_BOOL: buf_adds(b, config_setting_get_bool(s) ? "true" : "false"); break;
	case CONFIG_TYPE_STRING: json_str(b, config_setting_get_string(s)); break;
	default: buf_adds(b, "null"); break;
	}
}

/*
 * The normalized form read back by libconfig and written as JSON: the one formatter stays the
 * truth, and libconfig's own reading of it is what --check promises a recipe means.
 */
int recipe_format_json(const struct recipe *r, struct buf *out)
{
	struct buf norm = { 0 };
	config_t cfg;
	int ret = 0;

	config_init(&cfg);
	recipe_format(r, &norm);
	if (config_read_string(&cfg, norm.p ? norm.p : "") != CONFIG_TRUE)
		ret = log_errno(-MKI_E_RECIPE, "cannot write '%s' as JSON: its normalized form "
				"does not parse (line %d: %s); please report this", r->file,
				config_error_line(&cfg), config_error_text(&cfg));
	if (!ret) {
		json_setting(out, config_root_setting(&cfg), "");
		buf_adds(out, "\n");
	}
	config_destroy(&cfg);
	buf_release(&norm);
	return ret;
}

/* ---- the table's sections ------------------------------------------------------------------ */

const char *recipe_section_name(enum recipe_section s)
{
	return recipe_table.sections[s].name;
}

void *recipe_section_base(struct recipe *r, enum recipe_section s)
{
	const struct recipe_key *k;
	char *parent;

	if (s == RECIPE_IN_TOP)
		return r;
	for (k = recipe_keys; k->name; k++)
		if ((k->type == RECIPE_GROUP || k->type == RECIPE_LIST) && k->sub == s)
			break;
	parent = recipe_section_base(r, k->section);
	if (!parent || k->type == RECIPE_GROUP)
		return parent ? parent + k->offset : NULL;
	if (!*(size_t *)(parent + k->count))
		return NULL;
	return *(void **)(parent + k->offset);
}

void recipe_release(struct recipe *r)
{
	recipe_walk_release(&recipe_table, RECIPE_IN_TOP, r);
	free(r->file);
	free(r->dir);
	memset(r, 0, sizeof(*r));
}

void recipe_add_package(struct recipe *r, const char *name, const char *arch,
			const char *version)
{
	struct recipe_package *p;
	struct buf norm = { 0 };

	r->packages = xrealloc(r->packages, (r->n_packages + 2) * sizeof(*r->packages));
	p = &r->packages[r->n_packages++];
	*p = (struct recipe_package){ xstrdup(name), arch ? xstrdup(arch) : NULL,
				      version ? xstrdup(version) : NULL, 0 };
	memset(p + 1, 0, sizeof(*p));
	recipe_walk_format(&recipe_table, r, &norm, 1);
	hash_sha256_hex(norm.p, norm.len, r->digest);
	buf_release(&norm);
}

void recipe_all_archs(const struct recipe *r, struct strv *out)
{
	size_t i;

	strv_push(out, r->arch);
	for (i = 0; i < r->aux_archs.n; i++)
		strv_push(out, r->aux_archs.v[i]);
}

static char *abs_dir_of(const char *path)
{
	char *copy = xstrdup(path), *slash = strrchr(copy, '/'), *real;

	if (slash)
		*slash = 0;
	real = realpath(slash ? (copy[0] ? copy : "/") : ".", NULL);
	free(copy);
	return real;
}

/* Validate a parsed configuration into `r` (whose file and dir are set); releases `cfg`. */
static int finish_load(struct recipe *r, config_t *cfg, int parsed,
		       const struct recipe_checks *checks)
{
	struct recipe_ctx c = { r, r->file, checks, &recipe_table };
	const config_setting_t *root = config_root_setting(cfg);
	struct buf norm = { 0 };
	int ret = 0;

	if (!parsed) {
		log_error("%s:%d: %s", config_error_file(cfg) ? config_error_file(cfg) : r->file,
			  config_error_line(cfg), config_error_text(cfg));
		ret = -MKI_E_RECIPE;
	}
	if (!ret)
		ret = recipe_check_keys(&c, root, RECIPE_IN_TOP);
	if (!ret)
		ret = recipe_read_keys(&c, root, RECIPE_IN_TOP, r);
	if (!ret) {
		recipe_walk_format(&recipe_table, r, &norm, 1);
		hash_sha256_hex(norm.p, norm.len, r->digest);
		buf_release(&norm);
	}
	/* Hashing the recipe's files stops at SIGINT/SIGTERM: its digest is then incomplete. */
	if (!ret && err_interrupted())
		ret = -MKI_E_INTERRUPTED;
	config_destroy(cfg);
	if (ret)
		recipe_release(r);
	return ret;
}

static void start_load(struct recipe *r, config_t *cfg, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->file = xstrdup(name);
	config_init(cfg);
}

/* The next `@include "FILE"` directive at or after `p` (libconfig's syntax); NULL when none. */
static const char *next_include(const char *p, char **file, unsigned *line)
{
	for (; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p), (*line)++) {
		const char *q = p + strspn(p, " \t"), *end;

		if (strncmp(q, "@include", 8))
			continue;
		q += 8;
		q += strspn(q, " \t");
		if (*q != '"' || !(end = strpbrk(q + 1, "\"\n")) || *end != '"')
			continue; /* libconfig reports the syntax error itself */
		*file = xstrndup(q + 1, (size_t)(end - q - 1));
		return end;
	}
	return NULL;
}

/*
 * libconfig 1.5 opens @include files itself, with no hook to bound it: every file it will open
 * is read here first (a regular file, within RECIPE_MAX, at most INCLUDE_DEPTH deep), so a FIFO,
 * /dev/zero or an include loop fails with FILE:LINE instead of hanging the build.
 */
static int check_includes(const char *file, const char *text, const char *dir, int depth)
{
	const char *p = text;
	unsigned line = 1;
	char *inc = NULL;
	int ret = 0;

	while (!ret && (p = next_include(p, &inc, &line))) {
		char *path = inc[0] == '/' ? xstrdup(inc) : xasprintf("%s/%s", dir, inc);
		struct buf b = { 0 };
		const char *kind = NULL;
		int r = depth >= INCLUDE_DEPTH ? -ELOOP : readfile_read(path, RECIPE_MAX, &b, &kind);

		if (r == -EINVAL)
			log_error("%s:%u: @include '%s' is %s, not a regular file", file, line, inc,
				  kind);
		else if (r == -ELOOP)
			log_error("%s:%u: @include '%s' nests more than %d deep (an include loop?)",
				  file, line, inc, INCLUDE_DEPTH);
		else if (r)
			log_error("%s:%u: cannot read @include '%s' ('%s'): %s", file, line, inc, path,
				  r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
		if (!r)
			r = recipe_lint_text(path, b.p);
		ret = r ? (r == -MKI_E_INTERRUPTED ? r : -MKI_E_RECIPE)
			: check_includes(path, b.p, dir, depth + 1);
		buf_release(&b);
		free(path);
		free(inc);
	}
	return ret;
}

int recipe_load(struct recipe *r, const char *path, const struct recipe_checks *checks)
{
	struct buf text = { 0 };
	const char *kind = NULL;
	config_t cfg;
	int ret;

	start_load(r, &cfg, path);
	r->dir = abs_dir_of(path);
	ret = r->dir ? readfile_read(path, RECIPE_MAX, &text, &kind) : -errno;
	if (ret == -EINVAL)
		log_error("recipe '%s' is %s, not a regular file", path, kind);
	else if (ret && ret != -MKI_E_INTERRUPTED)
		log_error("cannot read recipe '%s': %s", path,
			  ret == -EFBIG ? "larger than 1 MiB" : strerror(-ret));
	if (!ret)
		ret = recipe_lint_text(path, text.p);
	if (!ret)
		ret = check_includes(path, text.p, r->dir, 0);
	if (ret) {
		buf_release(&text);
		config_destroy(&cfg);
		recipe_release(r);
		return ret == -MKI_E_INTERRUPTED ? ret : -MKI_E_RECIPE;
	}
	config_set_include_dir(&cfg, r->dir);
	ret = finish_load(r, &cfg, config_read_string(&cfg, text.p), checks);
	buf_release(&text);
	return ret;
}

int recipe_parse_text(struct recipe *r, const char *text, const char *name, const char *dir,
		      const struct recipe_checks *checks)
{
	config_t cfg;

	start_load(r, &cfg, name);
	r->dir = xstrdup(dir);
	if (recipe_lint_text(name, text)) {
		config_destroy(&cfg);
		recipe_release(r);
		return -MKI_E_RECIPE;
	}
	return finish_load(r, &cfg, config_read_string(&cfg, text), checks);
}
