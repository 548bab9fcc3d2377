/*
 * Print the recipe's key table (recipe_keys[], recipe_internal.h), one key a line:
 *   KEY <TAB> TYPE <TAB> DEFAULT <TAB> tree|- <TAB> DOC
 * KEY is its path ("name", "sources.uri", "image.devices.mode"); "-" for no default; "tree"
 * when it changes the configured tree. tests/integration/05-man.sh checks mkimage.cfg(5)
 * against it.
 */
#include <stdio.h>

#include "recipe/recipe_internal.h"

static const char *type_name(const struct recipe_key *k)
{
	switch (k->type) {
	case RECIPE_STRING: return "string";
	case RECIPE_BOOL: return "bool";
	case RECIPE_UINT: return "integer";
	case RECIPE_STRV: return "list of strings";
	case RECIPE_ENUM: return "string, one of a set";
	case RECIPE_MODE: return "octal string";
	case RECIPE_SIZE: return "size";
	case RECIPE_PATH: return "path";
	case RECIPE_PATHS: return "list of paths";
	case RECIPE_PKGSPECS: return "list of package specs";
	case RECIPE_OWNER: return "\"UID:GID\"";
	case RECIPE_DEVTYPE: return "device type";
	case RECIPE_GROUP: return "group";
	case RECIPE_LIST: return "list of groups";
	}
	return "?";
}

int main(void)
{
	const struct recipe_key *k;

	for (k = recipe_keys; k->name; k++) {
		const char *sec = recipe_section_name(k->section);

		printf("%s%s%s\t%s\t%s\t%s\t%s\n", sec, *sec ? "." : "", k->name, type_name(k),
		       k->def ? k->def : k->def_doc ? k->def_doc : "-", k->tree ? "tree" : "-",
		       k->doc);
	}
	return 0;
}
