/*
 * The recipe: libconfig file -> validated `struct recipe`, with FILE:LINE errors.
 *
 * Every key is a row of recipe_keys[] below: its section, type, default, one-line doc, whether it
 * changes the configured tree, and where its value lives. The parser, recipe_release(), the
 * normalized form (--check, the digest) and the layer key's recipe part walk that table; what a
 * type alone cannot check is a per-key function named in the row.
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
#define STRINGIFY(x) #x
#define DEC(x) STRINGIFY(x)

/* A section: what its unknown-key message calls it, what an element that is no group is told. */
struct section {
	const char *name;  /* its key path (recipe_section_name) */
	const char *where; /* "unknown key 'x' in WHERE" */
	const char *shape; /* a list's element that is not a group */
	size_t size;       /* of a list's element */
	size_t line;       /* of a list element's `line` */
	/* After its keys: the checks that span them. */
	int (*finish)(struct recipe_ctx *c, const config_setting_t *g, void *base);
};

static const struct section sections[RECIPE_N_SECTIONS];

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

static void *field(void *base, size_t offset)
{
	return (char *)base + offset;
}

static const void *cfield(const void *base, size_t offset)
{
	return (const char *)base + offset;
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

static int get_uint(struct recipe_ctx *c, const config_setting_t *g, const char *key, unsigned max,
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
static int get_strv(struct recipe_ctx *c, const config_setting_t *g, const char *key,
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
static int get_path(struct recipe_ctx *c, const config_setting_t *s, const char *what, char **out)
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
static void fmt_str(struct buf *b, const char *s)
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
		fmt_str(b, path);
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
			fmt_str(b, v->v[i]);
	}
	buf_adds(b, v->n ? " ]" : "]");
}

/* ---- the top level ------------------------------------------------------------------------ */

static int check_name(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		      void *base)
{
	const char *name = c->r->name;

	if (!name || !name[0] || strpbrk(name, "/ \t\n") || name[0] == '.')
		return recipe_fail(c, recipe_member(g, "name"),
			    "'name' is required: a non-empty word without '/' or spaces");
	return 0;
}

static int check_arch(struct recipe_ctx *c, const config_setting_t *s, const char *name)
{
	const char *hint;

	if (arch_find(name))
		return 0;
	hint = arch_debian_name(name);
	if (hint)
		return recipe_fail(c, s, "'%s' is not a Debian architecture name: Debian calls it "
				   "'%s'", name, hint);
	hint = arch_suggest(name);
	if (hint)
		return recipe_fail(c, s, "unknown architecture '%s' (did you mean '%s'?)", name, hint);
	return recipe_fail(c, s, "unknown architecture '%s' (see 'dpkg-architecture -L')", name);
}

static int is_recipe_arch(const struct recipe *r, const char *a)
{
	return !strcmp(r->arch, a) || strv_contains(&r->aux_archs, a);
}

static int check_primary_arch(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_key *k, void *base)
{
	if (!c->r->arch)
		return recipe_fail(c, g, "'architecture' (the primary architecture, e.g. \"armhf\") is required");
	return check_arch(c, recipe_member(g, "architecture"), c->r->arch);
}

/* A list of architectures, each one dpkg knows. */
static int parse_arch_list(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);
	struct strv *out = field(base, k->offset);
	size_t i;
	int ret = get_strv(c, g, k->name, out);

	for (i = 0; !ret && i < out->n; i++)
		ret = check_arch(c, s, out->v[i]);
	return ret;
}

static int check_aux_archs(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base)
{
	struct recipe *r = c->r;
	size_t i;

	for (i = 0; i < r->aux_archs.n; i++)
		if (!strcmp(r->aux_archs.v[i], r->arch))
			return recipe_fail(c, recipe_member(g, k->name), "'%s' is the primary architecture; "
				    "list only others here", r->arch);
	return 0;
}

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

static int check_hostname(struct recipe_ctx *c, const config_setting_t *g,
			  const struct recipe_key *k, void *base)
{
	const char *h = c->r->hostname;

	if (h && !recipe_valid_hostname(h))
		return recipe_fail(c, recipe_member(g, "hostname"),
			    "'hostname' must be letters, digits and '-' in dot-separated labels of at "
			    "most 63 (64 in all), not starting or ending with '-'; not '%s'", h);
	return 0;
}

/*
 * A URI with a scheme ("https://...", "urn:..."), printable, without '#' (SPDX's rule for a
 * namespace) or a space, so SPDX readers accept the document.
 */
static int check_sbom_namespace(struct recipe_ctx *c, const config_setting_t *g,
				const struct recipe_key *k, void *base)
{
	const char *u = c->r->sbom_namespace, *p;
	size_t scheme = u ? strspn(u, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789+.-") : 0;
	int ok = u && scheme && ((u[0] | 0x20) >= 'a' && (u[0] | 0x20) <= 'z') && u[scheme] == ':' &&
		 u[scheme + 1] && strlen(u) <= 1024;

	for (p = u; ok && *p; p++)
		ok = *p > ' ' && *p < 0x7f && *p != '#';
	if (u && !ok)
		return recipe_fail(c, recipe_member(g, k->name),
				   "'sbom_namespace' must be a URI such as \"https://sbom.example.com/"
				   "images\" (a scheme, no spaces or '#', at most 1024 characters), "
				   "not '%s'", u);
	return 0;
}

/* A key that only names what lands beside the image: in --check, not in the digest. */
static int shown_outside_digest(const struct recipe_key *k, const void *base, int digest)
{
	return !digest && *(char *const *)cfield(base, k->offset) != NULL;
}

static int parse_list(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		      void *base);

/* No sources means "whatever this machine's apt uses", like apt itself. */
static int parse_sources(struct recipe_ctx *c, const config_setting_t *g,
			 const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);
	struct recipe *r = c->r;
	int ret;

	if (!s) {
		r->sources = xcalloc(1, sizeof(*r->sources));
		r->n_sources = 1;
		r->sources[0].host = 1;
		r->sources[0].suite = xstrdup(r->suite);
		return 0;
	}
	ret = parse_list(c, g, k, base);
	if (!ret && !r->n_sources)
		ret = recipe_fail(c, s, "'sources' is empty: add at least one source");
	return ret;
}

/* ---- sources ------------------------------------------------------------------------------- */

static int shown_if_host(const struct recipe_key *k, const void *base, int digest)
{
	return ((const struct recipe_source *)base)->host;
}

static int shown_unless_host(const struct recipe_key *k, const void *base, int digest)
{
	return !((const struct recipe_source *)base)->host;
}

static int check_source_archs(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_key *k, void *base)
{
	const struct recipe_source *src = base;
	size_t i;

	for (i = 0; i < src->archs.n; i++)
		if (!is_recipe_arch(c->r, src->archs.v[i]))
			return recipe_fail(c, recipe_member(g, k->name),
				    "architecture '%s' is not one of the recipe's architectures",
				    src->archs.v[i]);
	return 0;
}

static int parse_keyring(struct recipe_ctx *c, const config_setting_t *g,
			 const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);

	if (s && config_setting_type(s) != CONFIG_TYPE_STRING)
		return recipe_fail(c, s, "'keyring' must be a string (a path to a keyring file)");
	return s ? get_path(c, s, "keyring", field(base, k->offset)) : 0;
}

