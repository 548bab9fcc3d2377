/*
 * The recipe's keys: every key is a row of recipe_keys[] - its section, type, default, one-line
 * doc, whether it changes the configured tree, and where its value lives - and what a type alone
 * cannot check is a function named in its row. The walker (recipe_read.c) runs the table.
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

#define STRINGIFY(x) #x
#define DEC(x) STRINGIFY(x)

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
	struct strv *out = recipe_field(base, k->offset);
	size_t i;
	int ret = recipe_get_strv(c, g, k->name, out);

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

/* Since trixie packages ship their files under /usr only (DEP17): a tree without the links breaks. */
static int check_merged_usr(struct recipe_ctx *c, const config_setting_t *g,
			    const struct recipe_key *k, void *base)
{
	static const char *const merged_only[] = { "trixie", "forky", "duke", "sid", "testing",
						    "unstable", NULL };
	const struct recipe *r = c->r;
	size_t i;

	if (r->merged_usr || !r->suite)
		return 0;
	for (i = 0; merged_only[i]; i++)
		if (!strcmp(r->suite, merged_only[i]))
			return recipe_fail(c, recipe_member(g, k->name), "merged_usr = false: suite "
				    "'%s' requires merged /usr (its packages ship /bin, /sbin and /lib "
				    "under /usr only); drop the key, or build bookworm", r->suite);
	return 0;
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
	return !digest && *(char *const *)recipe_cfield(base, k->offset) != NULL;
}

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
	ret = recipe_read_list(c, g, k, base);
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
	return s ? recipe_get_path(c, s, "keyring", recipe_field(base, k->offset)) : 0;
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




static int parse_install(struct recipe_ctx *c, const config_setting_t *g,
			 const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, "install");
	struct recipe *r = c->r;
	struct strv specs = { 0 };
	const char *why;
	size_t i;
	int ret = recipe_get_strv(c, g, "install", &specs);

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
		ret = recipe_get_path(c, e, "local package", &path);
		if (ret) {
			free(path);
			return ret;
		}
		strv_push_take(&c->r->local_debs, path);
	}
	return 0;
}

/* dpkg's --path-exclude/--path-include and the minimize preset (pathfilter.h). */
static int parse_glob_list(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base)
{
	return recipe_get_checked(c, g, k->name, pathfilter_check_glob, recipe_field(base, k->offset));
}

static int parse_locales(struct recipe_ctx *c, const config_setting_t *g,
			 const struct recipe_key *k, void *base)
{
	struct recipe *r = c->r;
	int ret = recipe_get_checked(c, g, k->name, pathfilter_check_locale, &r->locales);

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
	return recipe_get_path(c, s, "hook script", recipe_field(base, k->offset));
}

