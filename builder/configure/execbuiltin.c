/*
 * mkimage-exec's own answers (execbuiltin.h), each checked against coreutils in test 146. What
 * coreutils does, reduced to the cases taken here:
 *   realpath -ms PATH  (missing components allowed, no symlink expanded): PATH made canonical by
 *                      text alone: "." and empty components dropped, ".." drops the one before.
 *   realpath -s PATH   (symlinks not expanded, all but the last component must exist): taken only
 *                      when PATH has no "." or ".." component, no trailing slash, every
 *                      component but the last is a directory and the last exists or is missing
 *                      (not a link loop): then the answer is PATH with its slashes collapsed, as
 *                      there is nothing left to check or expand.
 *   readlink -f PATH   (every symlink expanded, all but the last component must exist): taken
 *                      only when the whole of PATH exists, as realpath(3) then answers the same.
 * PATH must be absolute (no working directory involved). The answer is one write(2) of less than
 * PIPE_BUF bytes: it fails whole, and then the program runs and reports the error itself.
 */
#include "execbuiltin.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ANSWER_MAX 4000 /* < PIPE_BUF: one write is all or nothing */

/*
 * `in` (absolute) by text alone into `out`: 0, or -1 when it is too long or, without `dots`, has
 * a "." or ".." component or a trailing slash.
 */
static int canonical_text(const char *in, char *out, int dots)
{
	size_t len = 0;

	while (*in) {
		size_t n;

		while (*in == '/')
			in++;
		n = strcspn(in, "/");
		if (!dots && ((n == 1 && in[0] == '.') || (n == 2 && in[0] == '.' && in[1] == '.') ||
			      (!n && len)))
			return -1;
		if (n == 2 && in[0] == '.' && in[1] == '.') {
			while (len && out[--len] != '/')
				;
		} else if (n && !(n == 1 && in[0] == '.')) {
			if (len + 1 + n >= ANSWER_MAX)
				return -1;
			out[len++] = '/';
			memcpy(out + len, in, n);
			len += n;
		}
		in += n;
	}
	if (!len)
		out[len++] = '/';
	out[len] = 0;
	return 0;
}

/*
 * Every component of `path` (canonical text) but the last is a directory, and the last is
 * something or nothing (coreutils fails on a link loop there, say).
 */
static int parents_are_dirs(const char *path)
{
	char prefix[ANSWER_MAX];
	const char *slash = path;
	struct stat sb;

	while ((slash = strchr(slash + 1, '/'))) {
		memcpy(prefix, path, (size_t)(slash - path));
		prefix[slash - path] = 0;
		if (stat(prefix, &sb) < 0 || !S_ISDIR(sb.st_mode))
			return 0;
	}
	return stat(path, &sb) == 0 || errno == ENOENT;
}

static int answer(char *text)
{
	size_t n = strlen(text);
	ssize_t w;

	text[n++] = '\n';
	w = write(STDOUT_FILENO, text, n);
	if (w == (ssize_t)n)
		return 0;
	/* nothing written: the program itself meets the same error and reports it its way */
	return w <= 0 ? -1 : 1;
}

static int realpath_builtin(int n, char **args)
{
	char out[ANSWER_MAX + 1];
	int missing_ok;

	if (n != 2 || args[1][0] != '/')
		return -1;
	missing_ok = !strcmp(args[0], "-ms") || !strcmp(args[0], "-sm");
	if (!missing_ok && strcmp(args[0], "-s"))
		return -1;
	if (canonical_text(args[1], out, missing_ok) < 0)
		return -1;
	if (!missing_ok && !parents_are_dirs(out))
		return -1;
	return answer(out);
}

static int readlink_builtin(int n, char **args)
{
	char out[PATH_MAX + 2];

	if (n != 2 || strcmp(args[0], "-f") || args[1][0] != '/' ||
	    strlen(args[1]) >= ANSWER_MAX || !realpath(args[1], out) || strlen(out) >= ANSWER_MAX)
		return -1;
	return answer(out);
}

int execbuiltin_run(enum execbuiltin b, int n, char **args)
{
	switch (b) {
	case EXECBUILTIN_REALPATH:
		return realpath_builtin(n, args);
	case EXECBUILTIN_READLINK:
		return readlink_builtin(n, args);
	default:
		return -1;
	}
}
