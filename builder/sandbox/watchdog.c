/*
 * The step watchdog (watchdog.h). It runs in the pid namespace's init, so the /proc it reads
 * shows only the step's processes, with the namespace's pids, and kill(-1) reaches exactly them.
 * The scan is cheap when the step is well-behaved (a configure runs a handful of processes): a
 * readdir of /proc, one short read of stat per process, cmdline only for processes older than the
 * timeout; the tree walk is spaced so that it costs under 2% of the step.
 */
#include "watchdog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "watchdog_internal.h"

#define INFO_DIR "/var/lib/dpkg/info/"
#define NEW_DIR "/var/lib/dpkg/tmp.ci/"
#define ARGS_SEARCHED 4     /* argv[0], [1] after #!, [3] under qemu with binfmt flag P */
#define WALK_SHARE 50       /* wait 50 times a walk's cost before the next: 2% */
#define WALK_MIN_GAP 0.5    /* seconds between walks, however cheap */
#define WALK_MAX_DEPTH 256  /* deeper directories are not counted (fds are bounded) */
#define AS_NATIVE_ROOM (1ull << 30)
#define AS_EMULATED_ROOM (5ull << 30)

/* The step's tmpfs mounts (sandbox.c): what they hold is memory, not tree. */
static const char *const tmpfs_dirs[] = { "dev", "dev/shm", "run", "tmp", NULL };

static const char *const scripts[] = { "preinst", "postinst", "prerm", "postrm", "config", NULL };

static double boot_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int is_script_name(const char *s, size_t n)
{
	size_t i;

	for (i = 0; scripts[i]; i++)
		if (strlen(scripts[i]) == n && !memcmp(scripts[i], s, n))
			return 1;
	return 0;
}

/* One argument: INFO_DIR PKG.SCRIPT (PKG may carry ":ARCH") or NEW_DIR SCRIPT. */
static int parse_script_path(const char *a, struct watchdog_report *r)
{
	const char *base, *dot;

	if (!strncmp(a, NEW_DIR, strlen(NEW_DIR))) {
		base = a + strlen(NEW_DIR);
		if (!is_script_name(base, strlen(base)))
			return 0;
		r->package[0] = 0;
		snprintf(r->script, sizeof(r->script), "%s", base);
		return 1;
	}
	if (strncmp(a, INFO_DIR, strlen(INFO_DIR)))
		return 0;
	base = a + strlen(INFO_DIR);
	dot = strrchr(base, '.');
	if (!dot || dot == base || strchr(base, '/') || !is_script_name(dot + 1, strlen(dot + 1)))
		return 0;
	snprintf(r->package, sizeof(r->package), "%.*s", (int)(dot - base), base);
	snprintf(r->script, sizeof(r->script), "%s", dot + 1);
	return 1;
}

int watchdog_parse_cmdline(const char *cmdline, size_t len, struct watchdog_report *r)
{
	const char *p = cmdline, *end = cmdline + len;
	int i;

	for (i = 0; i < ARGS_SEARCHED && p < end; i++) {
		const char *nul = memchr(p, 0, (size_t)(end - p));

		if (!nul)
			return 0; /* truncated: not a whole argument */
		if (parse_script_path(p, r))
			return 1;
		p = nul + 1;
	}
	return 0;
}

/* The number starting at `p` and ending at a space, a newline or the end: 0, or -EINVAL. */
static int stat_number(const char *p, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(p, &end, 10);
	return errno || end == p || (*end != ' ' && *end != '\n' && *end) ? -EINVAL : 0;
}

int watchdog_parse_stat(const char *stat, long *ppid, unsigned long long *ticks)
{
	/* comm (field 2) may hold spaces and ')': fields restart after the last ')'. */
	const char *p = strrchr(stat, ')');
	unsigned long long parent = 0;
	int field;

	if (!p)
		return -EINVAL;
	p++;
	for (field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
		if (field == 3 && (stat_number(p + 1, &parent) || parent > INT_MAX))
			return -EINVAL;
	}
	*ppid = (long)parent;
	return stat_number(p + 1, ticks);
}

