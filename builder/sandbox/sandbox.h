/*
 * The rootless sandbox (mkimage(7): CONFIGURATION, THREAT MODEL): one user + mount +
 * uts + ipc namespace that the build enters before unpacking and stays in until the image is
 * written, with the full subordinate id range mapped (or the identity map when really root), a private binfmt_misc instance with
 * qemu-user registered for the foreign architectures, and runs of target programs, each in a
 * fresh pid + mount namespace whose init pivots into the tree and is killed afterwards (so nothing
 * outlives a command and none of the mounts (/proc, /dev, /run, /tmp) ever lands in the tree), and
 * in a nested user namespace of its own (confine.h).
 */
#ifndef MKI_SANDBOX_H
#define MKI_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/log.h"
#include "lib/str.h"
#include "userns.h"
#include "watchdog.h"

struct sandbox_opts {
	int allow_single_id; /* go on with a single-id map when no subordinate range exists */
};

/**
 * Check, without entering, that the namespace can have the id map it needs (call before long
 * work such as downloads, so a missing subordinate range is said up front). -MKI_E_SANDBOX with
 * how to fix it; the decision is kept for sandbox_enter().
 */
int sandbox_check(const struct sandbox_opts *o);

/**
 * Move this process into a new user, mount, uts and ipc namespace (a helper process writes the id
 * maps with newuidmap/newgidmap), become root there and make every mount private. Must be called
 * single-threaded. Without a subordinate id range, fails with -MKI_E_SANDBOX and says how to add
 * one, unless `o->allow_single_id`. Idempotent: a second call does nothing.
 */
int sandbox_enter(const struct sandbox_opts *o);
/** The state after sandbox_enter(); borrowed, NULL before. */
const struct sandbox_info *sandbox_get(void);

/**
 * Make binaries of the Debian architecture `arch` runnable: nothing for an arch the CPU runs
 * natively; else register qemu-user (static) with flags FP in the private binfmt_misc instance
 * (kernel >= 6.7), or accept a host registration that has flag F. Architectures sharing an ELF
 * machine (armel, armhf) share one entry. -MKI_E_SANDBOX with what to install otherwise.
 */
int sandbox_add_arch(const char *arch);
/**
 * Point every emulated arch's private registration at `interp` (flags FP), or back at its qemu
 * when NULL. Needs the private binfmt_misc instance; -MKI_E_SANDBOX, logged, otherwise.
 */
int sandbox_set_interpreter(const char *interp);
/** Whether `arch` runs through qemu (registered by sandbox_add_arch()). */
int sandbox_arch_emulated(const char *arch);

/** What became of a command besides its exit status (see sandbox_cmd.report). */
struct sandbox_report {
	int signal;         /* the command itself was killed by this signal; 0: it exited */
	char leftover[192]; /* names of the processes it left running, killed when it ended; "" none */
	struct watchdog_report watch; /* a bound of sandbox_cmd.watch it passed; verdict 0: none */
};

struct sandbox_cmd {
	const char *root;              /* pivot_root into this tree; NULL: run on the host filesystem */
	const char *const *argv;       /* argv[0] is resolved inside the root (or PATH of `env`) */
	const char *const *env;        /* the whole environment (nothing is inherited) */
	const char *cwd;               /* inside the root; NULL: "/" (or unchanged when root is NULL) */
	unsigned timeout;              /* seconds, 0: none */
	struct buf *out;               /* stdout+stderr; the last `limit` bytes are kept; NULL: discarded */
	size_t limit;                  /* 0: 64 KiB */
	int network;                   /* share the build's network; else only a loopback (default) */
	const char *bind_src;          /* optional: this host directory, read-only, ... */
	const char *bind_dir;          /* ... onto this existing directory of the tree (relative) */
	const char *bind_file_src;     /* optional: this host regular file, writable, ... */
	const char *bind_file_dst;     /* ... onto this existing file of the tree, after bind_src */
	struct sandbox_report *report; /* filled when the command ran to its end; NULL: not wanted */
	const struct watchdog_opts *watch; /* bounds enforced while it runs; NULL: none. Without */
					   /* a root: no tree walk, no rlimits (an outside hook) */
	const char *log_as;            /* non-NULL: the whole output into the build log as this */
	struct progress *progress;     /* non-NULL: ticked while the command runs (log.h) */
	/*
	 * Non-NULL: the write end of a pipe is the command's fd 3 (for `dpkg --status-fd 3`), and
	 * each line read from it is passed here without its newline: at most SANDBOX_STATUS_LINE
	 * bytes (a longer line is dropped whole), hostile (the tree's programs write it).
	 */
	void (*on_status)(void *ctx, const char *line);
	void *status_ctx;
};

#define SANDBOX_STATUS_FD 3
#define SANDBOX_STATUS_LINE 512

/**
 * Run a command in a fresh pid + mount + IPC (+ network, unless `network`) namespace, stdin
 * /dev/null, in its own session (no SysV or POSIX IPC object outlives it). With a root: /proc, a
 * minimal /dev (null zero full random urandom tty console, devpts + ptmx, shm, fd links), tmpfs
 * /run and /tmp are mounted in that namespace only (each tmpfs sized by `watch->max_memory`), then its init pivot_root()s into the tree (confine.h);
 * the command runs in a nested user + mount namespace, root there, with no fd but 0-2. Its pid 1 is killed when the command ends
 * or times out, so no process survives it: daemons the command started are killed and named in
 * `report->leftover`. The command cannot signal mkimage or its own pid 1 (a pid-namespace init
 * ignores signals from inside its namespace), so it cannot end the build by killing its parent.
 * `*status` gets the exit code, 128+signal, or 124 on timeout. Returns 0 when the command ran
 * (whatever its status), -MKI_E_INTERRUPTED when SIGINT/SIGTERM arrived (the namespace is killed
 * first), or a negative errno when the namespace or mounts could not be set up (logged).
 */
int sandbox_run(const struct sandbox_cmd *c, int *status);

/** The last `lines` lines of `text` (a pointer into it). */
const char *sandbox_tail(const char *text, unsigned lines);

#endif