static int finish_source(struct recipe_ctx *c, const config_setting_t *g, void *base)
{
	struct recipe_source *src = base;

	if (src->host && src->uri)
		return recipe_fail(c, g, "a source is either 'host = true' or has a 'uri', not both");
	if (!src->host && !src->uri)
		return recipe_fail(c, g, "a source needs 'uri' (or 'host = true' for the host's apt sources)");
	if (src->uri && !str_starts_with(src->uri, "http://") && !str_starts_with(src->uri, "https://") &&
	    !str_starts_with(src->uri, "file:/"))
		return recipe_fail(c, recipe_member(g, "uri"),
			    "unsupported uri '%s': use http://, https:// or file://", src->uri);
	if (!src->host && !src->keyring && !src->trusted)
		return recipe_fail(c, g, "source '%s' has no 'keyring': name the repository's signing key "
			    "(or set 'trusted = true' to skip verification, not recommended)", src->uri);
	if (!src->suite)
		src->suite = xstrdup(c->r->suite);
	if (!src->host && !src->components.n)
		strv_push(&src->components, "main");
	if (src->trusted)
		log_warn("%s:%d: source '%s' is marked trusted: its indexes are NOT verified", c->file,
			 src->line, src->uri ? src->uri : "host");
	return 0;
}

/* ---- packages ------------------------------------------------------------------------------ */

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

static int parse_install(struct recipe_ctx *c, const config_setting_t *g,
			 const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, "install");
	struct recipe *r = c->r;
	struct strv specs = { 0 };
	const char *why;
	size_t i;
	int ret = get_strv(c, g, "install", &specs);

	r->packages = xcalloc(specs.n + 1, sizeof(*r->packages));
	for (i = 0; !ret && i < specs.n; i++) {
		struct recipe_package *p = &r->packages[r->n_packages];

		if (recipe_parse_package(specs.v[i], p, &why)) {
			ret = recipe_fail(c, s, "package '%s': %s", specs.v[i], why);
			break;
		}
		r->n_packages++;
		p->line = config_setting_source_line(s);
		if (p->arch && !is_recipe_arch(r, p->arch) && arch_debian_name(p->arch))
			ret = recipe_fail(c, s, "package '%s': '%s' is not a Debian architecture name: "
					  "Debian calls it '%s'", specs.v[i], p->arch,
					  arch_debian_name(p->arch));
		else if (p->arch && !is_recipe_arch(r, p->arch))
			ret = recipe_fail(c, s, "package '%s' asks for architecture '%s', which is not in "
				   "'architecture' or 'auxiliary_architectures'", specs.v[i], p->arch);
	}
	strv_release(&specs);
	return ret;
}

static int parse_local(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		       void *base)
{
	const config_setting_t *s = recipe_member(g, "local");
	int i, ret;

	if (s && config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return recipe_fail(c, s, "'local' must be a list of .deb paths");
	for (i = 0; s && i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		char *path = NULL;

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return recipe_fail(c, e, "'local' must hold only strings");
		ret = get_path(c, e, "local package", &path);
		if (ret) {
			free(path);
			return ret;
		}
		strv_push_take(&c->r->local_debs, path);
	}
	return 0;
}

/* A list of path filter globs or kept locales, each checked with its own line. */
static int get_checked(struct recipe_ctx *c, const config_setting_t *g, const char *key,
		       int (*check)(const char *, const char **), struct strv *out)
{
	const config_setting_t *s = recipe_member(g, key);
	const char *why;
	int i, ret = get_strv(c, g, key, out);

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

/* dpkg's --path-exclude/--path-include and the minimize preset (pathfilter.h). */
static int parse_glob_list(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base)
{
	return get_checked(c, g, k->name, pathfilter_check_glob, field(base, k->offset));
}

static int parse_locales(struct recipe_ctx *c, const config_setting_t *g,
			 const struct recipe_key *k, void *base)
{
	struct recipe *r = c->r;
	int ret = get_checked(c, g, k->name, pathfilter_check_locale, &r->locales);

	if (!ret && r->locales.n && !r->minimize)
		ret = recipe_fail(c, recipe_member(g, "locales"),
			   "'locales' names the translations 'minimize' keeps: set 'minimize = true' "
			   "too, or remove 'locales' (without it every translation is kept)");
	return ret;
}

/* Only with minimize: recipes written before these keys keep their digest. */
static int shown_with_minimize(const struct recipe_key *k, const void *base, int digest)
{
	return ((const struct recipe *)base)->minimize;
}

static int finish_packages(struct recipe_ctx *c, const config_setting_t *g, void *base)
{
	const struct recipe *r = base;

	if (!r->n_packages && r->base == BASE_NONE && !r->local_debs.n)
		return recipe_fail(c, g, "nothing to install: set 'base' or list packages in 'install'");
	return 0;
}

/* ---- hooks --------------------------------------------------------------------------------- */

static int parse_hook_script(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, "script");

	if (!s || config_setting_type(s) != CONFIG_TYPE_STRING)
		return recipe_fail(c, s ? s : g, "a hook needs 'script', a path to the script (string)");
	return get_path(c, s, "hook script", field(base, k->offset));
}

static int parse_hook_timeout(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_key *k, void *base)
{
	unsigned *t = field(base, k->offset);

	*t = c->r->hook_timeout;
	return get_uint(c, g, k->name, k->max, t);
}

static int finish_hook(struct recipe_ctx *c, const config_setting_t *g, void *base)
{
	struct recipe_hook *h = base;
	const char *slash = strrchr(h->script, '/');

	if (!h->name)
		h->name = xstrdup(slash ? slash + 1 : h->script);
	return 0;
}

/* ---- overlays ------------------------------------------------------------------------------ */

/* The source directory, relative to the recipe's; it must exist and be a directory. */
static int parse_overlay_source(struct recipe_ctx *c, const config_setting_t *g,
				const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, "source");
	struct recipe_overlay *o = base;
	const char *p;
	char *joined;
	struct stat sb;
	int ret = 0;

	if (!s || config_setting_type(s) != CONFIG_TYPE_STRING)
		return recipe_fail(c, s ? s : g, "an overlay needs 'source', a directory beside the recipe "
			    "(string)");
	p = config_setting_get_string(s);
	joined = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", c->r->dir, p);
	o->source = realpath(joined, NULL);
	if (!o->source || stat(o->source, &sb) < 0)
		ret = recipe_fail(c, s, "overlay source '%s' not found (looked at '%s'): %s", p, joined,
			   strerror(errno));
	else if (!S_ISDIR(sb.st_mode))
		ret = recipe_fail(c, s, "overlay source '%s' is not a directory: name the directory whose "
			   "tree is copied", p);
	free(joined);
	return ret;
}

/* By its contents in the digest (overlay_check): the same wherever the checkout lives. */
static void fmt_overlay_source(struct buf *b, const struct recipe_key *k, const void *base,
			       int digest)
{
	const struct recipe_overlay *o = base;

	if (digest)
		buf_addf(b, "\"sha256:%s\"", o->digest);
	else
		fmt_str(b, o->source);
}

static int parse_destination(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, "destination");
	struct recipe_overlay *o = base;
	char *dest = NULL;
	int ret = recipe_get_str(c, g, "destination", &dest);

	if (!ret && (!dest || dest[0] != '/' || !(o->destination = manifest_normalize(dest))))
		ret = recipe_fail(c, s ? s : g, "an overlay needs 'destination', an absolute path of the "
			   "image without '..' (\"/\" for its root)");
	free(dest);
	return ret;
}

static void fmt_destination(struct buf *b, const struct recipe_key *k, const void *base,
			    int digest)
{
	buf_adds(b, "\"/");
	buf_add_escaped(b, ((const struct recipe_overlay *)base)->destination);
	buf_adds(b, "\"");
}

static int finish_overlay(struct recipe_ctx *c, const config_setting_t *g, void *base)
{
	return c->checks->overlay ? c->checks->overlay(base, c->file) : 0;
}

/* ---- image --------------------------------------------------------------------------------- */

/*
 * image.format: the name as written. Which names are formats, and whether a format's image has
 * a label (fstab's default), is the image family's to say: c->checks->format.
 */
