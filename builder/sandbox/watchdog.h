/*
 * Bounds on what runs inside a build step (maintainer scripts, inside hooks, every command
 * mkimage starts in the tree): a per-script timeout, a process limit, the staging-size limit and
 * the memory limit while the step runs. The pid namespace's
 * init drives it: it calls watchdog_tick() from its wait loop; the watchdog reads the namespace's
 * own /proc (a directory fd, so it works before and after the init enters the tree) and walks the
 * tree by fd, and when a bound is passed it kills every process of the namespace and says why in a
 * plain-data report the init hands back to mkimage.
 */
#ifndef MKI_WATCHDOG_H
#define MKI_WATCHDOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/runlimits.h"

/*
 * mkimage-exec's exec profile (mkimage -v) names itself so while it waits for the program it
 * started: the watchdog looks through it to its parent, so that -v changes nothing it times.
 */
#define WATCHDOG_PROFILER_COMM "mkimage-profile"

/** The bounds of one step; a 0 field is no bound. */
struct watchdog_opts {
	unsigned script_timeout; /* seconds one maintainer script may run */
	unsigned stall_timeout;  /* seconds dpkg may run with no progress in the step */
	int stall_any;           /* the stall bound holds whatever runs (a hook), not only dpkg */
	uint64_t max_procs;      /* processes in the step's namespace (the init excluded) */
	uint64_t max_tree_bytes; /* bytes allocated in the tree (st_blocks, one filesystem) */
	uint64_t max_memory;     /* resident memory + the step's tmpfs mounts + SysV shm, bytes */
};

enum watchdog_verdict {
	WATCHDOG_NONE,
	WATCHDOG_SCRIPT_TIMEOUT, /* `package`.`script` ran more than `limit` seconds */
	WATCHDOG_PROCESSES,      /* `count` processes were running, limit `limit` */
	WATCHDOG_STAGING,        /* the tree held `count` bytes, limit `limit` */
	WATCHDOG_MEMORY,         /* the step held `count` bytes of memory, limit `limit` */
	WATCHDOG_STALLED,        /* no progress for `seconds` (while dpkg ran, unless */
				 /* stall_any), limit `limit`; `count` processes, `stopped` */
				 /* of them stopped (SIGSTOP), `dpkg` whether dpkg ran */
};

/** What the watchdog did: plain data, so it can live in a page shared with mkimage. */
struct watchdog_report {
	int verdict;              /* enum watchdog_verdict */
	char package[128];        /* the maintainer script running, "" none known */
	char script[16];          /* "postinst", "preinst"... */
	unsigned long long count; /* processes or bytes, as the verdict says */
	unsigned long long limit; /* the bound passed */
	unsigned seconds;         /* how long the script had run, or the step stalled */
	unsigned stopped;         /* processes stopped by a signal (WATCHDOG_STALLED) */
	int dpkg;                 /* a dpkg process was among them (WATCHDOG_STALLED) */
};

/*
 * What says a step is alive, taken at each look: the CPU time all its processes used (clock
 * ticks) and which processes exist. A step whose fingerprint stays the same used no CPU and
 * started or ended no process: stopped (SIGSTOP), or waiting on something that never comes.
 */
struct watchdog_progress {
	unsigned long long cpu; /* utime + stime of the live processes, in ticks */
	unsigned long long pids; /* sum of their pids, and how many: a change is a start or an end */
	unsigned long long n;
	unsigned stopped;        /* how many are stopped (state T or t) */
	int dpkg;                /* whether a dpkg process is among them */
};

struct watchdog {
	int proc_fd, root_fd; /* borrowed */
	pid_t command;        /* the step's command, in the namespace's pids */
	dev_t root_dev;
	struct watchdog_opts o;
	double next_walk, walk_cost; /* adaptive: walks take < 2% of the step */
	struct watchdog_progress last; /* the fingerprint at the last change */
	double last_change;            /* when it last changed (CLOCK_BOOTTIME seconds) */
	unsigned long long ticks_per_s, page_size;
};

/** What a scan adds up: processes and threads, and their resident bytes. */
struct watchdog_usage {
	unsigned long long tasks, bytes;
};

/**
 * Start watching a step: `proc_fd` is the step's own /proc (the pid namespace's), `root_fd` the
 * tree (-1: no size bound), `command` the pid of the step's command there (0: not known). Both
 * fds borrowed and kept open by the caller.
 */
void watchdog_init(struct watchdog *w, int proc_fd, int root_fd, pid_t command,
		   const struct watchdog_opts *o);

/**
 * In the command, before exec: RLIMIT_NPROC at the process limit (it counts processes and
 * threads of the command's user and user namespace, as the scan does; not enforced for a real
 * root, hence the scan), RLIMIT_FSIZE (a single file cannot pass the staging bound), RLIMIT_AS at
 * the memory limit plus room for what a process maps without using (watchdog_as_limit()), and
 * an OOM score that makes the step the kernel's first choice. Errors are ignored: the scan is
 * the enforcement.
 */
void watchdog_limit_self(const struct watchdog_opts *o, int emulated);

/**
 * The address-space bound of one process of a step: `max_memory` plus 1 GiB (a native process
 * maps more than it uses: thread stacks, malloc arenas), plus 5 GiB when the build emulates an
 * architecture (qemu-user reserves the 4 GiB of a 32-bit guest's address space up front and a
 * 128 MiB code buffer: qemu-arm 7.2 needs 4.4 GiB to start a shell). 0: no bound.
 */
uint64_t watchdog_as_limit(uint64_t max_memory, int emulated);

/**
 * One look at the step (call every 100-250 ms from the namespace's init): count processes, find
 * maintainer scripts older than the timeout, see whether the step progressed (struct
 * watchdog_progress: a step whose fingerprint has not changed for `stall_timeout` seconds while
 * a dpkg runs in it, or at all with `stall_any`, has stalled), walk the tree when its turn comes. A process is a
 * maintainer script when its first arguments name one, when dpkg started it, or when it is the
 * step's command and its environment says it runs one; its age counts from its start, so a
 * script that exec'd another program or rewrote its arguments is still timed. When a bound is
 * passed, fills `*r`, kills every other process of the pid namespace (SIGKILL) and returns 1;
 * else 0. The caller must be the namespace's init (kill(-1) spares only it).
 */
int watchdog_tick(struct watchdog *w, struct watchdog_report *r);

/**
 * When the step has ended: one last walk of the tree, so a script that filled it and exited
 * between two walks is still caught. Fills `*r` and returns 1 when the tree is over its bound;
 * also when the step `failed` with its leftovers at the process limit (a refused fork ended it).
 */
int watchdog_finish(struct watchdog *w, struct watchdog_report *r, int failed);

/**
 * Say what the watchdog did to `step` (e.g. "'dpkg --configure -a'"), once, as an error naming the
 * bound and how to raise it (`l` for the --limit values; may be NULL).
 */
void watchdog_log(const struct watchdog_report *r, const char *step, const struct limits *l);

#endif
