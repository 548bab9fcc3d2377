/*
 * The recipe's readers: one setting of each type read and checked (FILE:LINE errors), and the
 * walker that runs a key table (recipe_keys.c) over a libconfig tree - parsing every section
 * the same way, writing the normalized form, its digests and the layer key's part, releasing.
 * The table is handed in (struct recipe_table): nothing here knows its rows.
 */
#include "recipe_parse.h"

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

/* ---- one setting of each type --------------------------------------------------------------- */

int recipe_fail(struct recipe_ctx *c, const config_setting_t *s, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	log_error("%s:%d: %s", c->file, s ? config_setting_source_line(s) : 0, msg);
	free(msg);
	return -MKI_E_RECIPE;
}

/* A member of group `g`; NULL when absent or when the group itself is (image = { } left out). */
const config_setting_t *recipe_member(const config_setting_t *g, const char *key)
{
	return g ? config_setting_get_member(g, key) : NULL;
}

/* Optional string member: 0 if absent or set, error if the wrong type. */
int recipe_get_str(struct recipe_ctx *c, const config_setting_t *g, const char *key, char **out)
{
	const config_setting_t *s = recipe_member(g, key);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return recipe_fail(c, s, "'%s' must be a string (in double quotes)", key);
	free(*out);
	*out = xstrdup(config_setting_get_string(s));
	return 0;
}

int recipe_get_bool(struct recipe_ctx *c, const config_setting_t *g, const char *key, int *out)
{
	const config_setting_t *s = recipe_member(g, key);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return recipe_fail(c, s, "'%s' must be true or false", key);
	*out = config_setting_get_bool(s);
	return 0;
}

int recipe_get_uint(struct recipe_ctx *c, const config_setting_t *g, const char *key, unsigned max,
		    unsigned *out)
{
	const config_setting_t *s = recipe_member(g, key);
	long long v;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
		return recipe_fail(c, s, "'%s' must be an integer", key);
	v = config_setting_get_int64(s);
	if (config_setting_type(s) == CONFIG_TYPE_INT)
		v = config_setting_get_int(s);
	if (v < 0 || (unsigned long long)v > max)
		return recipe_fail(c, s, "'%s' must be between 0 and %u, not %lld", key, max, v);
	*out = (unsigned)v;
	return 0;
}

/* An array of strings (a single string is accepted as a one-element array). */
int recipe_get_strv(struct recipe_ctx *c, const config_setting_t *g, const char *key,
		    struct strv *out)
{
	const config_setting_t *s = recipe_member(g, key);
	int i;

	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		strv_push(out, config_setting_get_string(s));
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return recipe_fail(c, s, "'%s' must be a list of strings: [ \"a\", \"b\" ]", key);
	for (i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		if (config_setting_type(e) == CONFIG_TYPE_GROUP)
			return recipe_fail(c, e, "'%s' is a list of strings: write [ \"a\", \"b\" ], "
					   "not ( { ... } )", key);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return recipe_fail(c, e, "'%s' must hold only strings", key);
		strv_push(out, config_setting_get_string(e));
	}
	return 0;
}

/* One of k->choices, stored as its index. */
static int get_enum(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		    int *out)
{
	char *v = NULL;
	int i, ret = recipe_get_str(c, g, k->name, &v);

	if (ret || !v)
		return ret;
	for (i = 0; k->choices[i]; i++)
		if (!strcmp(v, k->choices[i]))
			break;
	if (k->choices[i])
		*out = i;
	else
		ret = recipe_fail(c, recipe_member(g, k->name), "'%s' must be %s, not '%s'", k->name, k->hint, v);
	free(v);
	return ret;
}

