/* The cross-building SDK's recipe and request, derived from an image's recipe and lock (sdk.h). */
#include "sdk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "debian/arch.h"
#include "debian/deb.h"
#include "debian/deb822.h"
#include "debian/relation.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"
#include "lib/x.h"

/* A libconfig string: the recipe's own values (URIs, paths) quoted back. */
static void add_quoted(struct buf *out, const char *s)
{
	buf_adds(out, "\"");
	for (; *s; s++)
		buf_addf(out, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
	buf_adds(out, "\"");
}

static void add_list(struct buf *out, const struct strv *v)
{
	size_t i;

	buf_adds(out, "[");
	for (i = 0; i < v->n; i++) {
		buf_adds(out, i ? ", " : " ");
		add_quoted(out, v->v[i]);
	}
	buf_adds(out, v->n ? " ]" : "]");
}

/* The image's repositories, every architecture of each (the SDK adds the host's). */
static void add_sources(struct buf *out, const struct recipe *image)
{
	size_t i;

	buf_adds(out, "sources = (\n");
	for (i = 0; i < image->n_sources; i++) {
		const struct recipe_source *src = &image->sources[i];

		buf_adds(out, i ? ",\n  { " : "  { ");
		if (src->host) {
			buf_adds(out, "host = true; ");
		} else {
			buf_adds(out, "uri = ");
			add_quoted(out, src->uri);
			buf_adds(out, "; ");
		}
		buf_adds(out, "suite = ");
		add_quoted(out, src->suite);
		buf_adds(out, "; ");
		if (src->components.n) {
			buf_adds(out, "components = ");
			add_list(out, &src->components);
			buf_adds(out, "; ");
		}
		if (src->keyring) {
			buf_adds(out, "keyring = ");
			add_quoted(out, src->keyring);
			buf_adds(out, "; ");
		}
		buf_addf(out, "trusted = %s; }", src->trusted ? "true" : "false");
	}
	buf_adds(out, "\n);\n");
}

void sdk_recipe_text(const struct recipe *image, const char *host_arch, const char *tar,
		     struct buf *out)
{
	struct strv archs = { 0 };
	size_t i;

	recipe_all_archs(image, &archs);
	buf_adds(out, "# The cross-building SDK of ");
	buf_addf(out, "%s (mkimage --sdk), derived by mkimage.\nname = ", image->name);
	buf_addf(out, "\"%s-sdk\";\narchitecture = \"%s\";\nauxiliary_architectures = ",
		 image->name, host_arch);
	add_list(out, &archs);
	buf_adds(out, ";\nsuite = ");
	add_quoted(out, image->suite);
	buf_addf(out, ";\nmerged_usr = %s;\nhost_twins = false;\n",
		 image->merged_usr ? "true" : "false");
	add_sources(out, image);
	/* Essential: what dpkg needs to configure the tree, natively. */
	buf_adds(out, "packages = {\n  base = \"essential\";\n  install = [ \"pkgconf\"");
	for (i = 0; i < archs.n; i++)
		buf_addf(out, ", \"crossbuild-essential-%s\"", archs.v[i]);
	/*
	 * allow_older: the Multi-Arch: same packages of three architectures need one version
	 * common to all. The image's are pinned to its lock, but their host copies (zlib1g:amd64
	 * under dpkg) and the -dev packages' own dependencies (linux-libc-dev) are not: for
	 * armel, which Debian's security archive does not build, the newest common version is
	 * the point release's, not the security update the other architectures have. Each
	 * older choice is a warning, as in an image.
	 */
	buf_adds(out, " ];\n  recommends = false;\n  allow_older = true;\n};\n"
		 "image = { format = \"tar\"; output = ");
	add_quoted(out, tar);
	buf_adds(out, "; };\n");
	strv_release(&archs);
}

/* The lock beside the image is the recipe's as it is now, of the same architectures. */
static int check_lock(const struct sdk *s, const struct recipe *image)
{
	const struct lockfile *lk = &s->image_lock;
	size_t i;
	int same = lk->archs.n == s->targets.n;

	for (i = 0; same && i < lk->archs.n; i++)
		same = !strcmp(lk->archs.v[i], s->targets.v[i]);
	if (!same)
		return log_errno(-MKI_E_LOCK, "the image's lock '%s' is of other architectures than "
				 "recipe '%s': build the image again (or mkimage --lock) first",
				 s->image_lock_file, image->file);
	if (strcmp(lk->recipe, image->digest))
		return log_errno(-MKI_E_LOCK, "the image's lock '%s' was made from another version "
				 "of recipe '%s': build the image again (or mkimage --lock) first, so "
				 "that the SDK takes the image's versions", s->image_lock_file,
				 image->file);
	return 0;
}

int sdk_prepare(struct sdk *s, const struct recipe *image, const char *lock_file, const char *tar,
		const struct recipe_checks *checks)
{
	const char *host = arch_host();
	struct buf text = { 0 };
	int ret;

	memset(s, 0, sizeof(*s));
	s->image_lock_file = xstrdup(lock_file);
	recipe_all_archs(image, &s->targets);
	if (image->sdk.arch && strcmp(image->sdk.arch, host))
		return log_errno(-MKI_E_NOTYET, "recipe '%s' asks for an SDK running on '%s', but "
				 "this host is '%s': an SDK's own packages are configured natively, "
				 "so build it on a '%s' host (another host architecture is not yet "
				 "supported)", image->file, image->sdk.arch, host, image->sdk.arch);
	if (strv_contains(&s->targets, host))
		return log_errno(-MKI_E_NOTYET, "an SDK for the build host's own architecture "
				 "'%s' is not yet supported (recipe '%s' names it): build it on a "
				 "host of another architecture, or use build-essential", host,
				 image->file);
	ret = lockfile_read(&s->image_lock, lock_file);
	if (ret == -ENOENT)
		return log_errno(-MKI_E_LOCK, "the image's lock '%s' does not exist: the SDK takes "
				 "its versions; build the image (or mkimage --lock) first, or name "
				 "the lock with --sdk=FILE", lock_file);
	if (ret)
		return ret == -MKI_E_LOCK ? ret : log_errno(-MKI_E_LOCK, "cannot read the image's "
							    "lock '%s': %m", lock_file);
	ret = check_lock(s, image);
	if (ret)
		return ret;
	s->image_libraries = image->sdk.image_libraries;
	for (size_t i = 0; i < image->sdk.packages.n; i++)
		strv_push(&s->image_dev, image->sdk.packages.v[i]);
	sdk_recipe_text(image, host, tar, &text);
	ret = recipe_parse_text(&s->recipe, text.p, "(the SDK's recipe)", image->dir, checks);
	buf_release(&text);
	if (ret)
		return log_errno(-MKI_E_INTERNAL, "the SDK's recipe derived from '%s' is not valid "
				 "(a bug in mkimage)", image->file);
	s->loaded = 1;
	return 0;
}

/* ---- the request --------------------------------------------------------------------------- */

/* One package of the indexes that the request may need. */
struct cand {
	char *name, *arch, *version, *source, *source_version, *section, *multi_arch;
	struct strv depends; /* the names of its Depends and Pre-Depends */
};

struct cands {
	struct cand *v;
	size_t n, alloc;
};

static void depends_names(const char *value, struct strv *out)
{
	struct relation_iter it;
	struct relation rel;

	if (!value)
		return;
	relation_iter_init(&it, value, strlen(value));
	while (relation_next(&it, &rel) == 1) {
		char *n = xstrndup(rel.name, rel.name_len);

		strv_push_take(out, n);
	}
}

/* "src (1.2-3)" or "src", else the package's own name and version. */
static void source_of(const char *field, const char *name, const char *version, struct cand *c)
{
	const char *sp = field ? strchr(field, ' ') : NULL, *open, *close;

	c->source = field ? xstrndup(field, sp ? (size_t)(sp - field) : strlen(field))
			  : xstrdup(name);
	open = sp ? strchr(sp, '(') : NULL;
	close = open ? strchr(open, ')') : NULL;
	c->source_version = close ? xstrndup(open + 1, (size_t)(close - open - 1))
				  : xstrdup(version);
}

static int lock_has(const struct lockfile *lk, const char *name, const char *arch)
{
	size_t i;

	for (i = 0; i < lk->n_pkgs; i++)
		if (!strcmp(lk->pkgs[i].name, name) && !strcmp(lk->pkgs[i].arch, arch))
			return 1;
	return 0;
}

/* Does the request need this stanza: a -dev, a package of the image's lock, a toolchain? */
static int wanted(const struct sdk *s, const char *name, const char *arch)
{
	return str_ends_with(name, "-dev") || str_starts_with(name, "crossbuild-essential-") ||
	       lock_has(&s->image_lock, name, arch);
}

static int read_index(const struct sdk *s, const struct index_file *f, struct cands *out)
{
	struct deb822 d;
	int ret = deb822_open(&d, f->path);

	if (ret)
		return log_errno(ret, "cannot read the index '%s': %m", f->path);
	deb822_set_name(&d, f->url);
	while ((ret = deb822_next(&d)) == 1) {
		const char *name = deb822_get(&d, "Package"), *ver = deb822_get(&d, "Version");
		const char *arch = deb822_get(&d, "Architecture");
		struct cand *c;

		if (!name || !ver || !arch || !wanted(s, name, arch))
			continue;
		ALLOC_GROW(out->v, out->n + 1, out->alloc);
		c = &out->v[out->n++];
		memset(c, 0, sizeof(*c));
		c->name = xstrdup(name);
		c->arch = xstrdup(arch);
		c->version = xstrdup(ver);
		c->section = xstrdup(deb822_get(&d, "Section") ? deb822_get(&d, "Section") : "");
		c->multi_arch = xstrdup(deb822_get(&d, "Multi-Arch") ? deb822_get(&d, "Multi-Arch")
								     : "no");
		source_of(deb822_get(&d, "Source"), name, ver, c);
		depends_names(deb822_get(&d, "Depends"), &c->depends);
		depends_names(deb822_get(&d, "Pre-Depends"), &c->depends);
	}
	deb822_close(&d);
	return ret < 0 ? ret : 0;
}

static void cands_release(struct cands *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		struct cand *c = &cs->v[i];

		free(c->name);
		free(c->arch);
		free(c->version);
		free(c->source);
		free(c->source_version);
		free(c->section);
		free(c->multi_arch);
		strv_release(&c->depends);
	}
	free(cs->v);
}

