/* Spawn programs with an argv (never a shell), capture bounded output, enforce a timeout. */
#ifndef MKI_PROC_H
#define MKI_PROC_H

#include <stddef.h>

#include "str.h"

struct proc_opts {
	const char *const *env; /* NULL: inherit */
	const char *cwd;        /* NULL: inherit */
	int stdin_fd;           /* < 0: /dev/null */
	struct buf *out;        /* NULL: stdout goes to our stderr */
	struct buf *err;        /* NULL: stderr goes to our stderr */
	size_t limit;           /* max bytes kept per captured stream (0: 1 MiB); the rest is drained */
	unsigned timeout;       /* seconds, 0: none; the child's process group is killed after it */
};

/**
 * Run argv[0] (searched in PATH) and wait for it. `*status` gets the exit code, or 128+signal,
 * or 124 on timeout (as timeout(1)). Returns 0 when the program ran (whatever its status),
 * -MKI_E_INTERRUPTED when SIGINT or SIGTERM came first (its process group killed), or a negative
 * errno when it could not be started.
 */
int proc_run(const char *const *argv, const struct proc_opts *o, int *status);

/** Find an executable in PATH; returns a new string or NULL. */
char *proc_which(const char *name);

#endif