int watchdog_parse_stat_usage(const char *stat, unsigned long long *threads,
			      unsigned long long *rss_pages)
{
	const char *p = strrchr(stat, ')');
	int field;

	if (!p)
		return -EINVAL;
	p++;
	/* At `field`, p is the space before field + 1: num_threads is field 20, rss field 24. */
	for (field = 3; field < 24; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
		if (field == 19 && stat_number(p + 1, threads))
			return -EINVAL;
	}
	return stat_number(p + 1, rss_pages);
}

int watchdog_parse_cpu(const char *stat, char *state, unsigned long long *ticks)
{
	const char *p = strrchr(stat, ')');
	unsigned long long ut = 0, st = 0;
	int field;

	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	*state = p[2];
	p++;
	for (field = 3; field < 15; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
		if (field == 13 && stat_number(p + 1, &ut))
			return -EINVAL;
	}
	if (stat_number(p + 1, &st))
		return -EINVAL;
	*ticks = ut + st;
	return 0;
}

double watchdog_progress_seen(struct watchdog *w, const struct watchdog_progress *p, double now)
{
	if (!w->last_change || p->cpu != w->last.cpu || p->pids != w->last.pids ||
	    p->n != w->last.n) {
		w->last = *p;
		w->last_change = now;
		return 0;
	}
	w->last.stopped = p->stopped;
	w->last.dpkg = p->dpkg;
	return now - w->last_change;
}

int watchdog_runs_dpkg(const char *cmdline, size_t len)
{
	const char *p = cmdline, *end = cmdline + len, *nul, *base;
	int i;

	for (i = 0; i < ARGS_SEARCHED && p < end; i++, p = nul + 1) {
		nul = memchr(p, 0, (size_t)(end - p));
		if (!nul)
			return 0;
		base = strrchr(p, '/');
		if (!strcmp(base ? base + 1 : p, "dpkg"))
			return 1;
	}
	return 0;
}

void watchdog_init(struct watchdog *w, int proc_fd, int root_fd, pid_t command,
		   const struct watchdog_opts *o)
{
	struct stat st;
	long tck = sysconf(_SC_CLK_TCK);

	memset(w, 0, sizeof(*w));
	w->proc_fd = proc_fd;
	w->root_fd = root_fd;
	w->command = command;
	w->o = *o;
	w->ticks_per_s = tck > 0 ? (unsigned long long)tck : 100;
	w->page_size = (unsigned long long)sysconf(_SC_PAGESIZE);
	if (root_fd < 0 || fstat(root_fd, &st) < 0)
		w->root_fd = -1;
	else
		w->root_dev = st.st_dev;
}

uint64_t watchdog_as_limit(uint64_t max_memory, int emulated)
{
	if (!max_memory)
		return 0;
	return max_memory + AS_NATIVE_ROOM + (emulated ? AS_EMULATED_ROOM : 0);
}

void watchdog_limit_self(const struct watchdog_opts *o, int emulated)
{
	uint64_t as = watchdog_as_limit(o->max_memory, emulated);
	struct rlimit rl;
	int fd;

	/* The command's user in its own user namespace: its processes and threads, exactly. */
	if (o->max_procs) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)o->max_procs;
		setrlimit(RLIMIT_NPROC, &rl);
	}
	if (o->max_tree_bytes) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)o->max_tree_bytes;
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	if (as) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)as;
		setrlimit(RLIMIT_AS, &rl);
	}
	/* Should the host run out of memory all the same, the kernel kills the step first. */
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = write(fd, "1000", 4); /* if refused, the other bounds still hold */

		(void)n;
		close(fd);
	}
}

