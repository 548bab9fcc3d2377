/* Watchdog: functions exported only for the unit tests (and test drivers); not part of the contract. */
#ifndef MKI_WATCHDOG_INTERNAL_H
#define MKI_WATCHDOG_INTERNAL_H

#include "watchdog.h"

/**
 * The maintainer script a process runs, from its /proc/PID/cmdline (`len` bytes, NUL-separated):
 * dpkg executes /var/lib/dpkg/info/PKG.SCRIPT (or /var/lib/dpkg/tmp.ci/SCRIPT for a new
 * preinst), so the path is argv[0] for a binary, argv[1] after the kernel's #! rewrite
 * (`/bin/sh PATH configure`), argv[3] under qemu-user with binfmt flag P. Fills `package` (from
 * the path; "" for tmp.ci) and `script`; returns 1 when it is one, else 0.
 */
int watchdog_parse_cmdline(const char *cmdline, size_t len, struct watchdog_report *r);

/**
 * Fields 4 (parent pid) and 22 (start time in clock ticks since boot) of /proc/PID/stat: 0, or
 * -EINVAL.
 */
int watchdog_parse_stat(const char *stat, long *ppid, unsigned long long *ticks);

/** Fields 20 (threads) and 24 (resident pages) of /proc/PID/stat: 0, or -EINVAL. */
int watchdog_parse_stat_usage(const char *stat, unsigned long long *threads,
			      unsigned long long *rss_pages);

/**
 * Whether a /proc/PID/cmdline (`len` bytes) is dpkg's: "dpkg" is the base name of one of its
 * first arguments (argv[0]; argv[1] or [2] under qemu-user with binfmt flag P, or after
 * mkimage-exec's "-0 ARGV0").
 */
int watchdog_runs_dpkg(const char *cmdline, size_t len);

/**
 * Fields 3 (state) and 14-15 (utime + stime, in clock ticks) of /proc/PID/stat: 0, or -EINVAL.
 */
int watchdog_parse_cpu(const char *stat, char *state, unsigned long long *ticks);

/**
 * Record fingerprint `p` taken at `now`: a change restarts the stall clock. Returns the seconds
 * the step has gone without a change (0 right after one).
 */
double watchdog_progress_seen(struct watchdog *w, const struct watchdog_progress *p, double now);

/**
 * Record fingerprint `p` taken at `now` (watchdog_progress_seen()) and say whether the step has
 * stalled: 1, with `*r` filled (WATCHDOG_STALLED), when it went without a change for longer than
 * stall_timeout while dpkg ran in it or, with stall_any, whatever ran; else 0.
 */
int watchdog_stalled(struct watchdog *w, const struct watchdog_progress *p, double now,
		     struct watchdog_report *r);

#endif