static int parse_hook_timeout(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_key *k, void *base)
{
	unsigned *t = recipe_field(base, k->offset);

	*t = c->r->hook_timeout;
	return recipe_get_uint(c, g, k->name, k->max, t);
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
		recipe_fmt_str(b, o->source);
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
	struct buf known = { 0 };
	char *fmt = NULL;
	int ret = recipe_get_str(c, g, "format", &fmt);

	if (ret)
		return ret;
	if (!fmt)
		fmt = xstrdup(k->def);
	ret = c->checks->format(fmt, &known);
	if (ret < 0) {
		ret = recipe_fail(c, recipe_member(g, "format"), "image 'format' must be %s, not '%s'",
				  known.p ? known.p : "", fmt);
		buf_release(&known);
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


static int parse_output(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
			void *base)
{
	char **output = recipe_field(base, k->offset);
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


static int parse_size(struct recipe_ctx *c, const config_setting_t *g, const struct recipe_key *k,
		      void *base)
{
	char *size = NULL;
	int ret = recipe_get_str(c, g, "size", &size);

	if (!ret && size && strcmp(size, "auto") && recipe_parse_size(size, recipe_field(base, k->offset)))
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

/* ---- the table ----------------------------------------------------------------------------- */

static const struct recipe_section_info sections[RECIPE_N_SECTIONS] = {
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
	[RECIPE_IN_UPDATE] = { "update", "'update'", NULL, 0, 0, recipe_update_finish },
	[RECIPE_IN_SDK] = { "sdk", "'sdk'", NULL, 0, 0, NULL },
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
#define UPD(f) offsetof(struct recipe_update, f)
#define SDK(f) offsetof(struct recipe_sdk, f)
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
	  .check = check_merged_usr,
	  .doc = "/bin, /sbin and /lib as links into /usr" },
	{ RECIPE_IN_TOP, "sources", RECIPE_LIST, .def_doc = "( { host = true; } )",
	  .offset = TOP(sources), .count = TOP(n_sources), .sub = RECIPE_IN_SOURCES,
	  .hint = LIST_OF, .parse = parse_sources, .doc = "the apt repositories packages come from" },
	{ RECIPE_IN_TOP, "host_twins", RECIPE_BOOL, "true", .offset = TOP(host_twins),
	  .shown = recipe_shown_if_false,
	  .doc = "native tools' twins may come from the host's own apt sources when the recipe's "
		 "lack the host's architecture (false: only the recipe's sources are contacted, "
		 "as --no-host-twins)" },
	{ RECIPE_IN_TOP, "packages", RECIPE_GROUP, .sub = RECIPE_IN_PACKAGES, .required = 1,
	  .hint = "packages = { install = [ ... ]; };", .doc = "what is installed" },
	{ RECIPE_IN_TOP, "hook_timeout", RECIPE_UINT, "600", .offset = TOP(hook_timeout),
	  .max = 86400, .doc = "seconds each hook may run unless it says otherwise" },
	{ RECIPE_IN_TOP, "script_timeout", RECIPE_UINT, DEC(RECIPE_SCRIPT_TIMEOUT),
	  .offset = TOP(script_timeout), .max = 86400, .shown = recipe_shown_if_not_default,
	  .doc = "seconds one maintainer script may run, and dpkg without progress "
		 "(0: no per-script bound)" },
	{ RECIPE_IN_TOP, "hooks", RECIPE_LIST, .offset = TOP(hooks), .count = TOP(n_hooks),
	  .sub = RECIPE_IN_HOOKS, .hint = LIST_OF, .doc = "scripts run after the overlays" },
	{ RECIPE_IN_TOP, "overlays", RECIPE_LIST, .offset = TOP(overlays), .count = TOP(n_overlays),
	  .sub = RECIPE_IN_OVERLAYS, .hint = LIST_OF, .shown = recipe_shown_if_set,
	  .doc = "directories copied into the tree after configuration" },
	{ RECIPE_IN_TOP, "hostname", RECIPE_STRING, .def_doc = "/etc/hostname left alone",
	  .offset = TOP(hostname), .check = check_hostname, .shown = recipe_shown_if_set,
	  .doc = "the image's /etc/hostname and its 127.0.1.1 line in /etc/hosts" },
	{ RECIPE_IN_TOP, "sbom_namespace", RECIPE_STRING, .def_doc = RECIPE_SBOM_NAMESPACE,
	  .offset = TOP(sbom_namespace), .check = check_sbom_namespace,
	  .shown = shown_outside_digest,
	  .doc = "the SBOM's documentNamespace, followed by /NAME-SHA256 of the image" },
	{ RECIPE_IN_TOP, "machine_id", RECIPE_ENUM, "uninitialized", .offset = TOP(machine_id),
	  .choices = machine_ids, .shown = recipe_shown_if_set,
	  .hint = "\"uninitialized\" (first boot semantics) or \"empty\" (read-only root)",
	  .doc = "what /etc/machine-id holds" },
	{ RECIPE_IN_TOP, "image", RECIPE_GROUP, .offset = TOP(image), .sub = RECIPE_IN_IMAGE,
	  .hint = "image = { format = \"ext4\"; ... };", .doc = "the image written" },
	{ RECIPE_IN_TOP, "board", RECIPE_STRING, .def_doc = "none", .offset = TOP(board),
	  .check = recipe_board_check, .shown = recipe_shown_if_set,
	  .doc = "the board the disk boots (board profiles): its disk's defaults and rules" },
	{ RECIPE_IN_TOP, "disk", RECIPE_GROUP, .offset = TOP(disk), .sub = RECIPE_IN_DISK,
	  .shown = recipe_disk_shown, .def_doc = "no disk: the image alone",
	  .hint = "disk = { partitions = ( { name = \"root\"; type = \"root\"; contents = \"root\"; } ); };",
	  .doc = "a whole disk: partition table, boot loader, the image in a partition" },
	{ RECIPE_IN_TOP, "update", RECIPE_GROUP, .offset = TOP(update), .sub = RECIPE_IN_UPDATE,
	  .shown = recipe_update_shown, .def_doc = "no update bundle",
	  .hint = "update = { format = \"rauc\"; compatible = \"...\"; version = \"...\"; ... };",
	  .doc = "a signed update bundle of the disk's root for its other slots" },
	{ RECIPE_IN_TOP, "layers", RECIPE_GROUP, .offset = TOP(layers), .sub = RECIPE_IN_LAYERS,
	  .shown = recipe_layers_shown, .def_doc = "configured trees cached on this machine only",
	  .hint = "layers = { registry = \"http://127.0.0.1:5000/REPO\"; trusted_keys = [ ... ]; };",
	  .doc = "a registry sharing configured trees between machines (not in the digest)" },
	{ RECIPE_IN_TOP, "sdk", RECIPE_GROUP, .offset = TOP(sdk), .sub = RECIPE_IN_SDK,
	  .shown = recipe_sdk_shown, .def_doc = "the -dev packages of the image's libraries",
	  .hint = "sdk = { packages = [ \"libfoo-dev\" ]; image_libraries = true; };",
	  .doc = "what mkimage --sdk adds to the cross toolchains (not in the digest)" },

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
	  .shown = recipe_shown_if_set, .doc = "the repository's signing keys (required unless trusted)" },
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
	  .parse = parse_glob_list, .shown = recipe_shown_if_set,
	  .doc = "globs of paths not unpacked (dpkg's --path-exclude)" },
	{ RECIPE_IN_PACKAGES, "path_include", RECIPE_STRV, .offset = TOP(path_include), .tree = 1,
	  .parse = parse_glob_list, .shown = recipe_shown_if_set,
	  .doc = "globs unpacked after all (dpkg's --path-include)" },
	{ RECIPE_IN_PACKAGES, "minimize", RECIPE_BOOL, "false", .offset = TOP(minimize), .tree = 1,
	  .shown = recipe_shown_if_set,
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
	  .check = check_image_compression, .shown = recipe_shown_if_set,
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
	  .offset = IMG(uuid), .shown = recipe_shown_if_set, .doc = "the file system's UUID" },
	{ RECIPE_IN_IMAGE, "hash_seed", RECIPE_STRING, .def_doc = "derived from the lock digest",
	  .offset = IMG(hash_seed), .shown = recipe_shown_if_set,
	  .doc = "the seed of the directory index hashes" },
	{ RECIPE_IN_IMAGE, "fstab", RECIPE_BOOL, .def_doc = "true for ext4", .offset = IMG(fstab),
	  .parse = parse_fstab, .shown = shown_fstab,
	  .doc = "write /etc/fstab naming the root by its label" },
	{ RECIPE_IN_IMAGE, "export_boot", RECIPE_BOOL, "false", .offset = IMG(export_boot),
	  .shown = recipe_shown_if_set, .doc = "kernel, initrd and device trees beside the image" },
	{ RECIPE_IN_IMAGE, "kernel", RECIPE_STRING, .def_doc = "the only one",
	  .offset = IMG(kernel), .check = check_kernel, .shown = recipe_shown_if_set,
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
	  .check = recipe_board_check_table,
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
	{ RECIPE_IN_DISK, "console", RECIPE_STRING, .offset = DISK(console), .shown = recipe_shown_if_set,
	  .doc = "the kernel's console, such as \"ttyAMA0,115200\"" },
	{ RECIPE_IN_DISK, "cmdline", RECIPE_STRING, "ro rootwait", .offset = DISK(cmdline),
	  .shown = recipe_shown_if_set, /* a board's firmware writing it has none */
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
	  .parse = recipe_disk_parse_size, .shown = recipe_shown_if_set,
	  .doc = "with size \"auto\": at least this" },
	{ RECIPE_IN_PARTITIONS, "offset", RECIPE_SIZE, "auto", .offset = PART(offset),
	  .parse = recipe_disk_parse_size, .shown = recipe_shown_if_set,
	  .doc = "its first byte; \"auto\": after the one before, 1 MiB aligned" },
	{ RECIPE_IN_PARTITIONS, "contents", RECIPE_STRING, .def_doc = "nothing",
	  .offset = PART(path), .parse = recipe_disk_parse_contents,
	  .format = recipe_disk_fmt_contents, .shown = recipe_disk_shown_contents,
	  .doc = "\"root\", a directory such as \"/boot/efi\", \"file:/PATH\" written raw, or "
		 "\"verity:NAME\", partition NAME's dm-verity hash tree" },
	{ RECIPE_IN_PARTITIONS, "format", RECIPE_ENUM, .def_doc = "by type and contents",
	  .offset = PART(format), .parse = recipe_disk_parse_format,
	  .format = recipe_disk_fmt_format,
	  .doc = "\"ext4\", \"vfat\", \"squashfs\" or \"none\" (raw bytes)" },
	{ RECIPE_IN_PARTITIONS, "compression", RECIPE_ENUM, "zstd", .offset = PART(compression),
	  .choices = fs_compressions, .hint = "\"zstd\", \"xz\", \"lz4\", \"gzip\" or \"none\"",
	  .check = recipe_disk_check_compression, .shown = recipe_shown_if_set,
	  .doc = "format = \"squashfs\": how its blocks are compressed" },
	{ RECIPE_IN_PARTITIONS, "label", RECIPE_STRING, .def_doc = "the name (root: image.label)",
	  .offset = PART(label), .shown = recipe_shown_if_set, .doc = "its filesystem's label" },
	{ RECIPE_IN_PARTITIONS, "legacy_boot", RECIPE_BOOL, "false", .offset = PART(legacy_boot),
	  .shown = recipe_shown_if_set, .doc = "the legacy-bootable flag, where U-Boot looks first" },
	{ RECIPE_IN_PARTITIONS, "read_only", RECIPE_BOOL, "false", .offset = PART(read_only),
	  .shown = recipe_shown_if_set, .doc = "the GPT read-only attribute" },
	{ RECIPE_IN_PARTITIONS, "in_table", RECIPE_BOOL, "true", .offset = PART(table_entry),
	  .doc = "false: raw bytes at a fixed offset, outside the table (a boot loader's SPL)" },

	{ RECIPE_IN_LAYERS, "registry", RECIPE_STRING, .def_doc = "none (--layer-registry)",
	  .offset = LAY(registry), .check = recipe_layers_check_registry, .shown = recipe_layers_shown_key,
	  .doc = "the OCI registry repository, http(s)://HOST[:PORT]/REPO" },
	{ RECIPE_IN_LAYERS, "sign_key", RECIPE_PATH, .def_doc = "none: nothing is pushed",
	  .offset = LAY(sign_key), .parse = recipe_layers_parse_key, .shown = recipe_layers_shown_key,
	  .doc = "the Ed25519 private key (PEM) pushed layers are signed with" },
	{ RECIPE_IN_LAYERS, "trusted_keys", RECIPE_PATHS, .def_doc = "none: nothing is pulled",
	  .offset = LAY(trusted_keys), .parse = recipe_layers_parse_trusted, .shown = recipe_layers_shown_key,
	  .doc = "public keys (PEM) a pulled layer must be signed by" },

	{ RECIPE_IN_UPDATE, "format", RECIPE_STRING, "rauc", .offset = UPD(format),
	  .check = recipe_update_check_format,
	  .doc = "the bundle's format: \"rauc\" (RAUC's verity format, NAME.raucb)" },
	{ RECIPE_IN_UPDATE, "compatible", RECIPE_STRING, .offset = UPD(compatible),
	  .check = recipe_update_check_text,
	  .doc = "the compatible string a device's updater must match (required)" },
	{ RECIPE_IN_UPDATE, "version", RECIPE_STRING, .offset = UPD(version),
	  .check = recipe_update_check_text, .doc = "the bundle's version (required)" },
	{ RECIPE_IN_UPDATE, "slots", RECIPE_STRV, .def_doc = "every partition of type \"root\"",
	  .offset = UPD(slots),
	  .doc = "the disk's root slots by partition name, the one holding the root among them" },
	{ RECIPE_IN_UPDATE, "boot_attempts", RECIPE_UINT, "3", .offset = UPD(boot_attempts), .max = 9,
	  .check = recipe_update_check_attempts,
	  .doc = "boots a newly installed slot gets before U-Boot falls back to the other (1 to 9)" },
	{ RECIPE_IN_UPDATE, "sign", RECIPE_STRING, "build", .offset = UPD(sign),
	  .check = recipe_update_check_sign,
	  .doc = "\"build\": signed with cert and key; \"offline\": NAME.raucb.unsigned and "
		 "NAME.raucb.manifest, signed apart (mkimage(7), Updates)" },
	{ RECIPE_IN_UPDATE, "cert", RECIPE_PATH, .offset = UPD(cert), .parse = recipe_update_parse_path,
	  .shown = recipe_update_shown_cert,
	  .doc = "the signing certificate (PEM), then any intermediate ones (required)" },
	{ RECIPE_IN_UPDATE, "key", RECIPE_PATH, .offset = UPD(key), .parse = recipe_update_parse_path,
	  .shown = recipe_update_shown_key,
	  .doc = "the certificate's private key (PEM, RSA; not in the digest) (required)" },
	{ RECIPE_IN_UPDATE, "keyring", RECIPE_PATH, .offset = UPD(keyring), .parse = recipe_update_parse_path,
	  .doc = "the CA certificates (PEM) the image's updater trusts (required)" },
	{ RECIPE_IN_SDK, "architecture", RECIPE_STRING, .def_doc = "the build host's",
	  .offset = SDK(arch), .check = recipe_sdk_check_arch, .shown = recipe_sdk_shown_key,
	  .doc = "the architecture the SDK runs on, which must be the build host's" },
	{ RECIPE_IN_SDK, "packages", RECIPE_STRV, .offset = SDK(packages),
	  .parse = recipe_sdk_parse_packages, .shown = recipe_sdk_shown_key,
	  .doc = "-dev packages, \"name\" (each target architecture) or \"name:arch\"" },
	{ RECIPE_IN_SDK, "image_libraries", RECIPE_BOOL, "true", .offset = SDK(image_libraries),
	  .shown = recipe_sdk_shown_key, .doc = "the -dev packages of every library in the image too" },
	{ 0 }
};

const struct recipe_table recipe_table = { recipe_keys, sections };
