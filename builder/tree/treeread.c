/* Reading a staging tree as the sandbox sees it (treeread.h). */
#include "treeread.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandbox/idshift.h"
#include "sandbox/sandbox.h"

#define XATTR_LIST_MAX_BYTES 65536

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int treeread_names(int dirfd, struct strv *names)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t first = names->n;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			strv_push(names, de->d_name);
	closedir(d);
	if (names->n > first) /* what the caller had stays where it was */
		qsort(names->v + first, names->n - first, sizeof(*names->v), cmp_name);
	return 0;
}

int treeread_walk(int dirfd, const char *rel, treeread_visit_fn *visit, void *arg, char **failed)
{
	struct strv names = { 0 };
	size_t i;
	int ret = treeread_names(dirfd, &names);

	if (ret && failed && !*failed)
		*failed = xstrdup(rel);
	for (i = 0; !ret && i < names.n; i++) {
		char *child = *rel ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
		struct stat sb;
		int sub;

		ret = fstatat(dirfd, names.v[i], &sb, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
		if (!ret)
			ret = visit(arg, dirfd, names.v[i], child, &sb);
		if (!ret && S_ISDIR(sb.st_mode)) {
			sub = openat(dirfd, names.v[i],
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			ret = sub < 0 ? -errno : treeread_walk(sub, child, visit, arg, failed);
			if (sub >= 0)
				close(sub);
		}
		if (ret && failed && !*failed) {
			*failed = child;
			child = NULL;
		}
		free(child);
	}
	strv_release(&names);
	return ret;
}

/*
 * /proc/self/fd/DIRFD/NAME reaches the entry through the walk's own directory fd and one name
 * not followed (l*xattr): a tree path re-resolved from the host could cross a link.
 */
int treeread_xattrs(int dirfd, const char *name, struct manifest_entry *e)
{
	char *path = xasprintf("/proc/self/fd/%d/%s", dirfd, name);
	char *names = xmalloc(XATTR_LIST_MAX_BYTES), *val = xmalloc(XATTR_LIST_MAX_BYTES), *n;
	ssize_t len = llistxattr(path, names, XATTR_LIST_MAX_BYTES), vlen;
	int ret = len < 0 && errno != ENOTSUP ? -errno : 0;

	for (n = names; len > 0 && n < names + len && !ret; n += strlen(n) + 1) {
		vlen = lgetxattr(path, n, val, XATTR_LIST_MAX_BYTES);
		if (vlen < 0 && errno != ENODATA)
			ret = -errno;
		else if (vlen >= 0 && !strcmp(n, "security.capability"))
			manifest_set_xattr(e, n, val, idshift_caps_to_inside(sandbox_get(),
						(unsigned char *)val, (size_t)vlen));
		else if (vlen >= 0)
			manifest_set_xattr(e, n, val, (size_t)vlen);
	}
	free(path);
	free(names);
	free(val);
	return ret;
}