/* Read /proc/PID/NAME (at most `size` - 1 bytes, NUL-terminated); the length or -1. */
static ssize_t read_proc(int proc_fd, const char *pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", pid, name);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* What dpkg's environment says a script is, into the fields of `r` still empty. */
static void script_from_env(int proc_fd, const char *pid, struct watchdog_report *r)
{
	static const char pkg_key[] = "DPKG_MAINTSCRIPT_PACKAGE=";
	static const char name_key[] = "DPKG_MAINTSCRIPT_NAME=";
	char buf[16384];
	ssize_t n = read_proc(proc_fd, pid, "environ", buf, sizeof(buf));
	const char *p, *v;

	for (p = buf; n > 0 && p < buf + n; p += strlen(p) + 1) {
		if (!r->package[0] && !strncmp(p, pkg_key, sizeof(pkg_key) - 1))
			snprintf(r->package, sizeof(r->package), "%s", p + sizeof(pkg_key) - 1);
		v = p + sizeof(name_key) - 1;
		if (!r->script[0] && !strncmp(p, name_key, sizeof(name_key) - 1) &&
		    is_script_name(v, strlen(v)))
			snprintf(r->script, sizeof(r->script), "%s", v);
	}
}

/*
 * The parent that counts for `ppid`: itself, or, when it is mkimage-exec's exec profile waiting
 * for the program it started (WATCHDOG_PROFILER_COMM), its own parent, so that a dpkg started
 * under -v is judged as without it. A process naming itself so gains nothing: it only makes its
 * children judged by its parent, which judges it too.
 */
static long counted_parent(int proc_fd, long ppid)
{
	char pid[24], buf[1024], comm[sizeof(WATCHDOG_PROFILER_COMM) + 2];
	unsigned long long start;
	long grand;

	snprintf(pid, sizeof(pid), "%ld", ppid);
	snprintf(comm, sizeof(comm), "(%s)", WATCHDOG_PROFILER_COMM);
	if (read_proc(proc_fd, pid, "stat", buf, sizeof(buf)) <= 0 || !strstr(buf, comm) ||
	    watchdog_parse_stat(buf, &grand, &start))
		return ppid;
	return grand;
}

static int parent_runs_dpkg(int proc_fd, long ppid)
{
	char pid[24], buf[4096];
	ssize_t n;

	ppid = counted_parent(proc_fd, ppid);
	if (ppid <= 1)
		return 0;
	snprintf(pid, sizeof(pid), "%ld", ppid);
	n = read_proc(proc_fd, pid, "cmdline", buf, sizeof(buf));
	return n > 0 && watchdog_runs_dpkg(buf, (size_t)n);
}

/*
 * Whether a process runs a maintainer script (watchdog.h: by its arguments, because dpkg
 * (`ppid`, 0: not looked at) started it, or as the step's command with a script's environment);
 * 1 and `*r` names what is known of it, else 0 and nothing named.
 */
static int script_of(const struct watchdog *w, const char *pid, long ppid,
		     struct watchdog_report *r)
{
	char buf[4096];
	ssize_t n = read_proc(w->proc_fd, pid, "cmdline", buf, sizeof(buf));
	int named = n > 0 && watchdog_parse_cmdline(buf, (size_t)n, r);
	int by_dpkg = !named && ppid > 1 && parent_runs_dpkg(w->proc_fd, ppid);
	int command = w->command > 0 && strtol(pid, NULL, 10) == w->command;

	if (!named && !by_dpkg && !command)
		return 0;
	script_from_env(w->proc_fd, pid, r);
	if (named || by_dpkg || r->script[0])
		return 1;
	r->package[0] = r->script[0] = 0;
	return 0;
}

static int is_pid(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* A maintainer script (its /proc/PID/stat in `stat`) older than the timeout: 1, `*r` filled. */
static int script_overdue(const struct watchdog *w, const char *pid, const char *stat, double now,
			  struct watchdog_report *r)
{
	unsigned long long start, cpu;
	long ppid;
	double age;
	char state;

	/* A zombie has ended: a dpkg stopped before it reaped a script has stalled (tick). */
	if (watchdog_parse_stat(stat, &ppid, &start) || watchdog_parse_cpu(stat, &state, &cpu) ||
	    state == 'Z')
		return 0;
	age = now - (double)start / (double)w->ticks_per_s;
	if (age <= w->o.script_timeout || !script_of(w, pid, ppid, r))
		return 0;
	r->verdict = WATCHDOG_SCRIPT_TIMEOUT;
	r->limit = w->o.script_timeout;
	r->seconds = (unsigned)age;
	return 1;
}

/* Add the threads and resident bytes of process `pid` to `use`. */
static void add_usage(const struct watchdog *w, const char *pid, struct watchdog_usage *use)
{
	unsigned long long threads = 1, rss = 0;
	char stat[1024];

	if (read_proc(w->proc_fd, pid, "stat", stat, sizeof(stat)) > 0 &&
	    !watchdog_parse_stat_usage(stat, &threads, &rss)) {
		use->tasks += threads ? threads : 1;
		use->bytes += rss * w->page_size;
	} else {
		use->tasks++;
	}
}

/* Add process `pid` (its stat in `stat`) to the step's fingerprint. */
static void progress_add(const struct watchdog *w, const char *pid, const char *stat,
			 struct watchdog_progress *p)
{
	unsigned long long ticks;
	char state, cmd[4096];
	ssize_t n;

	p->n++;
	p->pids += strtoull(pid, NULL, 10);
	if (watchdog_parse_cpu(stat, &state, &ticks))
		return;
	p->cpu += ticks;
	p->stopped += state == 'T' || state == 't';
	if (!p->dpkg) {
		n = read_proc(w->proc_fd, pid, "cmdline", cmd, sizeof(cmd));
		p->dpkg = n > 0 && watchdog_runs_dpkg(cmd, (size_t)n);
	}
}

/* One process of the scan: its part of the fingerprint, 1 when it is an overdue script. */
static int scan_one(const struct watchdog *w, const char *pid, double now,
		    struct watchdog_report *r, struct watchdog_progress *p)
{
	char stat[1024];

	if (read_proc(w->proc_fd, pid, "stat", stat, sizeof(stat)) <= 0)
		return 0;
	if (p)
		progress_add(w, pid, stat, p);
	return w->o.script_timeout && script_overdue(w, pid, stat, now, r);
}

/*
 * Walk /proc once: count the processes (the init, pid 1, excluded), stop at an overdue script,
 * take the step's fingerprint into `p` (may be NULL). With `any_script`, note the first
 * maintainer script seen (to name it in another verdict). With `use`, add up their threads and
 * resident memory there.
 */
static unsigned long long scan_procs(const struct watchdog *w, struct watchdog_report *r,
				     int any_script, struct watchdog_usage *use,
				     struct watchdog_progress *p)
{
	int fd = openat(w->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	unsigned long long n = 0;
	double now = boot_now();
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		if (!is_pid(de->d_name) || !strcmp(de->d_name, "1"))
			continue;
		n++;
		if (use)
			add_usage(w, de->d_name, use);
		if (any_script && !r->script[0])
			script_of(w, de->d_name, 0, r);
		else if (!any_script && scan_one(w, de->d_name, now, r, p))
			break;
	}
	closedir(d);
	return n;
}

/* Allocated bytes under directory `fd` (closed here), stopping early past `stop`. */
static void walk_add(const struct watchdog *w, int fd, unsigned depth, unsigned long long stop,
		     unsigned long long *sum)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	struct stat st;

	if (!d) {
		close(fd);
		return;
	}
	while (*sum <= stop && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_dev != w->root_dev)
			continue; /* vanished, or a mount (/proc, /dev, /run, /tmp, native tools) */
		*sum += (unsigned long long)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode) && depth < WALK_MAX_DEPTH) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				walk_add(w, sub, depth + 1, stop, sum);
		}
	}
	closedir(d);
}