static const struct cand *find(const struct cands *cs, const char *name, const char *arch,
			       const char *version)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (!strcmp(cs->v[i].name, name) && !strcmp(cs->v[i].arch, arch) &&
		    (!version || !strcmp(cs->v[i].version, version)))
			return &cs->v[i];
	return NULL;
}

/*
 * A library as the SDK pins it: Section libs (or AREA/libs) and Multi-Arch: same, the package
 * that goes beside its other architectures' builds in a triplet path. A tool of the same source
 * (ncurses-bin, perl) is the host's in the SDK, never the target's.
 */
static int is_library(const struct cand *c)
{
	return (!strcmp(c->section, "libs") || str_ends_with(c->section, "/libs")) &&
	       !strcmp(c->multi_arch, "same");
}

/*
 * A library whose -dev packages the SDK takes by default: not a source's common data package
 * (gcc-12-base, which every -dev of gcc-12 depends on, libgccjit-12-dev and its binutils too).
 */
static int has_own_devs(const struct cand *c)
{
	return is_library(c) && !str_ends_with(c->name, "-base");
}

/* What the request grows into: "name:arch" once each. */
struct request {
	struct sdk *s;
	const struct cands *cs;
	struct strv added;
	int errors;
};

static void add_pkg(struct request *q, const char *name, const char *arch, const char *version)
{
	char *key = xasprintf("%s:%s", name, arch);

	if (!strv_contains(&q->added, key)) {
		recipe_add_package(&q->s->recipe, name, strcmp(arch, "all") ? arch : NULL, version);
		log_debug("sdk: %s=%s", key, version ? version : "(newest)");
		strv_push(&q->added, key);
	}
	free(key);
}