static int parse_image_format(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_key *k, void *base)
{
	struct recipe_image *im = base;
	const char *known = "";
	char *fmt = NULL;
	int ret = recipe_get_str(c, g, "format", &fmt);

	if (ret)
		return ret;
	if (!fmt)
		fmt = xstrdup(k->def);
	ret = c->checks->format(fmt, &known);
	if (ret < 0) {
		ret = recipe_fail(c, recipe_member(g, "format"), "image 'format' must be %s, not '%s'", known, fmt);
		free(fmt);
		return ret;
	}
	im->format = fmt;
	im->labelled = ret;
	return 0;
}

static void fmt_image_format(struct buf *b, const struct recipe_key *k, const void *base,
			     int digest)
{
	const struct recipe_image *im = base;

	buf_addf(b, "\"%s\"", im->format);
}

/* compression: how a squashfs image is compressed; on another format a mistake, not ignored. */
static int check_image_compression(struct recipe_ctx *c, const config_setting_t *g,
				   const struct recipe_key *k, void *base)
{
	const struct recipe_image *im = base;
	const config_setting_t *m = recipe_member(g, "compression");

	if (m && strcmp(im->format, "squashfs"))
		return recipe_fail(c, m, "image 'compression' applies to format = \"squashfs\" "
				   "only, not \"%s\": remove it or set format = \"squashfs\"",
				   im->format);
	return 0;
}

/* fstab: by default for formats with a label, by which it names the root. */
static int parse_fstab(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		       void *base)
{
	const config_setting_t *top = g ? config_setting_parent(g) : NULL;
	/* a disk's fstab names partitions by PARTUUID (bootcfg.h): no label needed */
	int disk = top && config_setting_get_member(top, "disk");
	struct recipe_image *im = base;
	int ret;

	im->fstab = im->labelled || disk;
	ret = recipe_get_bool(c, g, "fstab", &im->fstab);
	if (!ret && im->fstab && !im->labelled && !disk)
		ret = recipe_fail(c, recipe_member(g, "fstab"),
			   "'fstab = true' names the root by its ext4 label: it needs format = \"ext4\" "
			   "(or a disk section, whose fstab names partitions by PARTUUID)");
	return ret;
}

/* Only when not the default: the same digest. */
static int shown_fstab(const struct recipe_key *k, const void *base, int digest)
{
	const struct recipe_image *im = base;

	return im->fstab != im->labelled;
}

