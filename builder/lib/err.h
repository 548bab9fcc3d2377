/* Error codes: functions return 0 or a negative errno or a negative MKI_E_* code. */
#ifndef MKI_ERR_H
#define MKI_ERR_H

/* Our own codes live above the errno range so one int carries either kind. */
enum mki_err {
	MKI_E_BASE = 1000,
	MKI_E_USAGE,      /* bad command line */
	MKI_E_RECIPE,     /* recipe syntax or validation error */
	MKI_E_NOTYET,     /* capability not implemented yet */
	MKI_E_SOURCE,     /* apt sources: unreadable or malformed */
	MKI_E_SIGNATURE,  /* index signature refused */
	MKI_E_INTEGRITY,  /* size or sha256 mismatch */
	MKI_E_EXPIRED,    /* Release past Valid-Until */
	MKI_E_NETWORK,    /* download failed after retries */
	MKI_E_NOTFOUND,   /* 404, missing index or missing cache object */
	MKI_E_PARSE,      /* malformed index or control data */
	MKI_E_RESOLVE,    /* no installable package set */
	MKI_E_PACKAGE,    /* bad or hostile .deb */
	MKI_E_CONFLICT,   /* file clash between packages */
	MKI_E_SANDBOX,    /* namespace/binfmt set-up failed */
	MKI_E_HOOK,       /* maintainer script or hook failed */
	MKI_E_IMAGE,      /* image writer failure */
	MKI_E_NOSPACE,    /* image too small */
	MKI_E_LIMIT,      /* an internal bound was hit (see limits.h for the configurable ones) */
	MKI_E_OFFLINE,    /* --offline and the cache lacks an object */
	MKI_E_LOCK,       /* --locked and the lock does not match */
	MKI_E_INTERRUPTED,/* SIGINT/SIGTERM */
	MKI_E_LIMIT_REPO, /* repository data beyond a --limit (exit status of a repository error) */
	MKI_E_LIMIT_PKG,  /* a package beyond a --limit (exit status of a bad package) */
	MKI_E_MAX
};

/** Human text for a negative error code (errno or MKI_E_*). Never NULL. */
const char *err_text(int err);

/**
 * Process exit status for an error, as documented in README.md:
 * 0 ok, 1 build failed, 2 usage or recipe, 3 repository/verification, 4 resolve,
 * 5 download, 6 package/unpack, 7 sandbox/hooks, 8 image, 130 interrupted.
 */
int err_exit_code(int err);



/** Record that SIGINT/SIGTERM arrived (async-signal-safe). */
void err_set_interrupted(int sig);
/** The signal that interrupted the build, or 0. Long loops poll it and return -MKI_E_INTERRUPTED. */
int err_interrupted(void);
#endif
