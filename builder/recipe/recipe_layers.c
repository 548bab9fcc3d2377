/*
 * The layers group's rows (recipe_keys[]): where configured trees are shared between machines -
 * a registry and the keys layers are signed and checked with - never what the image is, so
 * none of it is in the recipe's digest.
 */
#include "recipe_parse.h"

#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

#include "lib/str.h"

int recipe_layers_shown(const struct recipe_key *k, const void *base, int digest)
{
	const struct recipe_layers *l = &((const struct recipe *)base)->layers;

	return !digest && (l->registry || l->sign_key || l->trusted_keys.n);
}

int recipe_layers_shown_key(const struct recipe_key *k, const void *base, int digest)
{
	return !digest && recipe_shown_if_set(k, base, digest);
}

/* http(s)://HOST[:PORT]/REPO: the registry module says more when it is contacted. */
int recipe_layers_check_registry(struct recipe_ctx *c, const config_setting_t *g,
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

int recipe_layers_parse_key(struct recipe_ctx *c, const config_setting_t *g,
			   const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return recipe_fail(c, s, "'%s' must be a string: the private key's file", k->name);
	return recipe_get_path(c, s, "layer signing key", recipe_field(base, k->offset));
}

int recipe_layers_parse_trusted(struct recipe_ctx *c, const config_setting_t *g,
			      const struct recipe_key *k, void *base)
{
	const config_setting_t *s = recipe_member(g, k->name);
	struct strv *v = recipe_field(base, k->offset);
	char *path;
	int i, ret = 0;

	if (s && config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return recipe_fail(c, s, "'%s' must be a list of public key files", k->name);
	for (i = 0; !ret && s && i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return recipe_fail(c, e, "'%s' must hold only strings", k->name);
		path = NULL;
		ret = recipe_get_path(c, e, "trusted layer key", &path);
		if (ret)
			free(path);
		else
			strv_push_take(v, path);
	}
	return ret;
}