/* Walk the tree now: 1 and `*r` filled when it holds more than its bound. */
static int tree_over(struct watchdog *w, struct watchdog_report *r)
{
	unsigned long long sum = 0;
	double t0 = boot_now();
	int fd = openat(w->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	walk_add(w, fd, 0, w->o.max_tree_bytes, &sum);
	w->walk_cost = boot_now() - t0;
	w->next_walk = boot_now() + (w->walk_cost * WALK_SHARE > WALK_MIN_GAP
					     ? w->walk_cost * WALK_SHARE : WALK_MIN_GAP);
	if (sum <= w->o.max_tree_bytes)
		return 0;
	r->verdict = WATCHDOG_STAGING;
	r->count = sum;
	r->limit = w->o.max_tree_bytes;
	return 1;
}

/*
 * Kill every process of the namespace but this init, naming a script that was running. A child
 * forked while kill(-1) runs may escape it, but not the init's exit: the kernel then refuses new
 * pids in the namespace before it kills what is left.
 */
/* The script whose environment the step's leftovers inherited (the script itself has ended). */
static void script_of_leftovers(const struct watchdog *w, struct watchdog_report *r)
{
	int fd = openat(w->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (!r->script[0] && (de = readdir(d)))
		if (is_pid(de->d_name) && strcmp(de->d_name, "1"))
			script_from_env(w->proc_fd, de->d_name, r);
	closedir(d);
}

static int verdict(const struct watchdog *w, struct watchdog_report *r)
{
	if (r->verdict != WATCHDOG_SCRIPT_TIMEOUT)
		scan_procs(w, r, 1, NULL, NULL);
	if (r->verdict != WATCHDOG_SCRIPT_TIMEOUT && !r->script[0])
		script_of_leftovers(w, r);
	kill(-1, SIGKILL);
	return 1;
}

/* Bytes the step's tmpfs mounts and SysV IPC (its own IPC namespace: ours) hold. */
static unsigned long long held_memory(const struct watchdog *w)
{
	unsigned long long sum = 0;
	struct shm_info shm;
	struct msginfo msg;
	struct statvfs sv;
	struct stat st;
	int i, fd;

	for (i = 0; w->root_fd >= 0 && tmpfs_dirs[i]; i++) {
		fd = openat(w->root_fd, tmpfs_dirs[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && st.st_dev != w->root_dev && !fstatvfs(fd, &sv))
			sum += (unsigned long long)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
		close(fd);
	}
	if (shmctl(0, SHM_INFO, (struct shmid_ds *)&shm) >= 0)
		sum += (unsigned long long)shm.shm_tot * w->page_size;
	if (msgctl(0, MSG_INFO, (struct msqid_ds *)&msg) >= 0)
		sum += (unsigned long long)msg.msgtql;
	return sum;
}

static int memory_over(const struct watchdog *w, unsigned long long resident,
		       struct watchdog_report *r)
{
	unsigned long long held = resident + held_memory(w);

	if (held < w->o.max_memory)
		return 0;
	r->verdict = WATCHDOG_MEMORY;
	r->count = held;
	r->limit = w->o.max_memory;
	return 1;
}

/*
 * Whether the step stalled: nothing changed for longer than the bound while dpkg ran or, with
 * stall_any (hooks), whatever ran: a command that sleeps or is stopped for that long makes no
 * progress, so it is ended before its own, often much longer, timeout.
 */
int watchdog_stalled(struct watchdog *w, const struct watchdog_progress *p, double now,
		     struct watchdog_report *r)
{
	double idle = watchdog_progress_seen(w, p, now);

	if (!w->o.stall_timeout || (!p->dpkg && !w->o.stall_any) || idle <= w->o.stall_timeout)
		return 0;
	r->verdict = WATCHDOG_STALLED;
	r->seconds = (unsigned)idle;
	r->limit = w->o.stall_timeout;
	r->count = p->n;
	r->stopped = p->stopped;
	r->dpkg = p->dpkg;
	return 1;
}

int watchdog_tick(struct watchdog *w, struct watchdog_report *r)
{
	struct watchdog_usage use = { 0 };
	struct watchdog_progress p = { 0 };

	memset(r, 0, sizeof(*r));
	scan_procs(w, r, 0, &use, w->o.stall_timeout ? &p : NULL);
	if (r->verdict)
		return verdict(w, r);
	if (w->o.stall_timeout && watchdog_stalled(w, &p, boot_now(), r))
		return verdict(w, r);
	if (w->o.max_procs && use.tasks >= w->o.max_procs) {
		r->verdict = WATCHDOG_PROCESSES;
		r->count = use.tasks;
		r->limit = w->o.max_procs;
		return verdict(w, r);
	}
	if (w->o.max_memory && memory_over(w, use.bytes, r))
		return verdict(w, r);
	if (w->root_fd >= 0 && w->o.max_tree_bytes && boot_now() >= w->next_walk &&
	    tree_over(w, r))
		return verdict(w, r);
	return 0;
}

/*
 * RLIMIT_NPROC is the limit itself, so a fork bomb's shell may give up on a refused fork and
 * end the step between two looks. A failed step whose leftovers still fill the process table to
 * within 1/16 of the limit (what exited since: the shell, dpkg) reached it.
 */
static int procs_at_limit(const struct watchdog *w, struct watchdog_report *r)
{
	struct watchdog_usage use = { 0 };
	unsigned long long slack = w->o.max_procs / 16 > 8 ? w->o.max_procs / 16 : 8;

	scan_procs(w, r, 1, &use, NULL);
	if (use.tasks + slack < w->o.max_procs)
		return 0;
	if (!r->script[0])
		script_of_leftovers(w, r);
	r->verdict = WATCHDOG_PROCESSES;
	r->count = use.tasks;
	r->limit = w->o.max_procs;
	return 1;
}

int watchdog_finish(struct watchdog *w, struct watchdog_report *r, int failed)
{
	memset(r, 0, sizeof(*r));
	if (failed && w->o.max_procs && procs_at_limit(w, r))
		return 1;
	memset(r, 0, sizeof(*r));
	if (w->o.max_memory && memory_over(w, 0, r))
		return 1;
	return w->root_fd >= 0 && w->o.max_tree_bytes && tree_over(w, r);
}

/* " (the postinst of 'pkg')", or "" when no script was seen. */
static void script_text(const struct watchdog_report *r, char *out, size_t size)
{
	if (!r->script[0])
		out[0] = 0;
	else
		snprintf(out, size, " (the %s of package '%s')", r->script,
			 r->package[0] ? r->package : "?");
}

/* The script a timeout names; one that hid its name is still said to be one. */
static void timed_script_text(const struct watchdog_report *r, char *out, size_t size)
{
	if (r->script[0])
		snprintf(out, size, "the %s script of package '%s'", r->script,
			 r->package[0] ? r->package : "?");
	else if (r->package[0])
		snprintf(out, size, "a maintainer script of package '%s'", r->package);
	else
		snprintf(out, size, "a maintainer script started by dpkg (its arguments and "
			 "environment no longer say which)");
}

void watchdog_log(const struct watchdog_report *r, const char *step, const struct limits *l)
{
	char who[192];

	script_text(r, who, sizeof(who));
	switch (r->verdict) {
	case WATCHDOG_SCRIPT_TIMEOUT:
		timed_script_text(r, who, sizeof(who));
		log_error("%s ran longer than script_timeout (%llu s) during %s and was killed with "
			  "every process of the step; raise 'script_timeout' in the recipe if it is "
			  "legitimately that slow", who, r->limit, step);
		break;
	case WATCHDOG_PROCESSES:
		log_error("%s%s reached the process limit: %llu processes were running (threads "
			  "counted); every process of the step was killed (%s)", step, who, r->count,
			  runlimits_hint(l, LIMIT_PROCESSES).s);
		break;
	case WATCHDOG_MEMORY:
		log_error("%s%s held more memory than its limit: %.1f MiB (its processes' resident "
			  "memory, its /tmp, /run, /dev/shm and /dev, SysV shared memory and message "
			  "queues); every process of the step was killed (%s)", step, who,
			  (double)r->count / (1 << 20), runlimits_hint(l, LIMIT_MEMORY).s);
		break;
	case WATCHDOG_STALLED:
		log_error("%s stalled: for %u s no process of it used CPU time, started or ended%s "
			  "(%llu processes, %u of them stopped by a signal), past script_timeout "
			  "(%llu s), the bound on time without progress; every process of the step "
			  "was killed (raise 'script_timeout' in the recipe if %s may legitimately "
			  "wait that long)", step, r->seconds, r->dpkg ? " while dpkg ran" : "",
			  r->count, r->stopped, r->limit, r->dpkg ? "dpkg" : "it");
		break;
	case WATCHDOG_STAGING:
		log_error("%s%s made the staging tree larger than its limit: %.1f MiB allocated; "
			  "every process of the step was killed (%s)", step, who,
			  (double)r->count / (1 << 20),
			  runlimits_hint(l, LIMIT_STAGING_SIZE).s);
		break;
	default:
		break;
	}
}
