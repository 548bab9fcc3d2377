#include "recipe.h"

#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/identity.h"
#include "configure/overlay.h"
#include "debian/arch.h"
#include "debian/pathfilter.h"
#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/manifest.h"
#include "lib/readfile.h"
#include "recipe_internal.h"

#define RECIPE_MAX (1u << 20) /* a recipe or an @include file */
#define INCLUDE_DEPTH 8

struct ctx {
	struct recipe *r;
	const char *file;
	recipe_format_fn *formats;
};

/* image.format when the recipe says none; which formats exist is the image family's to say. */
#define DEFAULT_FORMAT "ext4"

/* The keys each group accepts; anything else is a typo and gets a "did you mean". */
static const char *const top_keys[] = { "name", "architecture", "auxiliary_architectures", "suite",
	"merged_usr", "sources", "packages", "hooks", "hook_timeout", "script_timeout", "image",
	"overlays", "hostname", "machine_id", NULL };
static const char *const source_keys[] = { "host", "uri", "suite", "components", "architectures",
	"keyring", "trusted", NULL };
static const char *const package_keys[] = { "base", "install", "exclude", "recommends",
	"allow_older", "local", "path_exclude", "path_include", "minimize", "locales", NULL };
static const char *const hook_keys[] = { "name", "script", "where", "timeout", NULL };
static const char *const image_keys[] = { "format", "output", "size", "margin", "label", "reserved",
	"uuid", "hash_seed", "devices", "fstab", "export_boot", "kernel", NULL };
static const char *const overlay_keys[] = { "source", "destination", "owner", "replace",
	"devices", NULL };
static const char *const device_keys[] = { "path", "type", "major", "minor", "mode", "uid", "gid",
	NULL };

static int fail(struct ctx *c, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const config_setting_t *s, const char *fmt, ...)
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

static int check_keys(struct ctx *c, const config_setting_t *group, const char *const *allowed,
		      const char *where)
{
	const char *const *k, *best;
	unsigned d, best_d;
	int i;

	for (i = 0; i < config_setting_length(group); i++) {
		const config_setting_t *m = config_setting_get_elem(group, (unsigned)i);
		const char *name = config_setting_name(m);

		best = NULL;
		best_d = 4;
		for (k = allowed; *k; k++) {
			if (!strcmp(*k, name))
				break;
			d = str_distance(name, *k);
			if (d < best_d) {
				best_d = d;
				best = *k;
			}
		}
		if (*k)
			continue;
		if (best)
			return fail(c, m, "unknown key '%s' in %s (did you mean '%s'?)", name, where,
				    best);
		return fail(c, m, "unknown key '%s' in %s", name, where);
	}
	return 0;
}

/* Optional string member: 0 if absent or set, error if the wrong type. */
static int get_str(struct ctx *c, const config_setting_t *g, const char *key, char **out)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(c, s, "'%s' must be a string (in double quotes)", key);
	free(*out);
	*out = xstrdup(config_setting_get_string(s));
	return 0;
}

static int get_bool(struct ctx *c, const config_setting_t *g, const char *key, int *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return fail(c, s, "'%s' must be true or false", key);
	*out = config_setting_get_bool(s);
	return 0;
}

static int get_uint(struct ctx *c, const config_setting_t *g, const char *key, unsigned max,
		    unsigned *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	long long v;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
		return fail(c, s, "'%s' must be an integer", key);
	v = config_setting_get_int64(s);
	if (config_setting_type(s) == CONFIG_TYPE_INT)
		v = config_setting_get_int(s);
	if (v < 0 || (unsigned long long)v > max)
		return fail(c, s, "'%s' must be between 0 and %u, not %lld", key, max, v);
	*out = (unsigned)v;
	return 0;
}

/* An array of strings (a single string is accepted as a one-element array). */
static int get_strv(struct ctx *c, const config_setting_t *g, const char *key, struct strv *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	int i;

	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		strv_push(out, config_setting_get_string(s));
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return fail(c, s, "'%s' must be a list of strings: [ \"a\", \"b\" ]", key);
	for (i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return fail(c, e, "'%s' must hold only strings", key);
		strv_push(out, config_setting_get_string(e));
	}
	return 0;
}

/* Resolve a recipe-relative path and require that it exists. */
static int get_path(struct ctx *c, const config_setting_t *s, const char *what, char **out)
{
	const char *p = config_setting_get_string(s);

	char *joined = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", c->r->dir, p);

	const char *kind = NULL;
	int fd, ret = 0;

	free(*out);
	*out = realpath(joined, NULL);
	if (!*out || access(*out, R_OK) != 0) {
		ret = fail(c, s, "%s '%s' not found (looked at '%s'): %s", what, p, joined,
			   strerror(errno));
		free(joined);
		return ret;
	}
	/* Read later (hashed for the lock, copied, parsed): a FIFO or a device would hang that. */
	fd = readfile_open(*out, &kind);
	if (fd == -EINVAL)
		ret = fail(c, s, "%s '%s' is %s, not a regular file: name a file", what, p, kind);
	else if (fd < 0)
		ret = fail(c, s, "%s '%s' cannot be read: %s", what, p, strerror(-fd));
	else
		close(fd);
	free(joined);
	return ret;
}