static int check_label(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		       void *base)
{
	const struct recipe_image *im = base;

	if (strlen(im->label) > 16)
		return recipe_fail(c, recipe_member(g, "label"),
			    "image 'label' is %zu bytes; ext4 labels hold at most 16", strlen(im->label));
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

static int parse_output(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
			void *base)
{
	char **output = field(base, k->offset);
	char *out = NULL;
	int ret = recipe_get_str(c, g, "output", &out);

	if (!ret && out)
		*output = recipe_resolve_output(c->r->dir, out);
	free(out);
	return ret;
}

/* Where the image is written is not what it is: left out of the digest. */
static int shown_output(const struct recipe_key *k, const void *base, int digest)
{
	return !digest && ((const struct recipe_image *)base)->output;
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

static int parse_size(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		      void *base)
{
	char *size = NULL;
	int ret = recipe_get_str(c, g, "size", &size);

	if (!ret && size && strcmp(size, "auto") && recipe_parse_size(size, field(base, k->offset)))
		ret = recipe_fail(c, recipe_member(g, "size"),
			   "image 'size' must be \"auto\" or a size like \"512M\" or \"2G\", not '%s'",
			   size);
	free(size);
	return ret;
}

static int check_kernel(struct recipe_ctx *c, const config_setting_t *g,
			const struct recipe_key *k, void *base)
{
	const char *kernel = ((const struct recipe_image *)base)->kernel;

	if (kernel && (!kernel[0] || strchr(kernel, '/')))
		return recipe_fail(c, recipe_member(g, "kernel"), "'kernel' is a kernel release as in "
			    "/boot/vmlinu[xz]-RELEASE (such as \"6.1.0-13-armmp\"), not '%s'", kernel);
	return 0;
}

/* ---- devices ------------------------------------------------------------------------------- */

static int check_device_path(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base)
{
	const char *p = ((const struct recipe_device *)base)->path;

	if (!p || p[0] != '/' || strstr(p, "/../") || str_ends_with(p, "/.."))
		return recipe_fail(c, g, "a device needs an absolute 'path' without '..'");
	return 0;
}

static int parse_device_type(struct recipe_ctx *c, const config_setting_t *g,
			     const struct recipe_key *k, void *base)
{
	struct recipe_device *d = base;
	char *type = NULL;
	int ret = recipe_get_str(c, g, "type", &type);

	if (!ret && type && !strcmp(type, "char"))
		d->type = 'c';
	else if (!ret && type && !strcmp(type, "block"))
		d->type = 'b';
	else if (!ret && type && !strcmp(type, "fifo"))
		d->type = 'p';
	else if (!ret)
		ret = recipe_fail(c, g, "device 'type' must be \"char\", \"block\" or \"fifo\"");
	free(type);
	return ret;
}

/* ---- shown only when set: recipes written before such a key keep their digest ------------- */

static int shown_if_set(const struct recipe_key *k, const void *base, int digest)
{
	const void *v = cfield(base, k->offset);

	switch (k->type) {
	case RECIPE_STRING:
	case RECIPE_PATH:
		return *(char *const *)v != NULL;
	case RECIPE_STRV:
	case RECIPE_PATHS:
		return ((const struct strv *)v)->n != 0;
	case RECIPE_LIST:
		return *(const size_t *)cfield(base, k->count) != 0;
	case RECIPE_BOOL:
	case RECIPE_ENUM:
		return *(const int *)v != 0;
	case RECIPE_SIZE:
		return *(const uint64_t *)v != 0;
	default:
		return 1;
	}
}

/* ---- layers: where configured trees are shared, never what the image is ------------------ */

static int shown_layers(const struct recipe_key *k, const void *base, int digest)
{
	const struct recipe_layers *l = &((const struct recipe *)base)->layers;

	return !digest && (l->registry || l->sign_key || l->trusted_keys.n);
}

static int shown_layer_key(const struct recipe_key *k, const void *base, int digest)
{
	return !digest && shown_if_set(k, base, digest);
}

/* http(s)://HOST[:PORT]/REPO: the registry module says more when it is contacted. */
static int check_layer_registry(struct recipe_ctx *c, const config_setting_t *g,
				const struct recipe_key *k, void *base)
{
	const char *u = ((const struct recipe_layers *)base)->registry, *host;

	if (!u)
		return 0;
	host = str_starts_with(u, "http://") ? u + 7 : str_starts_with(u, "https://") ? u + 8 : NULL;
	if (!host || *host == '/' || !strchr(host, '/') || !strchr(host, '/')[1] ||
	    strpbrk(u, "?#@ \t"))
		return recipe_fail(c, recipe_member(g, k->name), "'registry' must be "
			"http(s)://HOST[:PORT]/REPO, such as \"http://127.0.0.1:5000/mkimage/layers\"; "
			"not '%s'", u);
	return 0;
}

static int parse_layer_key(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return recipe_fail(c, s, "'%s' must be a string: the private key's file", k->name);
	return get_path(c, s, "layer signing key", field(base, k->offset));
}

static int parse_trusted_keys(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);
	struct strv *v = field(base, k->offset);
	char *path;
	int i, ret = 0;

	if (s && config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return recipe_fail(c, s, "'%s' must be a list of public key files", k->name);
	for (i = 0; !ret && s && i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return recipe_fail(c, e, "'%s' must hold only strings", k->name);
		path = NULL;
		ret = get_path(c, e, "trusted layer key", &path);
		if (ret)
			free(path);
		else
			strv_push_take(v, path);
	}
	return ret;
}

static int shown_if_not_default(const struct recipe_key *k, const void *base, int digest)
{
	return *(const unsigned *)cfield(base, k->offset) != strtoul(k->def, NULL, 10);
}

/* A boolean whose default is true, only when turned off: older recipes keep their digest. */
static int shown_if_false(const struct recipe_key *k, const void *base, int digest)
{
	return !*(const int *)cfield(base, k->offset);
}

/* ---- the table ----------------------------------------------------------------------------- */

static const struct section sections[RECIPE_N_SECTIONS] = {
	[RECIPE_IN_TOP] = { "", "the recipe", NULL, 0, 0, NULL },
	[RECIPE_IN_SOURCES] = { "sources", "a source",
				"each source must be a group: { uri = \"...\"; ... }",
				sizeof(struct recipe_source), offsetof(struct recipe_source, line),
				finish_source },
	[RECIPE_IN_PACKAGES] = { "packages", "'packages'", NULL, 0, 0, finish_packages },
	[RECIPE_IN_HOOKS] = { "hooks", "a hook",
			      "each hook must be a group: { name = \"...\"; script = \"...\"; }",
			      sizeof(struct recipe_hook), offsetof(struct recipe_hook, line),
			      finish_hook },
	[RECIPE_IN_OVERLAYS] = { "overlays", "an overlay",
				 "each overlay must be a group: { source = \"overlay/x\"; "
				 "destination = \"/\"; }",
				 sizeof(struct recipe_overlay), offsetof(struct recipe_overlay, line),
				 finish_overlay },
	[RECIPE_IN_IMAGE] = { "image", "'image'", NULL, 0, 0, NULL },
	[RECIPE_IN_DEVICES] = { "image.devices", "a device",
				"each device must be a group: { path = \"/dev/console\"; "
				"type = \"char\"; ... }",
				sizeof(struct recipe_device), offsetof(struct recipe_device, line),
				NULL },
	[RECIPE_IN_DISK] = { "disk", "'disk'", NULL, 0, 0, recipe_disk_finish },
	[RECIPE_IN_LAYERS] = { "layers", "'layers'", NULL, 0, 0, NULL },
	[RECIPE_IN_PARTITIONS] = { "disk.partitions", "a partition",
				   "each partition must be a group: { name = \"root\"; "
				   "type = \"root\"; ... }",
				   sizeof(struct recipe_partition),
				   offsetof(struct recipe_partition, line),
				   recipe_disk_finish_partition },
};

static const char *const base_sets[] = { "none", "essential", "required", "important", NULL };
static const char *const hook_wheres[] = { "inside", "outside", NULL };
static const char *const machine_ids[] = { "uninitialized", "empty", NULL };
static const char *const disk_tables[] = { "gpt", "mbr", NULL };
static const char *const disk_compressions[] = { "none", "zstd", "xz", NULL };
static const char *const disk_bootloaders[] = { "none", "extlinux", "systemd-boot", NULL };
/* enum partition_format */
static const char *const part_formats[] = { "none", "ext4", "vfat", "squashfs", NULL };
/* enum fs_compression */
static const char *const fs_compressions[] = { "zstd", "xz", "lz4", "gzip", "none", NULL };

#define TOP(f) offsetof(struct recipe, f)
#define SRC(f) offsetof(struct recipe_source, f)
#define HOOK(f) offsetof(struct recipe_hook, f)
#define OVL(f) offsetof(struct recipe_overlay, f)
#define IMG(f) offsetof(struct recipe_image, f)
#define DEV(f) offsetof(struct recipe_device, f)
#define DISK(f) offsetof(struct recipe_disk, f)
#define PART(f) offsetof(struct recipe_partition, f)
#define LAY(f) offsetof(struct recipe_layers, f)
#define LIST_OF "( { ... }, { ... } )"

/*
 * In each section, the order of the normalized form (--check, the digest): changing it changes
 * every recipe's digest. Within a section, keys are read in this order too.
 */
const struct recipe_key recipe_keys[] = {
	{ RECIPE_IN_TOP, "name", RECIPE_STRING, .offset = TOP(name), .check = check_name,
	  .doc = "names the outputs: images/NAME.ext4, NAME.lock, ... (required)" },
	{ RECIPE_IN_TOP, "architecture", RECIPE_STRING, .offset = TOP(arch), .tree = 1,
	  .check = check_primary_arch,
	  .doc = "the primary Debian architecture, such as \"armhf\" (required)" },
	{ RECIPE_IN_TOP, "auxiliary_architectures", RECIPE_STRV, .offset = TOP(aux_archs),
	  .tree = 1, .parse = parse_arch_list, .check = check_aux_archs,
	  .doc = "further architectures packages may come from (multiarch)" },
	{ RECIPE_IN_TOP, "suite", RECIPE_STRING, "bookworm", .offset = TOP(suite),
	  .doc = "the Debian suite every source defaults to" },
	{ RECIPE_IN_TOP, "merged_usr", RECIPE_BOOL, "true", .offset = TOP(merged_usr), .tree = 1,
	  .doc = "/bin, /sbin and /lib as links into /usr" },
	{ RECIPE_IN_TOP, "sources", RECIPE_LIST, .def_doc = "( { host = true; } )",
	  .offset = TOP(sources), .count = TOP(n_sources), .sub = RECIPE_IN_SOURCES,
	  .hint = LIST_OF, .parse = parse_sources, .doc = "the apt repositories packages come from" },
	{ RECIPE_IN_TOP, "host_twins", RECIPE_BOOL, "true", .offset = TOP(host_twins),
	  .shown = shown_if_false,
	  .doc = "native tools' twins may come from the host's own apt sources when the recipe's "
		 "lack the host's architecture (false: only the recipe's sources are contacted, "
		 "as --no-host-twins)" },
	{ RECIPE_IN_TOP, "packages", RECIPE_GROUP, .sub = RECIPE_IN_PACKAGES, .required = 1,
	  .hint = "packages = { install = [ ... ]; };", .doc = "what is installed" },
	{ RECIPE_IN_TOP, "hook_timeout", RECIPE_UINT, "600", .offset = TOP(hook_timeout),
	  .max = 86400, .doc = "seconds each hook may run unless it says otherwise" },
	{ RECIPE_IN_TOP, "script_timeout", RECIPE_UINT, DEC(RECIPE_SCRIPT_TIMEOUT),
	  .offset = TOP(script_timeout), .max = 86400, .shown = shown_if_not_default,
	  .doc = "seconds one maintainer script may run, and dpkg without progress "
		 "(0: no per-script bound)" },
	{ RECIPE_IN_TOP, "hooks", RECIPE_LIST, .offset = TOP(hooks), .count = TOP(n_hooks),
	  .sub = RECIPE_IN_HOOKS, .hint = LIST_OF, .doc = "scripts run after the overlays" },
	{ RECIPE_IN_TOP, "overlays", RECIPE_LIST, .offset = TOP(overlays), .count = TOP(n_overlays),
	  .sub = RECIPE_IN_OVERLAYS, .hint = LIST_OF, .shown = shown_if_set,
	  .doc = "directories copied into the tree after configuration" },
	{ RECIPE_IN_TOP, "hostname", RECIPE_STRING, .def_doc = "/etc/hostname left alone",
	  .offset = TOP(hostname), .check = check_hostname, .shown = shown_if_set,
	  .doc = "the image's /etc/hostname and its 127.0.1.1 line in /etc/hosts" },
	{ RECIPE_IN_TOP, "sbom_namespace", RECIPE_STRING, .def_doc = RECIPE_SBOM_NAMESPACE,
	  .offset = TOP(sbom_namespace), .check = check_sbom_namespace,
	  .shown = shown_outside_digest,
	  .doc = "the SBOM's documentNamespace, followed by /NAME-SHA256 of the image" },
	{ RECIPE_IN_TOP, "machine_id", RECIPE_ENUM, "uninitialized", .offset = TOP(machine_id),
	  .choices = machine_ids, .shown = shown_if_set,
	  .hint = "\"uninitialized\" (first boot semantics) or \"empty\" (read-only root)",
	  .doc = "what /etc/machine-id holds" },
	{ RECIPE_IN_TOP, "image", RECIPE_GROUP, .offset = TOP(image), .sub = RECIPE_IN_IMAGE,
	  .hint = "image = { format = \"ext4\"; ... };", .doc = "the image written" },
	{ RECIPE_IN_TOP, "disk", RECIPE_GROUP, .offset = TOP(disk), .sub = RECIPE_IN_DISK,
	  .shown = recipe_disk_shown, .def_doc = "no disk: the image alone",
	  .hint = "disk = { partitions = ( { name = \"root\"; type = \"root\"; contents = \"root\"; } ); };",
	  .doc = "a whole disk: partition table, boot loader, the image in a partition" },
	{ RECIPE_IN_TOP, "layers", RECIPE_GROUP, .offset = TOP(layers), .sub = RECIPE_IN_LAYERS,
	  .shown = shown_layers, .def_doc = "configured trees cached on this machine only",
	  .hint = "layers = { registry = \"http://127.0.0.1:5000/REPO\"; trusted_keys = [ ... ]; };",
	  .doc = "a registry sharing configured trees between machines (not in the digest)" },

	{ RECIPE_IN_SOURCES, "host", RECIPE_BOOL, "false", .offset = SRC(host),
	  .shown = shown_if_host, .doc = "the host's own apt sources instead of a uri" },
	{ RECIPE_IN_SOURCES, "uri", RECIPE_STRING, .offset = SRC(uri), .shown = shown_unless_host,
	  .doc = "the repository: http://, https:// or file://" },
	{ RECIPE_IN_SOURCES, "suite", RECIPE_STRING, .def_doc = "the recipe's suite",
	  .offset = SRC(suite), .doc = "the suite (dists/SUITE) of this repository" },
	{ RECIPE_IN_SOURCES, "components", RECIPE_STRV, .def_doc = "[ \"main\" ]",
	  .offset = SRC(components), .doc = "the components used" },
	{ RECIPE_IN_SOURCES, "architectures", RECIPE_STRV, .def_doc = "all of the recipe's",
	  .offset = SRC(archs), .parse = parse_arch_list, .check = check_source_archs,
	  .doc = "the recipe's architectures this repository serves" },
	{ RECIPE_IN_SOURCES, "keyring", RECIPE_PATH, .offset = SRC(keyring), .parse = parse_keyring,
	  .shown = shown_if_set, .doc = "the repository's signing keys (required unless trusted)" },
	{ RECIPE_IN_SOURCES, "trusted", RECIPE_BOOL, "false", .offset = SRC(trusted),
	  .doc = "skip signature checks (not recommended)" },

	{ RECIPE_IN_PACKAGES, "base", RECIPE_ENUM, "required", .offset = TOP(base),
	  .choices = base_sets,
	  .hint = "\"none\", \"essential\", \"required\" or \"important\"",
	  .doc = "the priority set installed besides install" },
	{ RECIPE_IN_PACKAGES, "install", RECIPE_PKGSPECS, .offset = TOP(packages),
	  .count = TOP(n_packages), .parse = parse_install,
	  .doc = "packages as \"name[:arch][=version]\"" },
	{ RECIPE_IN_PACKAGES, "exclude", RECIPE_STRV, .offset = TOP(excludes),
	  .doc = "packages never installed" },
	{ RECIPE_IN_PACKAGES, "recommends", RECIPE_BOOL, "false", .offset = TOP(recommends),
	  .doc = "install Recommends too" },
	{ RECIPE_IN_PACKAGES, "allow_older", RECIPE_BOOL, "false", .offset = TOP(allow_older),
	  .doc = "accept a version older than the lock file's" },
	{ RECIPE_IN_PACKAGES, "local", RECIPE_PATHS, .offset = TOP(local_debs),
	  .parse = parse_local,
	  .doc = ".deb files beside the recipe installed as well" },
	{ RECIPE_IN_PACKAGES, "path_exclude", RECIPE_STRV, .offset = TOP(path_exclude), .tree = 1,
	  .parse = parse_glob_list, .shown = shown_if_set,
	  .doc = "globs of paths not unpacked (dpkg's --path-exclude)" },
	{ RECIPE_IN_PACKAGES, "path_include", RECIPE_STRV, .offset = TOP(path_include), .tree = 1,
	  .parse = parse_glob_list, .shown = shown_if_set,
	  .doc = "globs unpacked after all (dpkg's --path-include)" },
	{ RECIPE_IN_PACKAGES, "minimize", RECIPE_BOOL, "false", .offset = TOP(minimize), .tree = 1,
	  .shown = shown_if_set,
	  .doc = "leave out documentation, man pages, info and translations" },
	{ RECIPE_IN_PACKAGES, "locales", RECIPE_STRV, .offset = TOP(locales), .tree = 1,
	  .parse = parse_locales, .shown = shown_with_minimize,
	  .doc = "translations minimize keeps, such as \"en\"" },

	{ RECIPE_IN_HOOKS, "name", RECIPE_STRING, .def_doc = "the script's file name",
	  .offset = HOOK(name), .doc = "the hook's name in messages and the report" },
	{ RECIPE_IN_HOOKS, "script", RECIPE_PATH, .offset = HOOK(script),
	  .parse = parse_hook_script,
	  .doc = "the script, beside the recipe (required)" },
	{ RECIPE_IN_HOOKS, "where", RECIPE_ENUM, "inside", .offset = HOOK(where),
	  .choices = hook_wheres,
	  .hint = "\"inside\" (in the target, emulated) or \"outside\" (on the host)",
	  .doc = "run in the target (emulated) or on the host" },
	{ RECIPE_IN_HOOKS, "timeout", RECIPE_UINT, .def_doc = "hook_timeout",
	  .offset = HOOK(timeout), .max = 86400, .parse = parse_hook_timeout, .doc = "seconds this hook may run" },

	{ RECIPE_IN_OVERLAYS, "source", RECIPE_PATH, .offset = OVL(source),
	  .parse = parse_overlay_source, .format = fmt_overlay_source,
	  .doc = "a directory beside the recipe (required)" },
	{ RECIPE_IN_OVERLAYS, "destination", RECIPE_STRING, .offset = OVL(destination),
	  .parse = parse_destination, .format = fmt_destination,
	  .doc = "where its root lands in the image (required)" },
	{ RECIPE_IN_OVERLAYS, "owner", RECIPE_OWNER, "0:0", .offset = OVL(uid), .count = OVL(gid),
	  .doc = "\"UID:GID\" of everything it creates" },
	{ RECIPE_IN_OVERLAYS, "replace", RECIPE_BOOL, "false", .offset = OVL(replace),
	  .doc = "it may replace files that packages own" },
	{ RECIPE_IN_OVERLAYS, "devices", RECIPE_BOOL, "false", .offset = OVL(devices),
	  .doc = "it may carry device nodes and FIFOs" },

	{ RECIPE_IN_IMAGE, "format", RECIPE_STRING, "ext4", .offset = IMG(format),
	  .parse = parse_image_format, .format = fmt_image_format,
	  .doc = "the image format, by its name" },
	{ RECIPE_IN_IMAGE, "compression", RECIPE_ENUM, "zstd", .offset = IMG(compression),
	  .choices = fs_compressions, .hint = "\"zstd\", \"xz\", \"lz4\", \"gzip\" or \"none\"",
	  .check = check_image_compression, .shown = shown_if_set,
	  .doc = "format = \"squashfs\": how its blocks are compressed" },
	{ RECIPE_IN_IMAGE, "output", RECIPE_STRING, .def_doc = "images/NAME.FORMAT",
	  .offset = IMG(output), .parse = parse_output, .shown = shown_output,
	  .doc = "where the image is written, relative to the recipe" },
	{ RECIPE_IN_IMAGE, "size", RECIPE_SIZE, "auto", .offset = IMG(size), .parse = parse_size,
	  .doc = "the image's size: \"auto\" or such as \"2G\"" },
	{ RECIPE_IN_IMAGE, "margin", RECIPE_UINT, "20", .offset = IMG(margin), .max = 1000,
	  .doc = "percent of free space added when size is auto" },
	{ RECIPE_IN_IMAGE, "label", RECIPE_STRING, "rootfs", .offset = IMG(label),
	  .check = check_label, .doc = "the file system's label" },
	{ RECIPE_IN_IMAGE, "reserved", RECIPE_UINT, "5", .offset = IMG(reserved), .max = 50,
	  .doc = "percent of blocks reserved for root" },
	{ RECIPE_IN_IMAGE, "uuid", RECIPE_STRING, .def_doc = "derived from the lock digest",
	  .offset = IMG(uuid), .shown = shown_if_set, .doc = "the file system's UUID" },
	{ RECIPE_IN_IMAGE, "hash_seed", RECIPE_STRING, .def_doc = "derived from the lock digest",
	  .offset = IMG(hash_seed), .shown = shown_if_set,
	  .doc = "the seed of the directory index hashes" },
	{ RECIPE_IN_IMAGE, "fstab", RECIPE_BOOL, .def_doc = "true for ext4", .offset = IMG(fstab),
	  .parse = parse_fstab, .shown = shown_fstab,
	  .doc = "write /etc/fstab naming the root by its label" },
	{ RECIPE_IN_IMAGE, "export_boot", RECIPE_BOOL, "false", .offset = IMG(export_boot),
	  .shown = shown_if_set, .doc = "kernel, initrd and device trees beside the image" },
	{ RECIPE_IN_IMAGE, "kernel", RECIPE_STRING, .def_doc = "the only one",
	  .offset = IMG(kernel), .check = check_kernel, .shown = shown_if_set,
	  .doc = "which /boot/vmlinu[xz]-RELEASE export_boot exports" },
	{ RECIPE_IN_IMAGE, "devices", RECIPE_LIST, .offset = IMG(devices), .count = IMG(n_devices),
	  .sub = RECIPE_IN_DEVICES, .hint = "( { ... }, ... )",
	  .doc = "device nodes and FIFOs created in the image" },

	{ RECIPE_IN_DEVICES, "path", RECIPE_STRING, .offset = DEV(path), .check = check_device_path,
	  .doc = "its absolute path in the image (required)" },
	{ RECIPE_IN_DEVICES, "type", RECIPE_DEVTYPE, .offset = DEV(type),
	  .parse = parse_device_type,
	  .doc = "\"char\", \"block\" or \"fifo\" (required)" },
	{ RECIPE_IN_DEVICES, "major", RECIPE_UINT, "0", .offset = DEV(major), .max = 4095,
	  .doc = "its major number" },
	{ RECIPE_IN_DEVICES, "minor", RECIPE_UINT, "0", .offset = DEV(minor), .max = 1048575,
	  .doc = "its minor number" },
	{ RECIPE_IN_DEVICES, "mode", RECIPE_MODE, "0600", .offset = DEV(mode),
	  .doc = "its permissions, an octal string" },
	{ RECIPE_IN_DEVICES, "uid", RECIPE_UINT, "0", .offset = DEV(uid), .max = 0xfffffffeu,
	  .doc = "its owner" },
	{ RECIPE_IN_DEVICES, "gid", RECIPE_UINT, "0", .offset = DEV(gid), .max = 0xfffffffeu,
	  .doc = "its group" },

	{ RECIPE_IN_DISK, "table", RECIPE_ENUM, "gpt", .offset = DISK(table), .choices = disk_tables,
	  .hint = "\"gpt\" or \"mbr\"", .doc = "the partition table" },
	{ RECIPE_IN_DISK, "size", RECIPE_SIZE, "auto", .offset = DISK(size),
	  .parse = recipe_disk_parse_size,
	  .doc = "the disk's size: \"auto\" (the partitions' sum) or such as \"4G\"" },
	{ RECIPE_IN_DISK, "output", RECIPE_STRING, .def_doc = "images/NAME.img",
	  .offset = DISK(output), .parse = recipe_disk_parse_output,
	  .shown = recipe_disk_shown_output, .doc = "where the disk is written, relative to the recipe" },
	{ RECIPE_IN_DISK, "bmap", RECIPE_BOOL, "true", .offset = DISK(bmap),
	  .doc = "write OUTPUT.bmap, the block map bmaptool copies by" },
	{ RECIPE_IN_DISK, "compress", RECIPE_ENUM, "none", .offset = DISK(compress),
	  .choices = disk_compressions, .hint = "\"none\", \"zstd\" or \"xz\"",
	  .doc = "OUTPUT.zst or OUTPUT.xz instead of OUTPUT" },
	{ RECIPE_IN_DISK, "bootloader", RECIPE_ENUM, "none", .offset = DISK(bootloader),
	  .choices = disk_bootloaders, .hint = "\"none\", \"extlinux\" or \"systemd-boot\"",
	  .doc = "the boot configuration written, from the plan's own packages" },
	{ RECIPE_IN_DISK, "console", RECIPE_STRING, .offset = DISK(console), .shown = shown_if_set,
	  .doc = "the kernel's console, such as \"ttyAMA0,115200\"" },
	{ RECIPE_IN_DISK, "cmdline", RECIPE_STRING, "ro rootwait", .offset = DISK(cmdline),
	  .doc = "the rest of the kernel command line, after root= and console=" },
	{ RECIPE_IN_DISK, "root_image", RECIPE_BOOL, "false", .offset = DISK(root_image),
	  .doc = "the root partition's filesystem also at image.output" },
	{ RECIPE_IN_DISK, "partitions", RECIPE_LIST, .offset = DISK(partitions),
	  .count = DISK(n_partitions), .sub = RECIPE_IN_PARTITIONS, .hint = LIST_OF,
	  .doc = "the partitions, in disk order (required)" },

	{ RECIPE_IN_PARTITIONS, "name", RECIPE_STRING, .offset = PART(name),
	  .doc = "its GPT name, unique (required)" },
	{ RECIPE_IN_PARTITIONS, "type", RECIPE_STRING, .offset = PART(type),
	  .parse = recipe_disk_parse_type,
	  .doc = "\"esp\", \"xbootldr\", \"root\", \"root-verity\", \"linux\", \"swap\", \"raw\" "
		 "or a type GUID (required)" },
	{ RECIPE_IN_PARTITIONS, "size", RECIPE_SIZE, "auto", .offset = PART(size),
	  .parse = recipe_disk_parse_size, .format = recipe_disk_fmt_size,
	  .doc = "\"auto\" (what it holds), \"grow\" (the rest of the disk) or such as \"256M\"" },
	{ RECIPE_IN_PARTITIONS, "min_size", RECIPE_SIZE, "auto", .offset = PART(min_size),
	  .parse = recipe_disk_parse_size, .shown = shown_if_set,
	  .doc = "with size \"auto\": at least this" },
	{ RECIPE_IN_PARTITIONS, "offset", RECIPE_SIZE, "auto", .offset = PART(offset),
	  .parse = recipe_disk_parse_size, .shown = shown_if_set,
	  .doc = "its first byte; \"auto\": after the one before, 1 MiB aligned" },
	{ RECIPE_IN_PARTITIONS, "contents", RECIPE_STRING, .def_doc = "nothing",
	  .offset = PART(path), .parse = recipe_disk_parse_contents,
	  .format = recipe_disk_fmt_contents, .shown = recipe_disk_shown_contents,
	  .doc = "\"root\", a directory such as \"/boot/efi\", \"file:/PATH\" written raw, or "
		 "\"verity:NAME\", partition NAME's dm-verity hash tree" },
	{ RECIPE_IN_PARTITIONS, "format", RECIPE_ENUM, .def_doc = "by type and contents",
	  .offset = PART(format), .choices = part_formats, .parse = recipe_disk_parse_format,
	  .format = recipe_disk_fmt_format,
	  .doc = "\"ext4\", \"vfat\", \"squashfs\" or \"none\" (raw bytes)" },
	{ RECIPE_IN_PARTITIONS, "compression", RECIPE_ENUM, "zstd", .offset = PART(compression),
	  .choices = fs_compressions, .hint = "\"zstd\", \"xz\", \"lz4\", \"gzip\" or \"none\"",
	  .check = recipe_disk_check_compression, .shown = shown_if_set,
	  .doc = "format = \"squashfs\": how its blocks are compressed" },
	{ RECIPE_IN_PARTITIONS, "label", RECIPE_STRING, .def_doc = "the name (root: image.label)",
	  .offset = PART(label), .shown = shown_if_set, .doc = "its filesystem's label" },
	{ RECIPE_IN_PARTITIONS, "legacy_boot", RECIPE_BOOL, "false", .offset = PART(legacy_boot),
	  .shown = shown_if_set, .doc = "the legacy-bootable flag, where U-Boot looks first" },
	{ RECIPE_IN_PARTITIONS, "read_only", RECIPE_BOOL, "false", .offset = PART(read_only),
	  .shown = shown_if_set, .doc = "the GPT read-only attribute" },
	{ RECIPE_IN_PARTITIONS, "in_table", RECIPE_BOOL, "true", .offset = PART(table_entry),
	  .doc = "false: raw bytes at a fixed offset, outside the table (a boot loader's SPL)" },

	{ RECIPE_IN_LAYERS, "registry", RECIPE_STRING, .def_doc = "none (--layer-registry)",
	  .offset = LAY(registry), .check = check_layer_registry, .shown = shown_layer_key,
	  .doc = "the OCI registry repository, http(s)://HOST[:PORT]/REPO" },
	{ RECIPE_IN_LAYERS, "sign_key", RECIPE_PATH, .def_doc = "none: nothing is pushed",
	  .offset = LAY(sign_key), .parse = parse_layer_key, .shown = shown_layer_key,
	  .doc = "the Ed25519 private key (PEM) pushed layers are signed with" },
	{ RECIPE_IN_LAYERS, "trusted_keys", RECIPE_PATHS, .def_doc = "none: nothing is pulled",
	  .offset = LAY(trusted_keys), .parse = parse_trusted_keys, .shown = shown_layer_key,
	  .doc = "public keys (PEM) a pulled layer must be signed by" },
	{ 0 }
};

/* ---- reading: every section the same way --------------------------------------------------- */

static int check_keys(struct recipe_ctx *c, const config_setting_t *group, enum recipe_section sec)
{
	const struct recipe_key *k, *best;
	unsigned d, best_d;
	int i;

	for (i = 0; i < config_setting_length(group); i++) {
		const config_setting_t *m = config_setting_get_elem(group, (unsigned)i);
		const char *name = config_setting_name(m);

		best = NULL;
		best_d = 4;
		for (k = recipe_keys; k->name; k++) {
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
				    sections[sec].where, best->name);
		return recipe_fail(c, m, "unknown key '%s' in %s", name, sections[sec].where);
	}
	return 0;
}

/* A key read by its type: its default first, then its value when present. */
static int get_value(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		     void *base)
{
	void *v = field(base, k->offset);

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
		return get_uint(c, g, k->name, k->max, v);
	case RECIPE_MODE:
		*(unsigned *)v = k->def ? (unsigned)strtoul(k->def, NULL, 8) : 0;
		return get_mode(c, g, k->name, v);
	case RECIPE_ENUM:
		for (*(int *)v = 0; k->def && k->choices[*(int *)v]; ++*(int *)v)
			if (!strcmp(k->choices[*(int *)v], k->def))
				break;
		return get_enum(c, g, k, v);
	case RECIPE_STRV:
		return get_strv(c, g, k->name, v);
	case RECIPE_OWNER:
		return get_owner(c, g, k->name, v, field(base, k->count));
	default:
		/* A type without a reader of its own needs a parse function in its row. */
		return recipe_fail(c, recipe_member(g, k->name), "'%s' cannot be read", k->name);
	}
}

static int parse_group(struct recipe_ctx *c, const config_setting_t *g,
		       const struct recipe_key *k, void *base);

static int parse_keys(struct recipe_ctx *c, const config_setting_t *g, enum recipe_section sec,
		      void *base)
{
	const struct recipe_key *k;
	int ret = 0;

	for (k = recipe_keys; !ret && k->name; k++) {
		if (k->section != sec)
			continue;
		if (k->parse)
			ret = k->parse(c, g, k, base);
		else if (k->type == RECIPE_GROUP)
			ret = parse_group(c, g, k, base);
		else if (k->type == RECIPE_LIST)
			ret = parse_list(c, g, k, base);
		else
			ret = get_value(c, g, k, base);
		if (!ret && k->check)
			ret = k->check(c, g, k, base);
	}
	if (!ret && sections[sec].finish)
		ret = sections[sec].finish(c, g, base);
	return ret;
}

/* A group of keys (packages, image); an absent one gets every default. */
static int parse_group(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		       void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);
	int ret;

	if (!s && k->required)
		return recipe_fail(c, g, "'%s' is required: %s", k->name, k->hint);
	if (s && config_setting_type(s) != CONFIG_TYPE_GROUP)
		return recipe_fail(c, s, "'%s' must be a group: %s", k->name, k->hint);
	ret = s ? check_keys(c, s, k->sub) : 0;
	if (!ret)
		ret = parse_keys(c, s, k->sub, field(base, k->offset));
	return ret;
}