/* Modes are octal strings ("0600"): libconfig reads 0600 as decimal six hundred. */
static int get_mode(struct recipe_ctx *c, const config_setting_t *g, const char *key,
		    unsigned *out)
{
	const config_setting_t *s = recipe_member(g, key);
	const char *v;
	char *end;
	unsigned long m;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return recipe_fail(c, s, "'%s' must be an octal string such as \"0600\" (libconfig reads a bare 0600 as decimal)",
			    key);
	v = config_setting_get_string(s);
	m = strtoul(v, &end, 8);
	if (!*v || *end || m > 07777)
		return recipe_fail(c, s, "'%s' must be octal digits up to \"07777\", not '%s'", key, v);
	*out = (unsigned)m;
	return 0;
}

/* Resolve a recipe-relative path and require that it exists. */
int recipe_get_path(struct recipe_ctx *c, const config_setting_t *s, const char *what, char **out)
{
	const char *p = config_setting_get_string(s);

	char *joined = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", c->r->dir, p);

	const char *kind = NULL;
	int fd, ret = 0;

	free(*out);
	*out = realpath(joined, NULL);
	if (!*out || access(*out, R_OK) != 0) {
		ret = recipe_fail(c, s, "%s '%s' not found (looked at '%s'): %s", what, p, joined,
			   strerror(errno));
		free(joined);
		return ret;
	}
	/* Read later (hashed for the lock, copied, parsed): a FIFO or a device would hang that. */
	fd = readfile_open(*out, &kind);
	if (fd == -EINVAL)
		ret = recipe_fail(c, s, "%s '%s' is %s, not a regular file: name a file", what, p, kind);
	else if (fd < 0)
		ret = recipe_fail(c, s, "%s '%s' cannot be read: %s", what, p, strerror(-fd));
	else
		close(fd);
	free(joined);
	return ret;
}

/* "UID:GID", numeric: the ids the build's commands have (0-65535). */
static int get_owner(struct recipe_ctx *c, const config_setting_t *g, const char *key,
		     unsigned *uid_out, unsigned *gid_out)
{
	const config_setting_t *s = recipe_member(g, key);
	char *v = NULL, *end = NULL;
	unsigned long uid = 0, gid = 0;
	int ret = recipe_get_str(c, g, key, &v);

	if (ret || !v)
		return ret;
	errno = 0;
	if (v[0] >= '0' && v[0] <= '9')
		uid = strtoul(v, &end, 10);
	if (end && *end == ':' && end[1] >= '0' && end[1] <= '9')
		gid = strtoul(end + 1, &end, 10);
	else
		end = NULL;
	if (!end || *end || errno || uid > 65535 || gid > 65535)
		ret = recipe_fail(c, s, "'%s' must be numeric \"UID:GID\" with ids up to 65535 (such as "
			   "\"0:0\"), not '%s'", key, v);
	*uid_out = (unsigned)uid;
	*gid_out = (unsigned)gid;
	free(v);
	return ret;
}

/* libconfig string literal with escapes, so the normalized form parses back. */
void recipe_fmt_str(struct buf *b, const char *s)
{
	if (!s) /* a recipe made by hand (the test drivers) may leave a string unset */
		s = "";
	buf_adds(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			buf_addf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			buf_addf(b, "\\x%02x", (unsigned char)*s);
		else
			buf_add(b, s, 1);
	}
	buf_adds(b, "\"");
}

static void fmt_path(struct buf *b, const char *path, int digest)
{
	char hex[65];

	if (!digest) {
		recipe_fmt_str(b, path);
		return;
	}
	if (hash_file_hex(path, HASH_SHA256, hex))
		snprintf(hex, sizeof(hex), "unreadable");
	buf_addf(b, "\"sha256:%s\"", hex);
}

static void fmt_list(struct buf *b, const struct strv *v, int paths, int digest)
{
	size_t i;

	buf_adds(b, "[");
	for (i = 0; i < v->n; i++) {
		buf_adds(b, i ? ", " : " ");
		if (paths)
			fmt_path(b, v->v[i], digest);
		else
			recipe_fmt_str(b, v->v[i]);
	}
	buf_adds(b, v->n ? " ]" : "]");
}

/* ---- values read alone: host names, package specs, output paths, sizes ------------------- */