static int check_arch(struct ctx *c, const config_setting_t *s, const char *name)
{
	const char *hint;

	if (arch_find(name))
		return 0;
	hint = arch_suggest(name);
	if (hint)
		return fail(c, s, "unknown architecture '%s' (did you mean '%s'?)", name, hint);
	return fail(c, s, "unknown architecture '%s' (see 'dpkg-architecture -L')", name);
}

static int is_recipe_arch(const struct recipe *r, const char *a)
{
	return !strcmp(r->arch, a) || strv_contains(&r->aux_archs, a);
}

static int parse_arch_list(struct ctx *c, const config_setting_t *g, const char *key,
			   struct strv *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	size_t i;
	int ret = get_strv(c, g, key, out);

	for (i = 0; !ret && i < out->n; i++)
		ret = check_arch(c, s, out->v[i]);
	return ret;
}

static int parse_top(struct ctx *c, const config_setting_t *root)
{
	struct recipe *r = c->r;
	const config_setting_t *s;
	size_t i;
	int ret;

	ret = check_keys(c, root, top_keys, "the recipe");
	if (!ret)
		ret = get_str(c, root, "name", &r->name);
	if (!ret)
		ret = get_str(c, root, "architecture", &r->arch);
	if (!ret)
		ret = get_str(c, root, "suite", &r->suite);
	if (!ret)
		ret = get_bool(c, root, "merged_usr", &r->merged_usr);
	if (!ret)
		ret = get_uint(c, root, "hook_timeout", 86400, &r->hook_timeout);
	if (!ret)
		ret = get_uint(c, root, "script_timeout", 86400, &r->script_timeout);
	if (ret)
		return ret;
	if (!r->name || !r->name[0] || strpbrk(r->name, "/ \t\n") || r->name[0] == '.')
		return fail(c, config_setting_get_member(root, "name"),
			    "'name' is required: a non-empty word without '/' or spaces");
	if (!r->arch)
		return fail(c, root, "'architecture' (the primary architecture, e.g. \"armhf\") is required");
	ret = check_arch(c, config_setting_get_member(root, "architecture"), r->arch);
	if (!ret)
		ret = parse_arch_list(c, root, "auxiliary_architectures", &r->aux_archs);
	if (ret)
		return ret;
	s = config_setting_get_member(root, "auxiliary_architectures");
	for (i = 0; i < r->aux_archs.n; i++)
		if (!strcmp(r->aux_archs.v[i], r->arch))
			return fail(c, s, "'%s' is the primary architecture; list only others here",
				    r->arch);
	if (!r->suite)
		r->suite = xstrdup("bookworm");
	return 0;
}

