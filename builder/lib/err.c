#include "err.h"

#include <string.h>

#include "buf.h"

/* What each of our codes means and which exit status it ends the process with. */
static const struct {
	const char *text;
	enum mki_exit exit;
} codes[MKI_E_MAX - MKI_E_BASE] = {
#define CODE(c, t, x) [MKI_E_##c - MKI_E_BASE] = { t, MKI_EXIT_##x }
	CODE(USAGE, "usage error", USAGE),
	CODE(RECIPE, "invalid recipe", USAGE),
	CODE(NOTYET, "not yet supported", FAILED),
	CODE(SOURCE, "invalid apt source", REPOSITORY),
	CODE(SIGNATURE, "signature verification failed", REPOSITORY),
	CODE(INTEGRITY, "checksum or size mismatch", DOWNLOAD),
	CODE(EXPIRED, "repository metadata expired", REPOSITORY),
	CODE(NETWORK, "download failed", DOWNLOAD),
	CODE(NOTFOUND, "not found", DOWNLOAD),
	CODE(PARSE, "malformed data", REPOSITORY),
	CODE(RESOLVE, "unresolvable package set", RESOLVE),
	CODE(PACKAGE, "invalid package", PACKAGE),
	CODE(CONFLICT, "file conflict between packages", PACKAGE),
	CODE(SANDBOX, "sandbox set-up failed", SCRIPT),
	CODE(HOOK, "script or hook failed", SCRIPT),
	CODE(IMAGE, "image writer failed", IMAGE),
	CODE(NOSPACE, "image too small", IMAGE),
	CODE(LIMIT, "safety limit exceeded", FAILED),
	CODE(OFFLINE, "not in cache (offline)", DOWNLOAD),
	CODE(LOCK, "lock file mismatch", RESOLVE),
	CODE(INTERRUPTED, "interrupted", INTERRUPTED),
	CODE(LIMIT_REPO, "repository data exceeds a safety limit", REPOSITORY),
	CODE(LIMIT_PKG, "package exceeds a safety limit", PACKAGE),
	CODE(INTERNAL, "internal error", FAILED),
#undef CODE
};

/* The exit statuses, in order, with the meaning --help and mkimage(1) give them. */
static const struct {
	enum mki_exit exit;
	const char *meaning;
} statuses[] = {
	{ MKI_EXIT_OK, "ok" },
	{ MKI_EXIT_FAILED, "build failed (other)" },
	{ MKI_EXIT_USAGE, "usage or recipe error" },
	{ MKI_EXIT_REPOSITORY, "repository or signature error" },
	{ MKI_EXIT_RESOLVE, "resolver or lock error" },
	{ MKI_EXIT_DOWNLOAD, "download or checksum error" },
	{ MKI_EXIT_PACKAGE, "bad package or file conflict" },
	{ MKI_EXIT_SCRIPT, "sandbox, maintainer script or hook failure" },
	{ MKI_EXIT_IMAGE, "image error" },
	{ MKI_EXIT_INTERRUPTED, "interrupted" },
};

static int is_ours(int e)
{
	return e > MKI_E_BASE && e < MKI_E_MAX && codes[e - MKI_E_BASE].text;
}

const char *err_text(int err)
{
	int e = err < 0 ? -err : err;

	if (is_ours(e))
		return codes[e - MKI_E_BASE].text;
	if (e > 0 && e < MKI_E_BASE)
		return strerror(e);
	return "unknown error";
}

int err_exit_code(int err)
{
	int e = err < 0 ? -err : err;

	if (!e)
		return MKI_EXIT_OK;
	return is_ours(e) ? (int)codes[e - MKI_E_BASE].exit : MKI_EXIT_FAILED;
}

void err_exit_help(struct buf *out)
{
	size_t i;

	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		buf_addf(out, "  %-4d %s\n", (int)statuses[i].exit, statuses[i].meaning);
}

#include <signal.h>

static volatile sig_atomic_t interrupted;

void err_set_interrupted(int sig)
{
	interrupted = sig;
}

int err_interrupted(void)
{
	return interrupted;
}