int recipe_valid_hostname(const char *name)
{
	const char *p = name;
	size_t label = 0;

	if (!*name || strlen(name) > 64)
		return 0;
	for (; *p; p++) {
		if (*p == '.') {
			if (!label || p[-1] == '-')
				return 0;
			label = 0;
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-') || (*p == '-' && !label) || ++label > 63)
			return 0;
	}
	return label && p[-1] != '-';
}

static int valid_pkg_name(const char *s, size_t n)
{
	size_t i;

	if (n < 2 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
		      s[i] == '-' || s[i] == '.'))
			return 0;
	return 1;
}

static int valid_version(const char *s)
{
	const char *p;

	if (!(*s >= '0' && *s <= '9'))
		return 0;
	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr(".+~:-", *p)))
			return 0;
	return 1;
}

int recipe_parse_package(const char *spec, struct recipe_package *p, const char **why)
{
	const char *eq = strchr(spec, '='), *colon;
	size_t name_end = eq ? (size_t)(eq - spec) : strlen(spec);

	memset(p, 0, sizeof(*p));
	colon = memchr(spec, ':', name_end);
	if (colon)
		name_end = (size_t)(colon - spec);
	if (!valid_pkg_name(spec, name_end)) {
		*why = "not a valid Debian package name (lowercase letters, digits, '+', '-', '.')";
		return -MKI_E_RECIPE;
	}
	if (eq && !valid_version(eq + 1)) {
		*why = "not a valid version after '=' (it must start with a digit)";
		return -MKI_E_RECIPE;
	}
	p->name = xstrndup(spec, name_end);
	if (colon)
		p->arch = xstrndup(colon + 1, (size_t)((eq ? eq : spec + strlen(spec)) - colon - 1));
	if (eq)
		p->version = xstrdup(eq + 1);
	return 0;
}

/* "../images/x.ext4" against the recipe's directory, without the ".." when the directory exists. */
char *recipe_resolve_output(const char *dir, const char *out)
{
	char *joined = out[0] == '/' ? xstrdup(out) : xasprintf("%s/%s", dir, out);
	char *slash = strrchr(joined, '/'), *real, *res;

	*slash = 0;
	real = realpath(joined[0] ? joined : "/", NULL);
	*slash = '/';
	if (!real)
		return joined;
	res = xasprintf("%s/%s", strcmp(real, "/") ? real : "", slash + 1);
	free(real);
	free(joined);
	return res;
}

