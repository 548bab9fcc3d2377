#include "keyfpr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/proc.h"

#define GPG_TIMEOUT 30

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --with-colons: a "pub" record is followed by its "fpr" record; subkeys' fprs follow "sub". */
static void parse_colons(const char *text, struct strv *out)
{
	const char *line = text;
	int primary = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		if (n >= 4 && !strncmp(line, "pub:", 4))
			primary = 1;
		else if (n >= 4 && !strncmp(line, "sub:", 4))
			primary = 0;
		else if (primary && n > 12 && !strncmp(line, "fpr:::::::::", 12)) {
			strv_push_take(out, xstrndup(line + 12, strcspn(line + 12, ":\n")));
			primary = 0;
		}
		line = nl ? nl + 1 : NULL;
	}
}

static int list_quiet(const char *file, struct strv *out, int *code)
{
	const char *tmp = getenv("TMPDIR");
	char *home = xasprintf("%s/mkimage-gpg.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	const char *argv[] = { "gpg", "--homedir", home, "--batch", "--no-auto-check-trustdb",
			       "--with-colons", "--show-keys", file, NULL };
	static const char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL };
	struct buf so = { 0 }, se = { 0 };
	struct proc_opts o = { .env = env, .out = &so, .err = &se, .stdin_fd = -1,
			       .timeout = GPG_TIMEOUT };
	size_t first = out->n;
	int ret;

	if (!mkdtemp(home)) {
		ret = -errno;
		free(home);
		return ret;
	}
	ret = proc_run(argv, &o, code);
	fsutil_remove_tree(home);
	if (!ret && !*code && so.p)
		parse_colons(so.p, out);
	if (out->n > first)
		qsort(out->v + first, out->n - first, sizeof(*out->v), cmp_str);
	buf_release(&so);
	buf_release(&se);
	free(home);
	return ret;
}

int keyfpr_list(const char *file, struct strv *out)
{
	size_t first = out->n;
	int code = 0, ret = list_quiet(file, out, &code);

	if (ret) {
		log_error("cannot run gpg to read the keyring '%s': %s (install the 'gpg' package)",
			  file, strerror(-ret));
		return -MKI_E_SOURCE;
	}
	if (out->n == first) {
		log_error("the keyring '%s' holds no OpenPGP key (gpg exit %d)", file, code);
		return -MKI_E_SOURCE;
	}
	return 0;
}

static int holds_all(const struct strv *have, const struct strv *want)
{
	size_t i;

	for (i = 0; i < want->n; i++)
		if (!strv_contains(have, want->v[i]))
			return 0;
	return 1;
}

int keyfpr_find(const struct strv *want, const struct strv *candidates)
{
	size_t i;

	for (i = 0; i < candidates->n; i++) {
		struct strv have = { 0 };
		int code = 0, ok;

		list_quiet(candidates->v[i], &have, &code);
		ok = have.n && holds_all(&have, want);
		strv_release(&have);
		if (ok)
			return (int)i;
	}
	return -1;
}
