#include "err.h"

#include <string.h>

static const char *const texts[MKI_E_MAX - MKI_E_BASE] = {
	[MKI_E_USAGE - MKI_E_BASE] = "usage error",
	[MKI_E_RECIPE - MKI_E_BASE] = "invalid recipe",
	[MKI_E_NOTYET - MKI_E_BASE] = "not yet supported",
	[MKI_E_SOURCE - MKI_E_BASE] = "invalid apt source",
	[MKI_E_SIGNATURE - MKI_E_BASE] = "signature verification failed",
	[MKI_E_INTEGRITY - MKI_E_BASE] = "checksum or size mismatch",
	[MKI_E_EXPIRED - MKI_E_BASE] = "repository metadata expired",
	[MKI_E_NETWORK - MKI_E_BASE] = "download failed",
	[MKI_E_NOTFOUND - MKI_E_BASE] = "not found",
	[MKI_E_PARSE - MKI_E_BASE] = "malformed data",
	[MKI_E_RESOLVE - MKI_E_BASE] = "unresolvable package set",
	[MKI_E_PACKAGE - MKI_E_BASE] = "invalid package",
	[MKI_E_CONFLICT - MKI_E_BASE] = "file conflict between packages",
	[MKI_E_SANDBOX - MKI_E_BASE] = "sandbox set-up failed",
	[MKI_E_HOOK - MKI_E_BASE] = "script or hook failed",
	[MKI_E_IMAGE - MKI_E_BASE] = "image writer failed",
	[MKI_E_NOSPACE - MKI_E_BASE] = "image too small",
	[MKI_E_LIMIT - MKI_E_BASE] = "safety limit exceeded",
	[MKI_E_OFFLINE - MKI_E_BASE] = "not in cache (offline)",
	[MKI_E_LOCK - MKI_E_BASE] = "lock file mismatch",
	[MKI_E_INTERRUPTED - MKI_E_BASE] = "interrupted",
	[MKI_E_LIMIT_REPO - MKI_E_BASE] = "repository data exceeds a safety limit",
	[MKI_E_LIMIT_PKG - MKI_E_BASE] = "package exceeds a safety limit",
};

const char *err_text(int err)
{
	int e = err < 0 ? -err : err;

	if (e > MKI_E_BASE && e < MKI_E_MAX && texts[e - MKI_E_BASE])
		return texts[e - MKI_E_BASE];
	if (e > 0 && e < MKI_E_BASE)
		return strerror(e);
	return "unknown error";
}

int err_exit_code(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return 0;
	case MKI_E_USAGE:
	case MKI_E_RECIPE:
		return 2;
	case MKI_E_SOURCE:
	case MKI_E_SIGNATURE:
	case MKI_E_EXPIRED:
	case MKI_E_PARSE:
	case MKI_E_LIMIT_REPO:
		return 3;
	case MKI_E_RESOLVE:
	case MKI_E_LOCK:
		return 4;
	case MKI_E_NETWORK:
	case MKI_E_NOTFOUND:
	case MKI_E_INTEGRITY:
	case MKI_E_OFFLINE:
		return 5;
	case MKI_E_PACKAGE:
	case MKI_E_CONFLICT:
	case MKI_E_LIMIT_PKG:
		return 6;
	case MKI_E_SANDBOX:
	case MKI_E_HOOK:
		return 7;
	case MKI_E_IMAGE:
	case MKI_E_NOSPACE:
		return 8;
	case MKI_E_INTERRUPTED:
		return 130;
	default:
		return 1;
	}
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