int recipe_parse_size(const char *s, uint64_t *out)
{
	char *end = NULL;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -EINVAL;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || (*end == 'b' && shift))
		end++;
	if (*end || (shift && v > (ULLONG_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/* ---- readers and "shown" tests the rows share ------------------------------------------------ */

/* A list of path filter globs or kept locales, each checked with its own line. */
int recipe_get_checked(struct recipe_ctx *c, const config_setting_t *g, const char *key,
		       int (*check)(const char *, const char **), struct strv *out)
{
	const config_setting_t *s = recipe_member(g, key);
	const char *why;
	int i, ret = recipe_get_strv(c, g, key, out);

	for (i = 0; !ret && (size_t)i < out->n; i++) {
		const config_setting_t *e = config_setting_type(s) == CONFIG_TYPE_STRING
						    ? s : config_setting_get_elem(s, (unsigned)i);

		if (check(out->v[i], &why)) {
			struct buf esc = { 0 };

			buf_add_escaped(&esc, out->v[i]);
			ret = recipe_fail(c, e, "'%s': \"%s\" %s", key, esc.p, why);
			buf_release(&esc);
		}
	}
	return ret;
}

int recipe_shown_if_set(const struct recipe_key *k, const void *base, int digest)
{
	const void *v = recipe_cfield(base, k->offset);

	switch (k->type) {
	case RECIPE_STRING:
	case RECIPE_PATH:
		return *(char *const *)v != NULL;
	case RECIPE_STRV:
	case RECIPE_PATHS:
		return ((const struct strv *)v)->n != 0;
	case RECIPE_LIST:
		return *(const size_t *)recipe_cfield(base, k->count) != 0;
	case RECIPE_BOOL:
	case RECIPE_ENUM:
		return *(const int *)v != 0;
	case RECIPE_SIZE:
		return *(const uint64_t *)v != 0;
	default:
		return 1;
	}
}

int recipe_shown_if_not_default(const struct recipe_key *k, const void *base, int digest)
{
	return *(const unsigned *)recipe_cfield(base, k->offset) != strtoul(k->def, NULL, 10);
}

/* A boolean whose default is true, only when turned off: older recipes keep their digest. */
int recipe_shown_if_false(const struct recipe_key *k, const void *base, int digest)
{
	return !*(const int *)recipe_cfield(base, k->offset);
}

/* ---- reading: every section the same way --------------------------------------------------- */

int recipe_check_keys(struct recipe_ctx *c, const config_setting_t *group, enum recipe_section sec)
{
	const struct recipe_key *k, *best;
	unsigned d, best_d;
	int i;

	for (i = 0; i < config_setting_length(group); i++) {
		const config_setting_t *m = config_setting_get_elem(group, (unsigned)i);
		const char *name = config_setting_name(m);

		best = NULL;
		best_d = 4;
		for (k = c->t->keys; k->name; k++) {
			if (k->section != sec)
				continue;
			if (!strcmp(k->name, name))
				break;
			d = str_distance(name, k->name);
			if (d < best_d) {
				best_d = d;
				best = k;
			}
		}
		if (k->name)
			continue;
		if (best)
			return recipe_fail(c, m, "unknown key '%s' in %s (did you mean '%s'?)", name,
				    c->t->sections[sec].where, best->name);
		return recipe_fail(c, m, "unknown key '%s' in %s", name, c->t->sections[sec].where);
	}
	return 0;
}

/* A key read by its type: its default first, then its value when present. */
static int get_value(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		     void *base)
{
	void *v = recipe_field(base, k->offset);

	switch (k->type) {
	case RECIPE_STRING:
		if (k->def)
			*(char **)v = xstrdup(k->def);
		return recipe_get_str(c, g, k->name, v);
	case RECIPE_BOOL:
		*(int *)v = k->def && !strcmp(k->def, "true");
		return recipe_get_bool(c, g, k->name, v);
	case RECIPE_UINT:
		*(unsigned *)v = k->def ? (unsigned)strtoul(k->def, NULL, 10) : 0;
		return recipe_get_uint(c, g, k->name, k->max, v);
	case RECIPE_MODE:
		*(unsigned *)v = k->def ? (unsigned)strtoul(k->def, NULL, 8) : 0;
		return get_mode(c, g, k->name, v);
	case RECIPE_ENUM:
		for (*(int *)v = 0; k->def && k->choices[*(int *)v]; ++*(int *)v)
			if (!strcmp(k->choices[*(int *)v], k->def))
				break;
		return get_enum(c, g, k, v);
	case RECIPE_STRV:
		return recipe_get_strv(c, g, k->name, v);
	case RECIPE_OWNER:
		return get_owner(c, g, k->name, v, recipe_field(base, k->count));
	default:
		/* A type without a reader of its own needs a parse function in its row. */
		return recipe_fail(c, recipe_member(g, k->name), "'%s' cannot be read", k->name);
	}
}

static int read_group(struct recipe_ctx *c, const config_setting_t *g,
		       const struct recipe_key *k, void *base);

int recipe_read_keys(struct recipe_ctx *c, const config_setting_t *g, enum recipe_section sec,
		      void *base)
{
	const struct recipe_key *k;
	int ret = 0;

	for (k = c->t->keys; !ret && k->name; k++) {
		if (k->section != sec)
			continue;
		if (k->parse)
			ret = k->parse(c, g, k, base);
		else if (k->type == RECIPE_GROUP)
			ret = read_group(c, g, k, base);
		else if (k->type == RECIPE_LIST)
			ret = recipe_read_list(c, g, k, base);
		else
			ret = get_value(c, g, k, base);
		if (!ret && k->check)
			ret = k->check(c, g, k, base);
	}
	if (!ret && c->t->sections[sec].finish)
		ret = c->t->sections[sec].finish(c, g, base);
	return ret;
}

/* A group of keys (packages, image); an absent one gets every default. */
static int read_group(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		       void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);
	int ret;

	if (!s && k->required)
		return recipe_fail(c, g, "'%s' is required: %s", k->name, k->hint);
	if (s && config_setting_type(s) != CONFIG_TYPE_GROUP)
		return recipe_fail(c, s, "'%s' must be a group: %s", k->name, k->hint);
	ret = s ? recipe_check_keys(c, s, k->sub) : 0;
	if (!ret)
		ret = recipe_read_keys(c, s, k->sub, recipe_field(base, k->offset));
	return ret;
}

/* A list of groups (sources, hooks, ...): an array of structs, each zeroed before it is read. */
int recipe_read_list(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		      void *base)
{
	const struct recipe_section_info *sec = &c->t->sections[k->sub];
	const config_setting_t *s = recipe_member(g, k->name);
	size_t i, n;
	char *v;
	int ret = 0;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return recipe_fail(c, s, "'%s' must be a list of groups: %s", k->name, k->hint);
	n = (size_t)config_setting_length(s);
	v = xcalloc(n + 1, sec->size);
	*(void **)recipe_field(base, k->offset) = v;
	*(size_t *)recipe_field(base, k->count) = n;
	for (i = 0; !ret && i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		void *elem = v + i * sec->size;

		*(int *)recipe_field(elem, sec->line) = config_setting_source_line(e);
		if (config_setting_type(e) != CONFIG_TYPE_GROUP)
			return recipe_fail(c, e, "%s", sec->shape);
		ret = recipe_check_keys(c, e, k->sub);
		if (!ret)
			ret = recipe_read_keys(c, e, k->sub, elem);
	}
	return ret;
}

/* ---- the normalized form ------------------------------------------------------------------- */

static void fmt_packages(struct buf *b, const struct recipe_package *v, size_t n)
{
	size_t i;

	buf_adds(b, "[");
	for (i = 0; i < n; i++)
		buf_addf(b, "%s\"%s%s%s%s%s\"", i ? ", " : " ", v[i].name, v[i].arch ? ":" : "",
			 v[i].arch ? v[i].arch : "", v[i].version ? "=" : "",
			 v[i].version ? v[i].version : "");
	buf_adds(b, n ? " ]" : "]");
}

static void fmt_value(struct buf *b, const struct recipe_key *k, const void *base, int digest)
{
	const void *v = recipe_cfield(base, k->offset);
	char t;

	if (k->format) {
		k->format(b, k, base, digest);
		return;
	}
	switch (k->type) {
	case RECIPE_STRING: recipe_fmt_str(b, *(char *const *)v); break;
	case RECIPE_PATH: fmt_path(b, *(char *const *)v, digest); break;
	case RECIPE_BOOL: buf_adds(b, *(const int *)v ? "true" : "false"); break;
	case RECIPE_UINT: buf_addf(b, "%u", *(const unsigned *)v); break;
	case RECIPE_MODE: buf_addf(b, "\"0%o\"", *(const unsigned *)v); break;
	case RECIPE_ENUM: buf_addf(b, "\"%s\"", k->choices[*(const int *)v]); break;
	case RECIPE_STRV: fmt_list(b, v, 0, 0); break;
	case RECIPE_PATHS: fmt_list(b, v, 1, digest); break;
	case RECIPE_OWNER:
		buf_addf(b, "\"%u:%u\"", *(const unsigned *)v,
			 *(const unsigned *)recipe_cfield(base, k->count));
		break;
	case RECIPE_SIZE:
		if (*(const uint64_t *)v)
			buf_addf(b, "\"%llu\"", (unsigned long long)*(const uint64_t *)v);
		else
			buf_adds(b, "\"auto\"");
		break;
	case RECIPE_DEVTYPE:
		t = *(const char *)v;
		buf_addf(b, "\"%s\"", t == 'c' ? "char" : t == 'b' ? "block" : "fifo");
		break;
	case RECIPE_PKGSPECS:
		fmt_packages(b, *(const struct recipe_package *const *)v,
			     *(const size_t *)recipe_cfield(base, k->count));
		break;
	case RECIPE_GROUP:
	case RECIPE_LIST:
		break; /* fmt_section writes them */
	}
}

void recipe_format_value(const struct recipe_key *k, const void *base, struct buf *out)
{
	fmt_value(out, k, base, 0);
}

/* A list element on one line: { KEY = VALUE; ... } */
static void fmt_element(const struct recipe_table *t, struct buf *b, enum recipe_section sec,
			const void *base, int digest)
{
	const struct recipe_key *k;

	buf_adds(b, "{ ");
	for (k = t->keys; k->name; k++) {
		if (k->section != sec || (k->shown && !k->shown(k, base, digest)))
			continue;
		buf_addf(b, "%s = ", k->name);
		fmt_value(b, k, base, digest);
		buf_adds(b, "; ");
	}
	buf_adds(b, "}");
}

static void fmt_section(const struct recipe_table *t, struct buf *b, enum recipe_section sec,
			const void *base, int digest, const char *indent);

/* One key of a section: "KEY = VALUE;", a group or a list of groups over lines of their own. */
static void fmt_key(const struct recipe_table *t, struct buf *b, const struct recipe_key *k,
		    const void *base, int digest, const char *indent)
{
	const void *sub = NULL;
	size_t i, n;

	buf_addf(b, "%s%s = ", indent, k->name);
	if (k->type == RECIPE_GROUP) {
		char *inner = xasprintf("%s  ", indent);

		buf_adds(b, "{\n");
		fmt_section(t, b, k->sub, recipe_cfield(base, k->offset), digest, inner);
		buf_addf(b, "%s};\n", indent);
		free(inner);
		return;
	}
	if (k->type != RECIPE_LIST) {
		fmt_value(b, k, base, digest);
		buf_adds(b, ";\n");
		return;
	}
	n = *(const size_t *)recipe_cfield(base, k->count);
	sub = *(const void *const *)recipe_cfield(base, k->offset);
	buf_adds(b, "(\n");
	for (i = 0; i < n; i++) {
		buf_addf(b, "%s  ", indent);
		fmt_element(t, b, k->sub, (const char *)sub + i * t->sections[k->sub].size, digest);
		buf_adds(b, i + 1 < n ? ",\n" : "\n");
	}
	buf_addf(b, "%s);\n", indent);
}

/* The keys of `sec`, one a line; groups and lists of groups spread over lines of their own. */
static void fmt_section(const struct recipe_table *t, struct buf *b, enum recipe_section sec,
			const void *base, int digest, const char *indent)
{
	const struct recipe_key *k;

	for (k = t->keys; k->name; k++)
		if (k->section == sec && (!k->shown || k->shown(k, base, digest)))
			fmt_key(t, b, k, base, digest, indent);
}

/*
 * The digest form names files by content ("sha256:...") and leaves out the output path, so the
 * digest - and every identifier derived from it - is the same wherever the checkout lives.
 */
void recipe_walk_format(const struct recipe_table *t, const struct recipe *r, struct buf *b,
			int digest)
{
	fmt_section(t, b, RECIPE_IN_TOP, r, digest, "");
}

/* "PATH SHA256" of one key's digest form into `out`. */
static void field_digest(const struct recipe_table *t, const struct recipe_key *k, const void *base,
			 const char *path, struct strv *out)
{
	struct buf b = { 0 };
	char hex[65];

	fmt_key(t, &b, k, base, 1, "");
	hash_sha256_hex(b.p, b.len, hex);
	strv_push_take(out, xasprintf("%s%s %s", path, k->name, hex));
	buf_release(&b);
}

/*
 * A group's keys one by one (packages.install, image.size): what a person edits is a key, and
 * the packages group alone is what most edits change. Lists and the disk stay whole.
 */
void recipe_walk_digests(const struct recipe_table *t, const struct recipe *r, struct strv *out)
{
	const struct recipe_key *k, *s;

	for (k = t->keys; k->name; k++) {
		const void *sub;
		char *path;

		if (k->section != RECIPE_IN_TOP || (k->shown && !k->shown(k, r, 1)))
			continue;
		if (k->type != RECIPE_GROUP || k->sub == RECIPE_IN_DISK) {
			field_digest(t, k, r, "", out);
			continue;
		}
		sub = recipe_cfield(r, k->offset);
		path = xasprintf("%s.", k->name);
		for (s = t->keys; s->name; s++)
			if (s->section == k->sub && (!s->shown || s->shown(s, sub, 1)))
				field_digest(t, s, sub, path, out);
		free(path);
	}
}

/* Every tree-affecting key under `sec`, "recipe PATH VALUE" a line, whether shown or not. */
static void fmt_tree(const struct recipe_table *t, struct buf *b, enum recipe_section sec,
		     const void *base, const char *path)
{
	const struct recipe_key *k;
	size_t i, n;

	for (k = t->keys; k->name; k++) {
		const char *sub;
		char *p;

		if (k->section != sec)
			continue;
		if (k->tree) {
			buf_addf(b, "recipe %s%s ", path, k->name);
			fmt_value(b, k, base, 1);
			buf_adds(b, "\n");
		}
		if (k->type == RECIPE_GROUP) {
			p = xasprintf("%s%s.", path, k->name);
			fmt_tree(t, b, k->sub, recipe_cfield(base, k->offset), p);
			free(p);
		}
		if (k->type != RECIPE_LIST)
			continue;
		n = *(const size_t *)recipe_cfield(base, k->count);
		sub = *(const char *const *)recipe_cfield(base, k->offset);
		for (i = 0; i < n; i++) {
			p = xasprintf("%s%s[%zu].", path, k->name, i);
			fmt_tree(t, b, k->sub, sub + i * t->sections[k->sub].size, p);
			free(p);
		}
	}
}


/* ---- releasing ----------------------------------------------------------------------------- */

void recipe_walk_tree(const struct recipe_table *t, const struct recipe *r, struct buf *out)
{
	fmt_tree(t, out, RECIPE_IN_TOP, r, "");
}

void recipe_walk_release(const struct recipe_table *t, enum recipe_section sec, void *base)
{
	const struct recipe_key *k;
	struct recipe_package *p;
	size_t i, n;
	char *v;

	for (k = t->keys; k->name; k++) {
		if (k->section != sec)
			continue;
		switch (k->type) {
		case RECIPE_STRING:
		case RECIPE_PATH:
			free(*(char **)recipe_field(base, k->offset));
			break;
		case RECIPE_STRV:
		case RECIPE_PATHS:
			strv_release(recipe_field(base, k->offset));
			break;
		case RECIPE_PKGSPECS:
			p = *(struct recipe_package **)recipe_field(base, k->offset);
			n = *(size_t *)recipe_field(base, k->count);
			for (i = 0; i < n; i++) {
				free(p[i].name);
				free(p[i].arch);
				free(p[i].version);
			}
			free(p);
			break;
		case RECIPE_GROUP:
			recipe_walk_release(t, k->sub, recipe_field(base, k->offset));
			break;
		case RECIPE_LIST:
			v = *(char **)recipe_field(base, k->offset);
			n = *(size_t *)recipe_field(base, k->count);
			for (i = 0; i < n; i++)
				recipe_walk_release(t, k->sub, v + i * t->sections[k->sub].size);
			free(v);
			break;
		default:
			break;
		}
	}
}
