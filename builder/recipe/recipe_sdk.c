/*
 * The recipe's sdk group: what mkimage --sdk adds to the cross toolchains (pipeline/sdk.h). The
 * rows are in recipe_keys.c's table; the group is not part of the image, so it is shown only
 * when set and never enters the digest: adding it leaves the image's lock valid.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "debian/arch.h"
#include "recipe_parse.h"

int recipe_sdk_shown(const struct recipe_key *k, const void *base, int digest)
{
	const struct recipe_sdk *x = &((const struct recipe *)base)->sdk;

	return !digest && (x->arch || x->packages.n || !x->image_libraries);
}

int recipe_sdk_shown_key(const struct recipe_key *k, const void *base, int digest)
{
	return recipe_sdk_shown(k, (const char *)base - offsetof(struct recipe, sdk), digest);
}

/* A Debian architecture mkimage knows: whether it can build there is the SDK's to say. */
int recipe_sdk_check_arch(struct recipe_ctx *c, const config_setting_t *g,
			  const struct recipe_key *k, void *base)
{
	const char *a = ((const struct recipe_sdk *)base)->arch;

	if (!a || arch_find(a))
		return 0;
	return recipe_fail(c, recipe_member(g, k->name), "sdk 'architecture' '%s' is not a Debian "
			   "architecture mkimage knows, such as \"amd64\" or \"arm64\"", a);
}

static int is_arch_of(const struct recipe *r, const char *a)
{
	return !strcmp(r->arch, a) || strv_contains(&r->aux_archs, a);
}

/* "name" or "name:arch": no version, the SDK takes the image's (mkimage(7)). */
int recipe_sdk_parse_packages(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);
	struct strv *v = recipe_field(base, k->offset);
	struct recipe_package p = { 0 };
	const char *why = NULL;
	size_t i;
	int ret = recipe_get_strv(c, g, k->name, v);

	for (i = 0; !ret && i < v->n; i++) {
		if (recipe_parse_package(v->v[i], &p, &why))
			ret = recipe_fail(c, s, "sdk package '%s': %s", v->v[i], why);
		else if (p.version)
			ret = recipe_fail(c, s, "sdk package '%s' names a version: an SDK's -dev "
					  "packages take the image's (write \"%s%s%s\")", v->v[i],
					  p.name, p.arch ? ":" : "", p.arch ? p.arch : "");
		else if (p.arch && !is_arch_of(c->r, p.arch))
			ret = recipe_fail(c, s, "sdk package '%s' asks for architecture '%s', which is "
					  "not in 'architecture' or 'auxiliary_architectures'",
					  v->v[i], p.arch);
		free(p.name);
		free(p.arch);
		free(p.version);
		p = (struct recipe_package){ 0 };
	}
	return ret;
}