/* The lock's package of source `src` on `arch`, at the version the image has, or NULL. */
static const struct lock_pkg *image_of_source(const struct sdk *s, const struct cands *cs,
					      const char *src, const char *arch)
{
	size_t i;

	for (i = 0; i < s->image_lock.n_pkgs; i++) {
		const struct lock_pkg *p = &s->image_lock.pkgs[i];
		const struct cand *c = strcmp(p->arch, arch) ? NULL
							     : find(cs, p->name, p->arch, p->version);

		if (c && !strcmp(c->source, src))
			return p;
	}
	return NULL;
}

/*
 * -dev package `name` on `arch`, at the version of the image's package of its source, and the
 * image's packages of that source pinned with it (the library it goes with). `lib` is NULL for
 * sdk.packages; the library the -dev was found for otherwise.
 */
static void add_dev(struct request *q, const char *name, const char *arch)
{
	const struct cands *cs = q->cs;
	const struct cand *any = NULL, *same = NULL;
	const struct lock_pkg *img = NULL;
	size_t i;

	for (i = 0; i < cs->n && !same; i++) {
		const struct cand *c = &cs->v[i];

		if (strcmp(c->name, name) || (strcmp(c->arch, arch) && strcmp(c->arch, "all")))
			continue;
		any = c;
		img = image_of_source(q->s, cs, c->source, arch);
		if (!img || !strcmp(c->source_version, find(cs, img->name, arch, img->version)
							       ->source_version))
			same = c;
	}
	if (!any) {
		log_error("-dev package '%s' has no build for architecture '%s' in the SDK's "
			  "repositories: drop it from sdk.packages or name it for the "
			  "architectures it has (\"%s:ARCH\")", name, arch, name);
		q->errors++;
		return;
	}
	if (!same) {
		log_error("'%s:%s' %s cannot go with the image's '%s:%s' %s (the same source, "
			  "another version: an update in one suite and not the other?); build the "
			  "image again from the same repositories, or leave '%s' out", name, arch,
			  any->version, img->name, img->arch, img->version, name);
		q->errors++;
		return;
	}
	add_pkg(q, same->name, same->arch, same->version);
	for (i = 0; img && i < q->s->image_lock.n_pkgs; i++) {
		const struct lock_pkg *p = &q->s->image_lock.pkgs[i];
		const struct cand *c = strcmp(p->arch, arch) ? NULL : find(cs, p->name, arch,
									  p->version);

		if (c && is_library(c) && !strcmp(c->source, same->source) &&
		    strv_contains(&same->depends, p->name))
			add_pkg(q, p->name, p->arch, p->version);
	}
}