static int parse_source(struct ctx *c, const config_setting_t *g, struct recipe_source *src)
{
	const config_setting_t *s;
	size_t i;
	int ret;

	src->line = config_setting_source_line(g);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail(c, g, "each source must be a group: { uri = \"...\"; ... }");
	ret = check_keys(c, g, source_keys, "a source");
	if (!ret)
		ret = get_bool(c, g, "host", &src->host);
	if (!ret)
		ret = get_str(c, g, "uri", &src->uri);
	if (!ret)
		ret = get_str(c, g, "suite", &src->suite);
	if (!ret)
		ret = get_strv(c, g, "components", &src->components);
	if (!ret)
		ret = parse_arch_list(c, g, "architectures", &src->archs);
	if (!ret)
		ret = get_bool(c, g, "trusted", &src->trusted);
	if (ret)
		return ret;
	for (i = 0; i < src->archs.n; i++)
		if (!is_recipe_arch(c->r, src->archs.v[i]))
			return fail(c, config_setting_get_member(g, "architectures"),
				    "architecture '%s' is not one of the recipe's architectures",
				    src->archs.v[i]);
	if (src->host && src->uri)
		return fail(c, g, "a source is either 'host = true' or has a 'uri', not both");
	if (!src->host && !src->uri)
		return fail(c, g, "a source needs 'uri' (or 'host = true' for the host's apt sources)");
	if (src->uri && !str_starts_with(src->uri, "http://") && !str_starts_with(src->uri, "https://") &&
	    !str_starts_with(src->uri, "file:/"))
		return fail(c, config_setting_get_member(g, "uri"),
			    "unsupported uri '%s': use http://, https:// or file://", src->uri);
	s = config_setting_get_member(g, "keyring");
	if (s && config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(c, s, "'keyring' must be a string (a path to a keyring file)");
	if (s && (ret = get_path(c, s, "keyring", &src->keyring)))
		return ret;
	if (!src->host && !src->keyring && !src->trusted)
		return fail(c, g, "source '%s' has no 'keyring': name the repository's signing key "
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

/* hostname and machine_id: what the image says about the device it boots on. */
static int parse_identity(struct ctx *c, const config_setting_t *root)
{
	char *mid = NULL;
	int ret = get_str(c, root, "hostname", &c->r->hostname);

	if (!ret && c->r->hostname && !identity_valid_hostname(c->r->hostname))
		ret = fail(c, config_setting_get_member(root, "hostname"),
			   "'hostname' must be letters, digits and '-' in dot-separated labels of at "
			   "most 63 (64 in all), not starting or ending with '-'; not '%s'",
			   c->r->hostname);
	if (!ret)
		ret = get_str(c, root, "machine_id", &mid);
	if (!ret && mid && !strcmp(mid, "empty"))
		c->r->machine_id = MACHINE_ID_EMPTY;
	else if (!ret && mid && strcmp(mid, "uninitialized"))
		ret = fail(c, config_setting_get_member(root, "machine_id"),
			   "'machine_id' must be \"uninitialized\" (first boot semantics) or \"empty\" "
			   "(read-only root), not '%s'", mid);
	free(mid);
	return ret;
}

static int parse_sources(struct ctx *c, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "sources");
	struct recipe *r = c->r;
	int i, ret;

	if (!s) {
		/* No sources means "whatever this machine's apt uses", like apt itself. */
		r->sources = xcalloc(1, sizeof(*r->sources));
		r->n_sources = 1;
		r->sources[0].host = 1;
		r->sources[0].suite = xstrdup(r->suite);
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return fail(c, s, "'sources' must be a list of groups: ( { ... }, { ... } )");
	if (config_setting_length(s) == 0)
		return fail(c, s, "'sources' is empty: add at least one source");
	r->n_sources = (size_t)config_setting_length(s);
	r->sources = xcalloc(r->n_sources, sizeof(*r->sources));
	for (i = 0; i < config_setting_length(s); i++) {
		ret = parse_source(c, config_setting_get_elem(s, (unsigned)i), &r->sources[i]);
		if (ret)
			return ret;
	}
	return 0;
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

static int parse_install(struct ctx *c, const config_setting_t *g)
{
	const config_setting_t *s = config_setting_get_member(g, "install");
	struct recipe *r = c->r;
	struct strv specs = { 0 };
	const char *why;
	size_t i;
	int ret = get_strv(c, g, "install", &specs);

	r->packages = xcalloc(specs.n + 1, sizeof(*r->packages));
	for (i = 0; !ret && i < specs.n; i++) {
		struct recipe_package *p = &r->packages[r->n_packages];

		if (recipe_parse_package(specs.v[i], p, &why)) {
			ret = fail(c, s, "package '%s': %s", specs.v[i], why);
			break;
		}
		r->n_packages++;
		p->line = config_setting_source_line(s);
		if (p->arch && !is_recipe_arch(r, p->arch))
			ret = fail(c, s, "package '%s' asks for architecture '%s', which is not in "
				   "'architecture' or 'auxiliary_architectures'", specs.v[i], p->arch);
	}
	strv_release(&specs);
	return ret;
}

static int parse_base(struct ctx *c, const config_setting_t *g)
{
	static const char *const names[] = { "none", "essential", "required", "important" };
	const config_setting_t *s = config_setting_get_member(g, "base");
	char *v = NULL;
	int i, ret = get_str(c, g, "base", &v);

	if (ret || !v)
		return ret;
	for (i = 0; i < 4; i++)
		if (!strcmp(v, names[i]))
			break;
	if (i < 4)
		c->r->base = (enum base_set)i;
	else
		ret = fail(c, s, "'base' must be \"none\", \"essential\", \"required\" or \"important\", "
			   "not '%s'", v);
	free(v);
	return ret;
}

/* A list of path filter globs or kept locales, each checked with its own line. */
static int get_checked(struct ctx *c, const config_setting_t *g, const char *key,
		       int (*check)(const char *, const char **), struct strv *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	const char *why;
	int i, ret = get_strv(c, g, key, out);

	for (i = 0; !ret && (size_t)i < out->n; i++) {
		const config_setting_t *e = config_setting_type(s) == CONFIG_TYPE_STRING
						    ? s : config_setting_get_elem(s, (unsigned)i);

		if (check(out->v[i], &why)) {
			struct buf esc = { 0 };

			buf_add_escaped(&esc, out->v[i]);
			ret = fail(c, e, "'%s': \"%s\" %s", key, esc.p, why);
			buf_release(&esc);
		}
	}
	return ret;
}

/* dpkg's --path-exclude/--path-include and the minimize preset (pathfilter.h). */
static int parse_path_filters(struct ctx *c, const config_setting_t *g)
{
	struct recipe *r = c->r;
	int ret = get_checked(c, g, "path_exclude", pathfilter_check_glob, &r->path_exclude);

	if (!ret)
		ret = get_checked(c, g, "path_include", pathfilter_check_glob, &r->path_include);
	if (!ret)
		ret = get_bool(c, g, "minimize", &r->minimize);
	if (!ret)
		ret = get_checked(c, g, "locales", pathfilter_check_locale, &r->locales);
	if (!ret && r->locales.n && !r->minimize)
		ret = fail(c, config_setting_get_member(g, "locales"),
			   "'locales' names the translations 'minimize' keeps: set 'minimize = true' "
			   "too, or remove 'locales' (without it every translation is kept)");
	return ret;
}

static int parse_packages(struct ctx *c, const config_setting_t *root)
{
	const config_setting_t *g = config_setting_get_member(root, "packages");
	const config_setting_t *s;
	struct recipe *r = c->r;
	int i, ret;

	r->base = BASE_REQUIRED;
	if (!g)
		return fail(c, root, "'packages' is required: packages = { install = [ ... ]; };");
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail(c, g, "'packages' must be a group: packages = { install = [ ... ]; };");
	ret = check_keys(c, g, package_keys, "'packages'");
	if (!ret)
		ret = parse_base(c, g);
	if (!ret)
		ret = parse_install(c, g);
	if (!ret)
		ret = get_strv(c, g, "exclude", &r->excludes);
	if (!ret)
		ret = get_bool(c, g, "recommends", &r->recommends);
	if (!ret)
		ret = get_bool(c, g, "allow_older", &r->allow_older);
	if (!ret)
		ret = parse_path_filters(c, g);
	if (ret)
		return ret;
	s = config_setting_get_member(g, "local");
	if (s && config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return fail(c, s, "'local' must be a list of .deb paths");
	for (i = 0; s && i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		char *path = NULL;

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return fail(c, e, "'local' must hold only strings");
		ret = get_path(c, e, "local package", &path);
		if (ret) {
			free(path);
			return ret;
		}
		strv_push_take(&r->local_debs, path);
	}
	if (!r->n_packages && r->base == BASE_NONE && !r->local_debs.n)
		return fail(c, g, "nothing to install: set 'base' or list packages in 'install'");
	return 0;
}

static int parse_hook(struct ctx *c, const config_setting_t *g, struct recipe_hook *h)
{
	const config_setting_t *s;
	char *where = NULL;
	int ret;

	h->line = config_setting_source_line(g);
	h->timeout = c->r->hook_timeout;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail(c, g, "each hook must be a group: { name = \"...\"; script = \"...\"; }");
	ret = check_keys(c, g, hook_keys, "a hook");
	if (!ret)
		ret = get_str(c, g, "name", &h->name);
	if (!ret)
		ret = get_str(c, g, "where", &where);
	if (!ret)
		ret = get_uint(c, g, "timeout", 86400, &h->timeout);
	if (!ret && where && strcmp(where, "inside") && strcmp(where, "outside"))
		ret = fail(c, config_setting_get_member(g, "where"),
			   "'where' must be \"inside\" (in the target, emulated) or \"outside\" (on the host), not '%s'",
			   where);
	if (!ret && where && !strcmp(where, "outside"))
		h->where = HOOK_OUTSIDE;
	free(where);
	if (ret)
		return ret;
	s = config_setting_get_member(g, "script");
	if (!s || config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(c, s ? s : g, "a hook needs 'script', a path to the script (string)");
	ret = get_path(c, s, "hook script", &h->script);
	if (!ret && !h->name) {
		const char *base = strrchr(h->script, '/');

		h->name = xstrdup(base ? base + 1 : h->script);
	}
	return ret;
}

static int parse_hooks(struct ctx *c, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "hooks");
	struct recipe *r = c->r;
	int i, ret;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return fail(c, s, "'hooks' must be a list of groups: ( { ... }, { ... } )");
	r->n_hooks = (size_t)config_setting_length(s);
	r->hooks = xcalloc(r->n_hooks + 1, sizeof(*r->hooks));
	for (i = 0; i < config_setting_length(s); i++) {
		ret = parse_hook(c, config_setting_get_elem(s, (unsigned)i), &r->hooks[i]);
		if (ret)
			return ret;
	}
	return 0;
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

/* Modes are octal strings ("0600"): libconfig reads 0600 as decimal six hundred. */
static int get_mode(struct ctx *c, const config_setting_t *g, unsigned *out)
{
	const config_setting_t *s = config_setting_get_member(g, "mode");
	const char *v;
	char *end;
	unsigned long m;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(c, s, "'mode' must be an octal string such as \"0600\" (libconfig reads a bare 0600 as decimal)");
	v = config_setting_get_string(s);
	m = strtoul(v, &end, 8);
	if (!*v || *end || m > 07777)
		return fail(c, s, "'mode' must be octal digits up to \"07777\", not '%s'", v);
	*out = (unsigned)m;
	return 0;
}

static int parse_device(struct ctx *c, const config_setting_t *g, struct recipe_device *d)
{
	char *type = NULL;
	int ret;

	d->line = config_setting_source_line(g);
	d->mode = 0600;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail(c, g, "each device must be a group: { path = \"/dev/console\"; type = \"char\"; ... }");
	ret = check_keys(c, g, device_keys, "a device");
	if (!ret)
		ret = get_str(c, g, "path", &d->path);
	if (!ret)
		ret = get_str(c, g, "type", &type);
	if (!ret)
		ret = get_uint(c, g, "major", 4095, &d->major);
	if (!ret)
		ret = get_uint(c, g, "minor", 1048575, &d->minor);
	if (!ret)
		ret = get_mode(c, g, &d->mode);
	if (!ret)
		ret = get_uint(c, g, "uid", 0xfffffffeu, &d->uid);
	if (!ret)
		ret = get_uint(c, g, "gid", 0xfffffffeu, &d->gid);
	if (!ret && (!d->path || d->path[0] != '/' || strstr(d->path, "/../") || str_ends_with(d->path, "/..")))
		ret = fail(c, g, "a device needs an absolute 'path' without '..'");
	if (!ret && type && !strcmp(type, "char"))
		d->type = 'c';
	else if (!ret && type && !strcmp(type, "block"))
		d->type = 'b';
	else if (!ret && type && !strcmp(type, "fifo"))
		d->type = 'p';
	else if (!ret)
		ret = fail(c, g, "device 'type' must be \"char\", \"block\" or \"fifo\"");
	free(type);
	return ret;
}

/* "UID:GID", numeric: the ids the build's commands have (0-65535). */
static int get_owner(struct ctx *c, const config_setting_t *g, struct recipe_overlay *o)
{
	const config_setting_t *s = config_setting_get_member(g, "owner");
	char *v = NULL, *end = NULL;
	unsigned long uid = 0, gid = 0;
	int ret = get_str(c, g, "owner", &v);

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
		ret = fail(c, s, "'owner' must be numeric \"UID:GID\" with ids up to 65535 (such as "
			   "\"0:0\"), not '%s'", v);
	o->uid = (unsigned)uid;
	o->gid = (unsigned)gid;
	free(v);
	return ret;
}

/* The source directory, relative to the recipe's; it must exist and be a directory. */
static int get_overlay_source(struct ctx *c, const config_setting_t *g, struct recipe_overlay *o)
{
	const config_setting_t *s = config_setting_get_member(g, "source");
	const char *p;
	char *joined;
	struct stat sb;
	int ret = 0;

	if (!s || config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(c, s ? s : g, "an overlay needs 'source', a directory beside the recipe "
			    "(string)");
	p = config_setting_get_string(s);
	joined = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", c->r->dir, p);
	o->source = realpath(joined, NULL);
	if (!o->source || stat(o->source, &sb) < 0)
		ret = fail(c, s, "overlay source '%s' not found (looked at '%s'): %s", p, joined,
			   strerror(errno));
	else if (!S_ISDIR(sb.st_mode))
		ret = fail(c, s, "overlay source '%s' is not a directory: name the directory whose "
			   "tree is copied", p);
	free(joined);
	return ret;
}

static int parse_overlay(struct ctx *c, const config_setting_t *g, struct recipe_overlay *o)
{
	const config_setting_t *s = config_setting_get_member(g, "destination");
	char *dest = NULL;
	int ret;

	o->line = config_setting_source_line(g);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail(c, g, "each overlay must be a group: { source = \"overlay/x\"; "
			    "destination = \"/\"; }");
	ret = check_keys(c, g, overlay_keys, "an overlay");
	if (!ret)
		ret = get_overlay_source(c, g, o);
	if (!ret)
		ret = get_str(c, g, "destination", &dest);
	if (!ret)
		ret = get_owner(c, g, o);
	if (!ret)
		ret = get_bool(c, g, "replace", &o->replace);
	if (!ret)
		ret = get_bool(c, g, "devices", &o->devices);
	if (!ret && (!dest || dest[0] != '/' || !(o->destination = manifest_normalize(dest))))
		ret = fail(c, s ? s : g, "an overlay needs 'destination', an absolute path of the "
			   "image without '..' (\"/\" for its root)");
	free(dest);
	if (!ret)
		ret = overlay_check(o, c->file);
	return ret;
}

static int parse_overlays(struct ctx *c, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "overlays");
	struct recipe *r = c->r;
	int i, ret;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return fail(c, s, "'overlays' must be a list of groups: ( { ... }, { ... } )");
	r->overlays = xcalloc((size_t)config_setting_length(s) + 1, sizeof(*r->overlays));
	for (i = 0; i < config_setting_length(s); i++) {
		r->n_overlays++;
		ret = parse_overlay(c, config_setting_get_elem(s, (unsigned)i), &r->overlays[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* "../images/x.ext4" against the recipe's directory, without the ".." when the directory exists. */
static char *resolve_output(const char *dir, const char *out)
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

/* fstab (default: formats with a label only), export_boot and kernel; after the format. */
static int parse_image_boot(struct ctx *c, const config_setting_t *g)
{
	struct recipe_image *im = &c->r->image;
	int ret;

	im->fstab = im->labelled;
	ret = get_bool(c, g, "fstab", &im->fstab);
	if (!ret)
		ret = get_bool(c, g, "export_boot", &im->export_boot);
	if (!ret)
		ret = get_str(c, g, "kernel", &im->kernel);
	if (!ret && im->kernel && (!im->kernel[0] || strchr(im->kernel, '/')))
		ret = fail(c, config_setting_get_member(g, "kernel"), "'kernel' is a kernel release "
			   "as in /boot/vmlinuz-RELEASE (such as \"6.1.0-13-armmp\"), not '%s'",
			   im->kernel);
	if (!ret && im->fstab && !im->labelled)
		ret = fail(c, config_setting_get_member(g, "fstab"),
			   "'fstab = true' names the root by its ext4 label: it needs format = \"ext4\"");
	return ret;
}

/* The name is kept as written; `c->formats` says whether it is a format and what it holds. */
static int set_format(struct ctx *c, const config_setting_t *g, const char *fmt)
{
	struct recipe_image *im = &c->r->image;
	const char *known = "";
	int labelled = c->formats(fmt ? fmt : DEFAULT_FORMAT, &known);

	if (labelled < 0)
		return fail(c, g ? config_setting_get_member(g, "format") : NULL,
			    "image 'format' must be %s, not '%s'", known,
			    fmt ? fmt : DEFAULT_FORMAT);
	im->format = xstrdup(fmt ? fmt : DEFAULT_FORMAT);
	im->labelled = labelled;
	return 0;
}

static int parse_image_scalars(struct ctx *c, const config_setting_t *g)
{
	struct recipe_image *im = &c->r->image;
	const config_setting_t *s;
	char *fmt = NULL, *size = NULL, *out = NULL;
	int ret;

	ret = check_keys(c, g, image_keys, "'image'");
	if (!ret)
		ret = get_str(c, g, "format", &fmt);
	if (!ret)
		ret = get_str(c, g, "size", &size);
	if (!ret)
		ret = get_str(c, g, "output", &out);
	if (!ret)
		ret = get_uint(c, g, "margin", 1000, &im->margin);
	if (!ret)
		ret = get_str(c, g, "label", &im->label);
	if (!ret)
		ret = get_uint(c, g, "reserved", 50, &im->reserved);
	if (!ret)
		ret = get_str(c, g, "uuid", &im->uuid);
	if (!ret)
		ret = get_str(c, g, "hash_seed", &im->hash_seed);
	if (!ret)
		ret = set_format(c, g, fmt);
	if (!ret)
		ret = parse_image_boot(c, g);
	s = config_setting_get_member(g, "size");
	if (!ret && size && strcmp(size, "auto") && recipe_parse_size(size, &im->size))
		ret = fail(c, s, "image 'size' must be \"auto\" or a size like \"512M\" or \"2G\", not '%s'",
			   size);
	if (!ret && im->label && strlen(im->label) > 16)
		ret = fail(c, config_setting_get_member(g, "label"),
			   "image 'label' is %zu bytes; ext4 labels hold at most 16", strlen(im->label));
	if (!ret && out)
		im->output = resolve_output(c->r->dir, out);
	free(fmt);
	free(size);
	free(out);
	return ret;
}

static int parse_image(struct ctx *c, const config_setting_t *root)
{
	const config_setting_t *g = config_setting_get_member(root, "image"), *s;
	struct recipe_image *im = &c->r->image;
	int i, ret;

	im->margin = 20;
	im->reserved = 5;
	if (!g)
		goto defaults;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail(c, g, "'image' must be a group: image = { format = \"ext4\"; ... };");
	ret = parse_image_scalars(c, g);
	if (ret)
		return ret;
	s = config_setting_get_member(g, "devices");
	if (s && config_setting_type(s) != CONFIG_TYPE_LIST)
		return fail(c, s, "'devices' must be a list of groups: ( { ... }, ... )");
	im->n_devices = s ? (size_t)config_setting_length(s) : 0;
	im->devices = xcalloc(im->n_devices + 1, sizeof(*im->devices));
	for (i = 0; i < (int)im->n_devices; i++) {
		ret = parse_device(c, config_setting_get_elem(s, (unsigned)i), &im->devices[i]);
		if (ret)
			return ret;
	}
defaults:
	if (!g && (ret = set_format(c, NULL, NULL)))
		return ret;
	if (!g)
		im->fstab = im->labelled;
	if (!im->label)
		im->label = xstrdup("rootfs");
	return 0;
}

/* libconfig string literal with escapes, so the normalized form parses back. */
static void fmt_str(struct buf *b, const char *s)
{
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

static void fmt_strv(struct buf *b, const struct strv *v)
{
	fmt_list(b, v, 0, 0);
}

static void fmt_sources(const struct recipe *r, struct buf *b, int digest)
{
	size_t i;

	buf_adds(b, "sources = (\n");
	for (i = 0; i < r->n_sources; i++) {
		const struct recipe_source *s = &r->sources[i];

		buf_adds(b, "  { ");
		if (s->host) {
			buf_adds(b, "host = true; ");
		} else {
			buf_adds(b, "uri = ");
			fmt_str(b, s->uri);
			buf_adds(b, "; ");
		}
		buf_adds(b, "suite = ");
		fmt_str(b, s->suite);
		buf_adds(b, "; components = ");
		fmt_strv(b, &s->components);
		buf_adds(b, "; architectures = ");
		fmt_strv(b, &s->archs);
		if (s->keyring) {
			buf_adds(b, "; keyring = ");
			fmt_path(b, s->keyring, digest);
		}
		buf_addf(b, "; trusted = %s; }%s\n", s->trusted ? "true" : "false",
			 i + 1 < r->n_sources ? "," : "");
	}
	buf_adds(b, ");\n");
}

/* Only when set: recipes written before these keys keep their digest. */
static void fmt_path_filters(const struct recipe *r, struct buf *b)
{
	if (r->path_exclude.n) {
		buf_adds(b, "  path_exclude = ");
		fmt_strv(b, &r->path_exclude);
		buf_adds(b, ";\n");
	}
	if (r->path_include.n) {
		buf_adds(b, "  path_include = ");
		fmt_strv(b, &r->path_include);
		buf_adds(b, ";\n");
	}
	if (r->minimize) {
		buf_adds(b, "  minimize = true;\n  locales = ");
		fmt_strv(b, &r->locales);
		buf_adds(b, ";\n");
	}
}

static void fmt_packages(const struct recipe *r, struct buf *b, int digest)
{
	static const char *const bases[] = { "none", "essential", "required", "important" };
	size_t i;

	buf_addf(b, "packages = {\n  base = \"%s\";\n  install = [", bases[r->base]);
	for (i = 0; i < r->n_packages; i++) {
		const struct recipe_package *p = &r->packages[i];

		buf_addf(b, "%s\"%s%s%s%s%s\"", i ? ", " : " ", p->name, p->arch ? ":" : "",
			 p->arch ? p->arch : "", p->version ? "=" : "", p->version ? p->version : "");
	}
	buf_adds(b, r->n_packages ? " ];\n  exclude = " : "];\n  exclude = ");
	fmt_strv(b, &r->excludes);
	buf_addf(b, ";\n  recommends = %s;\n  allow_older = %s;\n  local = ",
		 r->recommends ? "true" : "false", r->allow_older ? "true" : "false");
	fmt_list(b, &r->local_debs, 1, digest);
	buf_adds(b, ";\n");
	fmt_path_filters(r, b);
	buf_adds(b, "};\n");
}

static void fmt_hooks(const struct recipe *r, struct buf *b, int digest)
{
	size_t i;

	buf_addf(b, "hook_timeout = %u;\n", r->hook_timeout);
	/* Only when set: recipes written before the key keep their digest. */
	if (r->script_timeout != RECIPE_SCRIPT_TIMEOUT)
		buf_addf(b, "script_timeout = %u;\n", r->script_timeout);
	buf_adds(b, "hooks = (\n");
	for (i = 0; i < r->n_hooks; i++) {
		const struct recipe_hook *h = &r->hooks[i];

		buf_adds(b, "  { name = ");
		fmt_str(b, h->name);
		buf_adds(b, "; script = ");
		fmt_path(b, h->script, digest);
		buf_addf(b, "; where = \"%s\"; timeout = %u; }%s\n",
			 h->where == HOOK_INSIDE ? "inside" : "outside", h->timeout,
			 i + 1 < r->n_hooks ? "," : "");
	}
	buf_adds(b, ");\n");
}

static void fmt_image(const struct recipe *r, struct buf *b, int digest)
{
	const struct recipe_image *im = &r->image;
	size_t i;

	buf_addf(b, "image = {\n  format = \"%s\";\n", im->format);
	if (im->output && !digest) {
		buf_adds(b, "  output = ");
		fmt_str(b, im->output);
		buf_adds(b, ";\n");
	}
	if (im->size)
		buf_addf(b, "  size = \"%llu\";\n", (unsigned long long)im->size);
	else
		buf_adds(b, "  size = \"auto\";\n");
	buf_addf(b, "  margin = %u;\n  label = ", im->margin);
	fmt_str(b, im->label);
	buf_addf(b, ";\n  reserved = %u;\n", im->reserved);
	if (im->uuid) {
		buf_adds(b, "  uuid = ");
		fmt_str(b, im->uuid);
		buf_adds(b, ";\n");
	}
	if (im->hash_seed) {
		buf_adds(b, "  hash_seed = ");
		fmt_str(b, im->hash_seed);
		buf_adds(b, ";\n");
	}
	if (im->fstab != im->labelled) /* only when not the default: same digest */
		buf_addf(b, "  fstab = %s;\n", im->fstab ? "true" : "false");
	if (im->export_boot)
		buf_adds(b, "  export_boot = true;\n");
	if (im->kernel) {
		buf_adds(b, "  kernel = ");
		fmt_str(b, im->kernel);
		buf_adds(b, ";\n");
	}
	buf_adds(b, "  devices = (\n");
	for (i = 0; i < im->n_devices; i++) {
		const struct recipe_device *d = &im->devices[i];

		buf_adds(b, "    { path = ");
		fmt_str(b, d->path);
		buf_addf(b, "; type = \"%s\"; major = %u; minor = %u; mode = \"0%o\"; uid = %u; gid = %u; }%s\n",
			 d->type == 'c' ? "char" : d->type == 'b' ? "block" : "fifo", d->major, d->minor,
			 d->mode, d->uid, d->gid, i + 1 < im->n_devices ? "," : "");
	}
	buf_adds(b, "  );\n};\n");
}

/* Only when present: recipes without overlays keep their digest. */
static void fmt_overlays(const struct recipe *r, struct buf *b, int digest)
{
	size_t i;

	if (!r->n_overlays)
		return;
	buf_adds(b, "overlays = (\n");
	for (i = 0; i < r->n_overlays; i++) {
		const struct recipe_overlay *o = &r->overlays[i];

		buf_adds(b, "  { source = ");
		if (digest)
			buf_addf(b, "\"sha256:%s\"", o->digest);
		else
			fmt_str(b, o->source);
		buf_adds(b, "; destination = \"/");
		buf_add_escaped(b, o->destination);
		buf_addf(b, "\"; owner = \"%u:%u\"; replace = %s; devices = %s; }%s\n", o->uid,
			 o->gid, o->replace ? "true" : "false", o->devices ? "true" : "false",
			 i + 1 < r->n_overlays ? "," : "");
	}
	buf_adds(b, ");\n");
}

/*
 * The digest form names files by content ("sha256:...") and leaves out the output path, so the
 * digest - and every identifier derived from it - is the same wherever the checkout lives.
 */
static void fmt_recipe(const struct recipe *r, struct buf *b, int digest)
{
	buf_adds(b, "name = ");
	fmt_str(b, r->name);
	buf_addf(b, ";\narchitecture = \"%s\";\nauxiliary_architectures = ", r->arch);
	fmt_strv(b, &r->aux_archs);
	buf_adds(b, ";\nsuite = ");
	fmt_str(b, r->suite);
	buf_addf(b, ";\nmerged_usr = %s;\n", r->merged_usr ? "true" : "false");
	fmt_sources(r, b, digest);
	fmt_packages(r, b, digest);
	fmt_hooks(r, b, digest);
	fmt_overlays(r, b, digest);
	if (r->hostname) {
		buf_adds(b, "hostname = ");
		fmt_str(b, r->hostname);
		buf_adds(b, ";\n");
	}
	if (r->machine_id == MACHINE_ID_EMPTY)
		buf_adds(b, "machine_id = \"empty\";\n");
	fmt_image(r, b, digest);
}

void recipe_format(const struct recipe *r, struct buf *b)
{
	fmt_recipe(r, b, 0);
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

static int parse_all(struct ctx *c, const config_setting_t *root)
{
	int ret = parse_top(c, root);

	if (!ret)
		ret = parse_sources(c, root);
	if (!ret)
		ret = parse_packages(c, root);
	if (!ret)
		ret = parse_hooks(c, root);
	if (!ret)
		ret = parse_image(c, root);
	if (!ret)
		ret = parse_overlays(c, root);
	if (!ret)
		ret = parse_identity(c, root);
	return ret;
}

/* Validate a parsed configuration into `r` (whose file and dir are set); releases `cfg`. */
static int finish_load(struct recipe *r, config_t *cfg, int parsed, recipe_format_fn *formats)
{
	struct ctx c = { r, r->file, formats };
	struct buf norm = { 0 };
	int ret = 0;

	if (!parsed) {
		log_error("%s:%d: %s", config_error_file(cfg) ? config_error_file(cfg) : r->file,
			  config_error_line(cfg), config_error_text(cfg));
		ret = -MKI_E_RECIPE;
	}
	if (!ret)
		ret = parse_all(&c, config_root_setting(cfg));
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
	r->merged_usr = 1;
	r->hook_timeout = 600;
	r->script_timeout = RECIPE_SCRIPT_TIMEOUT;
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
		ret = r ? (r == -MKI_E_INTERRUPTED ? r : -MKI_E_RECIPE)
			: check_includes(path, b.p, dir, depth + 1);
		buf_release(&b);
		free(path);
		free(inc);
	}
	return ret;
}

int recipe_load(struct recipe *r, const char *path, recipe_format_fn *formats)
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
		ret = check_includes(path, text.p, r->dir, 0);
	if (ret) {
		buf_release(&text);
		config_destroy(&cfg);
		recipe_release(r);
		return ret == -MKI_E_INTERRUPTED ? ret : -MKI_E_RECIPE;
	}
	config_set_include_dir(&cfg, r->dir);
	ret = finish_load(r, &cfg, config_read_string(&cfg, text.p), formats);
	buf_release(&text);
	return ret;
}

int recipe_parse_text(struct recipe *r, const char *text, const char *name, const char *dir,
		      recipe_format_fn *formats)
{
	config_t cfg;

	start_load(r, &cfg, name);
	r->dir = xstrdup(dir);
	return finish_load(r, &cfg, config_read_string(&cfg, text), formats);
}

void recipe_release(struct recipe *r)
{
	size_t i;

	for (i = 0; i < r->n_sources; i++) {
		free(r->sources[i].uri);
		free(r->sources[i].suite);
		free(r->sources[i].keyring);
		strv_release(&r->sources[i].components);
		strv_release(&r->sources[i].archs);
	}
	for (i = 0; i < r->n_packages; i++) {
		free(r->packages[i].name);
		free(r->packages[i].arch);
		free(r->packages[i].version);
	}
	for (i = 0; i < r->n_hooks; i++) {
		free(r->hooks[i].name);
		free(r->hooks[i].script);
	}
	for (i = 0; i < r->n_overlays; i++) {
		free(r->overlays[i].source);
		free(r->overlays[i].destination);
	}
	free(r->overlays);
	free(r->hostname);
	for (i = 0; i < r->image.n_devices; i++)
		free(r->image.devices[i].path);
	free(r->image.devices);
	free(r->image.format);
	free(r->image.output);
	free(r->image.label);
	free(r->image.uuid);
	free(r->image.hash_seed);
	free(r->image.kernel);
	free(r->sources);
	free(r->packages);
	free(r->hooks);
	strv_release(&r->aux_archs);
	strv_release(&r->excludes);
	strv_release(&r->local_debs);
	strv_release(&r->path_exclude);
	strv_release(&r->path_include);
	strv_release(&r->locales);
	free(r->file);
	free(r->dir);
	free(r->name);
	free(r->arch);
	free(r->suite);
	memset(r, 0, sizeof(*r));
}
