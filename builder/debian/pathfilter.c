#include "pathfilter.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define LOCALE_NAME_MAX 32
#define LOCALE_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@.+-"

/* What Debian's slim images leave out (debuerreotype, mmdebstrap's examples, localepurge). */
static const struct {
	const char *glob;
	int include;
} minimize_rules[] = {
	{ "/usr/share/doc/*", 0 },
	{ "/usr/share/doc/*/copyright", 1 }, /* licences must ship with the binaries */
	{ "/usr/share/man/*", 0 },
	{ "/usr/share/info/*", 0 },
	{ "/usr/share/lintian/overrides/*", 0 },
	{ "/usr/share/locale/*", 0 },
	{ "/usr/share/locale/locale.alias", 1 }, /* glibc reads it, whatever the language */
};

/* Index past the class opened at glob[i] == '[', or 0 when it is never closed. */
static size_t class_end(const char *glob, size_t i)
{
	i++;
	if (glob[i] == '!' || glob[i] == '^')
		i++;
	if (glob[i] == ']') /* first: a literal ']' */
		i++;
	for (; glob[i]; i++) {
		if (glob[i] == '\\' && glob[i + 1])
			i++;
		else if (glob[i] == ']')
			return i + 1;
	}
	return 0;
}

int pathfilter_check_glob(const char *glob, const char **why)
{
	size_t i, len = strlen(glob);

	*why = NULL;
	if (!len)
		*why = "is empty";
	else if (len >= PATH_MAX)
		*why = "is longer than PATH_MAX";
	else if (!strchr("/*?[\\", glob[0]))
		*why = "must start with '/' (paths are matched as '/usr/share/doc/...')";
	else if (len > 1 && glob[len - 1] == '/')
		*why = "ends with '/', which no path does: write 'DIR/*' for what is in DIR";
	for (i = 0; !*why && i < len; i++) {
		if ((unsigned char)glob[i] < 0x20 || glob[i] == 0x7f)
			*why = "holds a control character";
		else if (glob[i] == '\\' && !glob[i + 1])
			*why = "ends with a lone backslash";
		else if (glob[i] == '\\')
			i++; /* the next character is literal */
		else if (glob[i] == '[' && !class_end(glob, i))
			*why = "has an unterminated '[' class (write '\\\\[' for a literal '[')";
	}
	return *why ? -EINVAL : 0;
}

int pathfilter_check_locale(const char *name, const char **why)
{
	size_t len = strlen(name);

	*why = NULL;
	if (!len || len > LOCALE_NAME_MAX)
		*why = "must be 1 to 32 characters";
	else if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
		*why = "must start with a letter";
	else if (strspn(name, LOCALE_CHARS) != len)
		*why = "may hold only letters, digits and '_', '@', '.', '+', '-' (as in 'pt_BR' or "
		       "'sr@latin')";
	return *why ? -EINVAL : 0;
}

void pathfilter_add(struct pathfilter *f, const char *glob, int include)
{
	ALLOC_GROW(f->v, f->n + 1, f->alloc);
	f->v[f->n].glob = xstrdup(glob);
	f->v[f->n].include = include;
	f->n++;
}

/* A kept language: its own directory and its variants (en_GB, sr@latin), never a longer code. */
static void keep_locale(struct pathfilter *f, const char *name)
{
	char *glob = xasprintf("/usr/share/locale/%s/*", name);

	pathfilter_add(f, glob, 1);
	free(glob);
	glob = xasprintf("/usr/share/locale/%s[_@.]*", name);
	pathfilter_add(f, glob, 1);
	free(glob);
}

void pathfilter_build(struct pathfilter *f, int minimize, const struct strv *locales,
		      const struct strv *exclude, const struct strv *include)
{
	size_t i;

	for (i = 0; minimize && i < sizeof(minimize_rules) / sizeof(minimize_rules[0]); i++)
		pathfilter_add(f, minimize_rules[i].glob, minimize_rules[i].include);
	for (i = 0; minimize && i < locales->n; i++)
		keep_locale(f, locales->v[i]);
	for (i = 0; i < exclude->n; i++)
		pathfilter_add(f, exclude->v[i], 0);
	for (i = 0; i < include->n; i++)
		pathfilter_add(f, include->v[i], 1);
}

void pathfilter_release(struct pathfilter *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->v[i].glob);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/*
 * dpkg cannot know what the archive holds further on, so it keeps an excluded directory (or
 * symlink) whose path starts with the literal head of an include glob, trailing '/' dropped.
 */
static int include_may_need(const char *glob, const char *path)
{
	size_t n = strcspn(glob, "*?[\\");

	while (n && glob[n - 1] == '/')
		n--;
	return !strncmp(path, glob, n);
}

int pathfilter_skips(const struct pathfilter *f, const char *path, int dir_or_link)
{
	int skip = 0;
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!fnmatch(f->v[i].glob, path, 0))
			skip = !f->v[i].include;
	if (!skip || !dir_or_link)
		return skip;
	for (i = 0; i < f->n; i++)
		if (f->v[i].include && include_may_need(f->v[i].glob, path))
			return 0;
	return 1;
}

size_t pathfilter_left_out_parent(const struct pathfilter *f, const char *path)
{
	char *dir = xstrdup(path), *slash;
	size_t n = 0;

	for (slash = strchr(dir + 1, '/'); slash && !n; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		if (pathfilter_skips(f, dir, 1))
			n = (size_t)(slash - dir);
		*slash = '/';
	}
	free(dir);
	return n;
}

void pathfilter_count_add(struct pathfilter_count *c, int is_dir, uint64_t size)
{
	if (is_dir) {
		c->dirs++;
		return;
	}
	c->files++;
	c->bytes += size;
}

void pathfilter_format_dpkg_cfg(const struct pathfilter *f, struct buf *out)
{
	size_t i;

	buf_adds(out, "# Written by mkimage from the recipe's path filters: dpkg keeps applying\n"
		      "# them to every package installed in this image.\n");
	for (i = 0; i < f->n; i++)
		buf_addf(out, "path-%s=%s\n", f->v[i].include ? "include" : "exclude", f->v[i].glob);
}
