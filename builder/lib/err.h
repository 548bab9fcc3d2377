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
	MKI_E_LIMIT,      /* an internal bound was hit (runlimits.h holds the configurable ones) */
	MKI_E_OFFLINE,    /* --offline and the cache lacks an object */
	MKI_E_LOCK,       /* --locked and the lock does not match */
	MKI_E_INTERRUPTED,/* SIGINT/SIGTERM */
	MKI_E_LIMIT_REPO, /* repository data beyond a --limit (exit status of a repository error) */
	MKI_E_LIMIT_PKG,  /* a package beyond a --limit (exit status of a bad package) */
	MKI_E_INTERNAL,   /* mkimage broke its own rule (log_fail_on_errors) */
	MKI_E_MAX
};

/*
 * The process exit statuses. err.c's table gives each its one-line meaning; `mkimage --help`
 * prints that table and tests/integration/05-man.sh checks it against mkimage(1)'s EXIT STATUS.
 */
enum mki_exit {
	MKI_EXIT_OK = 0,
	MKI_EXIT_FAILED = 1,
	MKI_EXIT_USAGE = 2,
	MKI_EXIT_REPOSITORY = 3,
	MKI_EXIT_RESOLVE = 4,
	MKI_EXIT_DOWNLOAD = 5,
	MKI_EXIT_PACKAGE = 6,
	MKI_EXIT_SCRIPT = 7,
	MKI_EXIT_IMAGE = 8,
	MKI_EXIT_INTERRUPTED = 130,
};

struct buf;

/** Human text for a negative error code (errno or MKI_E_*). Never NULL. */
const char *err_text(int err);

/** Process exit status for an error code: an enum mki_exit value (errno codes: MKI_EXIT_FAILED). */
int err_exit_code(int err);

/** Append the exit statuses and their meanings to `out`, one "  N  meaning" line each. */
void err_exit_help(struct buf *out);

/** Record that SIGINT/SIGTERM arrived (async-signal-safe). */
void err_set_interrupted(int sig);
/** The signal that interrupted the build, or 0. Long loops poll it and return -MKI_E_INTERRUPTED. */
int err_interrupted(void);
#endif