/*
 * A library of the image: its -dev packages of Multi-Arch: same (same source and version,
 * depending on it).
 */
static void add_library_devs(struct request *q, const struct lock_pkg *p)
{
	const struct cand *lib = find(q->cs, p->name, p->arch, p->version);
	size_t i;

	if (!lib || !has_own_devs(lib))
		return;
	for (i = 0; i < q->cs->n; i++) {
		const struct cand *c = &q->cs->v[i];

		/* Only what co-installs for every target: a -dev of Multi-Arch: same. */
		if (str_ends_with(c->name, "-dev") && !strcmp(c->arch, p->arch) &&
		    !strcmp(c->multi_arch, "same") &&
		    !strcmp(c->source, lib->source) && strv_contains(&c->depends, p->name))
			add_dev(q, c->name, p->arch);
	}
}

/* Every package of a target architecture in the image's lock is in the SDK's indexes. */
static int check_image_versions(const struct sdk *s, const struct cands *cs)
{
	size_t i;
	int missing = 0;

	for (i = 0; i < s->image_lock.n_pkgs; i++) {
		const struct lock_pkg *p = &s->image_lock.pkgs[i];

		if (p->local || !strv_contains(&s->targets, p->arch) ||
		    find(cs, p->name, p->arch, p->version))
			continue;
		if (!missing++)
			log_error("the SDK's repositories do not hold the image's '%s:%s' %s (%s): "
				  "build the SDK from the repositories the image was built from, or "
				  "build the image again", p->name, p->arch, p->version,
				  find(cs, p->name, p->arch, NULL) ? "another version" : "none");
	}
	if (missing > 1)
		log_error("%d packages of the image's lock '%s' in all are not in the SDK's "
			  "repositories at their version (mkimage -v lists the request)", missing,
			  s->image_lock_file);
	return missing ? -MKI_E_LOCK : 0;
}

