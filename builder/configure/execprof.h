/*
 * The exec profile of a configuration (mkimage -v with native tools): which target programs the
 * maintainer scripts ran, how often, natively or under QEMU, and what they cost.
 *
 * mkimage-exec (execprof_run.c) appends one line per program it started to a record file:
 *
 *     native|emulated WALL_US CPU_US PATH
 *
 * WALL_US is the program's wall time including what it ran, CPU_US the CPU time of its own
 * process only (its main thread's run time; for an emulated program, QEMU's). PATH is the file
 * the kernel was asked to execute, escaped: every byte outside '!'..'~' and every '\' as \xHH, so
 * a line is one line of printable ASCII whatever a script named its programs. Every process in
 * the tree can write the record (it runs as whoever execs), so nothing but the profile trusts it:
 * it is read with a bound, and a malformed line is counted and skipped. Lines "python PATH"
 * (the py_compile guard's, accel_python.c) are not the profile's and are skipped.
 */
#ifndef MKI_EXECPROF_H
#define MKI_EXECPROF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EXECPROF_MAX_BYTES (32u << 20) /* mkimage-exec stops appending here; the reader reads no more */
#define EXECPROF_MAX_PATH 255          /* bytes of a program's path recorded (before escaping) */
#define EXECPROF_TOP 15                /* entries execprof_log() shows */

struct execprof_entry {
	char *path;        /* escaped as in the record: printable ASCII */
	int native;
	uint64_t count, wall_us, cpu_us;
};

struct execprof {
	struct execprof_entry *v;
	size_t n, alloc;
	uint64_t execs, native_execs, wall_us, cpu_us; /* over all entries */
	size_t malformed;                              /* lines skipped */
};

/** Add the record text `text` (`len` bytes) to `p`, one entry per (path, native). */
void execprof_parse(struct execprof *p, const char *text, size_t len);
/** Sort `p`'s entries: most CPU time first, then most wall time, then by path. */
void execprof_sort(struct execprof *p);
/**
 * Read the record file `path` (at most EXECPROF_MAX_BYTES), then log its totals and its top
 * `top` entries at info level, the others at debug level. A record that cannot be read is a
 * warning: the build goes on.
 */
void execprof_log(const char *path, size_t top);
void execprof_release(struct execprof *p);
/**
 * Create the empty record file `path`, owned by `uid`:`gid` (the commands' root) and writable by
 * every user in the tree, as any of them may exec a program. 0 or -errno.
 */
int execprof_create(const char *path, uid_t uid, gid_t gid);

/*
 * mkimage-exec's side (execprof_run.c, linked into mkimage-exec only). With a record file: fork;
 * the child returns 0 at once and goes on to become the program exactly as without a profile;
 * the parent forwards every signal it can catch to it, waits, appends the line of `exe` to
 * `record_file` and
 * exits as the child did (the same status, or killed by the same signal). Pids differ from an
 * unprofiled run (the program is the child of the pid its parent started), which is why only -v
 * profiles. Returns -1 in the (only) process when fork fails: run unprofiled.
 */
int execprof_fork(const char *record_file, const char *exe, int native);

#endif