/* A list of groups (sources, hooks, ...): an array of structs, each zeroed before it is read. */
static int parse_list(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		      void *base)
{
	const struct section *sec = &sections[k->sub];
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
	*(void **)field(base, k->offset) = v;
	*(size_t *)field(base, k->count) = n;
	for (i = 0; !ret && i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		void *elem = v + i * sec->size;

		*(int *)field(elem, sec->line) = config_setting_source_line(e);
		if (config_setting_type(e) != CONFIG_TYPE_GROUP)
			return recipe_fail(c, e, "%s", sec->shape);
		ret = check_keys(c, e, k->sub);
		if (!ret)
			ret = parse_keys(c, e, k->sub, elem);
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
	const void *v = cfield(base, k->offset);
	char t;

	if (k->format) {
		k->format(b, k, base, digest);
		return;
	}
	switch (k->type) {
	case RECIPE_STRING: fmt_str(b, *(char *const *)v); break;
	case RECIPE_PATH: fmt_path(b, *(char *const *)v, digest); break;
	case RECIPE_BOOL: buf_adds(b, *(const int *)v ? "true" : "false"); break;
	case RECIPE_UINT: buf_addf(b, "%u", *(const unsigned *)v); break;
	case RECIPE_MODE: buf_addf(b, "\"0%o\"", *(const unsigned *)v); break;
	case RECIPE_ENUM: buf_addf(b, "\"%s\"", k->choices[*(const int *)v]); break;
	case RECIPE_STRV: fmt_list(b, v, 0, 0); break;
	case RECIPE_PATHS: fmt_list(b, v, 1, digest); break;
	case RECIPE_OWNER:
		buf_addf(b, "\"%u:%u\"", *(const unsigned *)v,
			 *(const unsigned *)cfield(base, k->count));
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
			     *(const size_t *)cfield(base, k->count));
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
static void fmt_element(struct buf *b, enum recipe_section sec, const void *base, int digest)
{
	const struct recipe_key *k;

	buf_adds(b, "{ ");
	for (k = recipe_keys; k->name; k++) {
		if (k->section != sec || (k->shown && !k->shown(k, base, digest)))
			continue;
		buf_addf(b, "%s = ", k->name);
		fmt_value(b, k, base, digest);
		buf_adds(b, "; ");
	}
	buf_adds(b, "}");
}

static void fmt_section(struct buf *b, enum recipe_section sec, const void *base, int digest,
			const char *indent);

/* One key of a section: "KEY = VALUE;", a group or a list of groups over lines of their own. */
static void fmt_key(struct buf *b, const struct recipe_key *k, const void *base, int digest,
		    const char *indent)
{
	const void *sub = NULL;
	size_t i, n;

	buf_addf(b, "%s%s = ", indent, k->name);
	if (k->type == RECIPE_GROUP) {
		char *inner = xasprintf("%s  ", indent);

		buf_adds(b, "{\n");
		fmt_section(b, k->sub, cfield(base, k->offset), digest, inner);
		buf_addf(b, "%s};\n", indent);
		free(inner);
		return;
	}
	if (k->type != RECIPE_LIST) {
		fmt_value(b, k, base, digest);
		buf_adds(b, ";\n");
		return;
	}
	n = *(const size_t *)cfield(base, k->count);
	sub = *(const void *const *)cfield(base, k->offset);
	buf_adds(b, "(\n");
	for (i = 0; i < n; i++) {
		buf_addf(b, "%s  ", indent);
		fmt_element(b, k->sub, (const char *)sub + i * sections[k->sub].size, digest);
		buf_adds(b, i + 1 < n ? ",\n" : "\n");
	}
	buf_addf(b, "%s);\n", indent);
}

/* The keys of `sec`, one a line; groups and lists of groups spread over lines of their own. */
static void fmt_section(struct buf *b, enum recipe_section sec, const void *base, int digest,
			const char *indent)
{
	const struct recipe_key *k;

	for (k = recipe_keys; k->name; k++)
		if (k->section == sec && (!k->shown || k->shown(k, base, digest)))
			fmt_key(b, k, base, digest, indent);
}

/*
 * The digest form names files by content ("sha256:...") and leaves out the output path, so the
 * digest - and every identifier derived from it - is the same wherever the checkout lives.
 */
static void fmt_recipe(const struct recipe *r, struct buf *b, int digest)
{
	fmt_section(b, RECIPE_IN_TOP, r, digest, "");
}

void recipe_format(const struct recipe *r, struct buf *b)
{
	fmt_recipe(r, b, 0);
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

/* "PATH SHA256" of one key's digest form into `out`. */
static void field_digest(const struct recipe_key *k, const void *base, const char *path,
			 struct strv *out)
{
	struct buf b = { 0 };
	char hex[65];

	fmt_key(&b, k, base, 1, "");
	hash_sha256_hex(b.p, b.len, hex);
	strv_push_take(out, xasprintf("%s%s %s", path, k->name, hex));
	buf_release(&b);
}

/*
 * A group's keys one by one (packages.install, image.size): what a person edits is a key, and
 * the packages group alone is what most edits change. Lists and the disk stay whole.
 */
void recipe_field_digests(const struct recipe *r, struct strv *out)
{
	const struct recipe_key *k, *s;

	for (k = recipe_keys; k->name; k++) {
		const void *sub;
		char *path;

		if (k->section != RECIPE_IN_TOP || (k->shown && !k->shown(k, r, 1)))
			continue;
		if (k->type != RECIPE_GROUP || k->sub == RECIPE_IN_DISK) {
			field_digest(k, r, "", out);
			continue;
		}
		sub = cfield(r, k->offset);
		path = xasprintf("%s.", k->name);
		for (s = recipe_keys; s->name; s++)
			if (s->section == k->sub && (!s->shown || s->shown(s, sub, 1)))
				field_digest(s, sub, path, out);
		free(path);
	}
}

/* Every tree-affecting key under `sec`, "recipe PATH VALUE" a line, whether shown or not. */
static void fmt_tree(struct buf *b, enum recipe_section sec, const void *base, const char *path)
{
	const struct recipe_key *k;
	size_t i, n;

	for (k = recipe_keys; k->name; k++) {
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
			fmt_tree(b, k->sub, cfield(base, k->offset), p);
			free(p);
		}
		if (k->type != RECIPE_LIST)
			continue;
		n = *(const size_t *)cfield(base, k->count);
		sub = *(const char *const *)cfield(base, k->offset);
		for (i = 0; i < n; i++) {
			p = xasprintf("%s%s[%zu].", path, k->name, i);
			fmt_tree(b, k->sub, sub + i * sections[k->sub].size, p);
			free(p);
		}
	}
}

void recipe_format_tree(const struct recipe *r, struct buf *out)
{
	fmt_tree(out, RECIPE_IN_TOP, r, "");
	/* mkimage writes the initramfs' dm-verity support before configuring (configure/bootcfg.h) */
	if (recipe_disk_root_verity(r) >= 0)
		buf_adds(out, "recipe initramfs dm-verity\n");
}

/* ---- the table's sections ------------------------------------------------------------------ */

const char *recipe_section_name(enum recipe_section s)
{
	return sections[s].name;
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

/* ---- releasing ----------------------------------------------------------------------------- */

static void release_section(enum recipe_section sec, void *base)
{
	const struct recipe_key *k;
	struct recipe_package *p;
	size_t i, n;
	char *v;

	for (k = recipe_keys; k->name; k++) {
		if (k->section != sec)
			continue;
		switch (k->type) {
		case RECIPE_STRING:
		case RECIPE_PATH:
			free(*(char **)field(base, k->offset));
			break;
		case RECIPE_STRV:
		case RECIPE_PATHS:
			strv_release(field(base, k->offset));
			break;
		case RECIPE_PKGSPECS:
			p = *(struct recipe_package **)field(base, k->offset);
			n = *(size_t *)field(base, k->count);
			for (i = 0; i < n; i++) {
				free(p[i].name);
				free(p[i].arch);
				free(p[i].version);
			}
			free(p);
			break;
		case RECIPE_GROUP:
			release_section(k->sub, field(base, k->offset));
			break;
		case RECIPE_LIST:
			v = *(char **)field(base, k->offset);
			n = *(size_t *)field(base, k->count);
			for (i = 0; i < n; i++)
				release_section(k->sub, v + i * sections[k->sub].size);
			free(v);
			break;
		default:
			break;
		}
	}
}

void recipe_release(struct recipe *r)
{
	release_section(RECIPE_IN_TOP, r);
	free(r->file);
	free(r->dir);
	memset(r, 0, sizeof(*r));
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
	struct recipe_ctx c = { r, r->file, checks };
	const config_setting_t *root = config_root_setting(cfg);
	struct buf norm = { 0 };
	int ret = 0;

	if (!parsed) {
		log_error("%s:%d: %s", config_error_file(cfg) ? config_error_file(cfg) : r->file,
			  config_error_line(cfg), config_error_text(cfg));
		ret = -MKI_E_RECIPE;
	}
	if (!ret)
		ret = check_keys(&c, root, RECIPE_IN_TOP);
	if (!ret)
		ret = parse_keys(&c, root, RECIPE_IN_TOP, r);
	if (!ret) {
		fmt_recipe(r, &norm, 1);
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