/* crossbuild-essential-ARCH of the host's architecture, for every target. */
static int check_toolchains(const struct sdk *s, const struct cands *cs)
{
	struct strv none = { 0 };
	size_t i;
	int ret = 0;

	for (i = 0; i < s->targets.n; i++) {
		char *name = xasprintf("crossbuild-essential-%s", s->targets.v[i]);

		if (!find(cs, name, s->recipe.arch, NULL) && !find(cs, name, "all", NULL))
			strv_push(&none, s->targets.v[i]);
		free(name);
	}
	if (none.n) {
		char *list = strv_join(&none, ", ");

		ret = log_errno(-MKI_E_RESOLVE, "the archive has no cross toolchain for '%s' on "
				"'%s' (no crossbuild-essential-ARCH in the SDK's repositories): an "
				"SDK cannot be made for %s", list, s->recipe.arch,
				none.n > 1 ? "these architectures" : "this architecture");
		free(list);
	}
	strv_release(&none);
	return ret;
}

static void add_sdk_packages(struct request *q)
{
	size_t i, j;

	for (i = 0; i < q->s->image_dev.n; i++) {
		const char *spec = q->s->image_dev.v[i], *colon = strchr(spec, ':');
		char *name = xstrndup(spec, colon ? (size_t)(colon - spec) : strlen(spec));

		for (j = 0; j < q->s->targets.n; j++)
			if (!colon || !strcmp(colon + 1, q->s->targets.v[j]))
				add_dev(q, name, q->s->targets.v[j]);
		free(name);
	}
}

int sdk_request(struct sdk *s, const struct indexes *ix)
{
	struct cands cs = { 0 };
	struct request q = { s, &cs, { 0 }, 0 };
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < ix->n_files; i++)
		if (!ix->files[i].native_tools)
			ret = read_index(s, &ix->files[i], &cs);
	if (!ret)
		ret = check_toolchains(s, &cs);
	if (!ret)
		ret = check_image_versions(s, &cs);
	for (i = 0; !ret && s->image_libraries && i < s->image_lock.n_pkgs; i++)
		if (strv_contains(&s->targets, s->image_lock.pkgs[i].arch))
			add_library_devs(&q, &s->image_lock.pkgs[i]);
	if (!ret)
		add_sdk_packages(&q);
	if (!ret && q.errors)
		ret = -MKI_E_RESOLVE;
	if (!ret)
		log_info("sdk: %zu -dev packages and libraries pinned to the image's versions, "
			 "cross toolchains for %zu architectures", q.added.n, s->targets.n);
	strv_release(&q.added);
	cands_release(&cs);
	return ret;
}

/*
 * The SDK co-installs every -dev package for all the image's architectures with what they
 * depend on, so a Multi-Arch: same library the image holds for one architecture only, at a
 * version another architecture lacks, has no solution: say why and what to change.
 */
void sdk_explain_unresolved(void)
{
	log_error("the SDK installs each -dev package for every architecture of the image, pinned "
		  "to the image's versions, with what those depend on: a Multi-Arch: same library "
		  "the image holds for some of its architectures only (a version skew above) must "
		  "have the image's version for the others too, and Debian's security archive does "
		  "not build armel");
	log_error("ways out: add that library for every architecture to the image's packages "
		  "(allow_older = true lets the image take a version every architecture has), build "
		  "the image and then the SDK again; or set sdk.image_libraries = false and name the "
		  "-dev packages you need in sdk.packages");
}

void sdk_release(struct sdk *s)
{
	if (s->loaded)
		recipe_release(&s->recipe);
	lockfile_release(&s->image_lock);
	strv_release(&s->targets);
	strv_release(&s->image_dev);
	free(s->image_lock_file);
	memset(s, 0, sizeof(*s));
}
