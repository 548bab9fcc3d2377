#include "pkgpath.h"

#include <errno.h>
#include <string.h>

#include "lib/manifest.h"

#define ADMINDIR "var/lib/dpkg"

int pkgpath_check_name(const char *raw, const char **why)
{
	if (strchr(raw, '\n')) {
		*why = "contains a newline, which dpkg refuses (it would split the package's file "
		       "list)";
		return -EINVAL;
	}
	return 0;
}

int pkgpath_check_admin(const char *path, char type, const char **why)
{
	static const char *const dirs[] = { "alternatives", "info", "parts", "triggers", "updates",
					    NULL };
	const char *rest;
	size_t i;

	if (strncmp(path, ADMINDIR, strlen(ADMINDIR)))
		return 0;
	rest = path + strlen(ADMINDIR);
	if (*rest && *rest != '/')
		return 0; /* var/lib/dpkgfoo */
	*why = "is inside dpkg's database directory /" ADMINDIR ", which packages must not ship";
	if (type != MF_DIR)
		return -EPERM;
	if (!*rest)
		return 0;
	for (i = 0; dirs[i]; i++)
		if (!strcmp(rest + 1, dirs[i]))
			return 0;
	return -EPERM;
}
