/*
 * mkimage-exec's profile mode (execprof.h): run the program as a child, measure it, record it.
 * Linked into the static mkimage-exec only; it runs inside the tree, as whoever exec'd.
 */
#include "execprof.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/watchdog.h"

static volatile pid_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* Every signal whose disposition is not "ignore" goes to the child (which ignores the same). */
static void forward_signals(void)
{
	struct sigaction sa = { .sa_handler = forward, .sa_flags = SA_RESTART }, old;

	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD)
			continue;
		if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sig, &sa, NULL);
	}
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* /proc/PID/WHAT, NUL-terminated (as watchdog.c reads it; mkimage-exec links no module). */
static ssize_t read_proc(pid_t pid, const char *what, char *text, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, text, size - 1);
	close(fd);
	text[n > 0 ? n : 0] = 0;
	return n;
}

/*
 * The CPU time of the (zombie, not yet reaped) child itself, not of what it waited for: its
 * scheduler run time in ns (exact, main thread), else utime + stime in clock ticks (which a
 * program shorter than a tick mostly escapes).
 */
static uint64_t self_cpu_us(pid_t pid)
{
	char text[1024], *end;
	unsigned long long ns;
	unsigned long ut = 0, st = 0;
	long tick = sysconf(_SC_CLK_TCK);

	if (read_proc(pid, "schedstat", text, sizeof(text)) > 0 && sscanf(text, "%llu", &ns) == 1)
		return ns / 1000u;
	if (read_proc(pid, "stat", text, sizeof(text)) <= 0 || tick <= 0 ||
	    !(end = strrchr(text, ')')) ||
	    sscanf(end + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (uint64_t)(ut + st) * 1000000u / (uint64_t)tick;
}

/* One line, written at once with O_APPEND (so concurrent programs do not interleave). */
static void record(const char *file, const char *exe, int native, uint64_t wall, uint64_t cpu)
{
	char line[64 + 4 * EXECPROF_MAX_PATH];
	size_t n, i;
	struct stat sb;
	int fd = open(file, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size >= EXECPROF_MAX_BYTES) {
		close(fd);
		return;
	}
	n = (size_t)snprintf(line, sizeof(line), "%s %llu %llu ", native ? "native" : "emulated",
			     (unsigned long long)wall, (unsigned long long)cpu);
	for (i = 0; exe[i] && i < EXECPROF_MAX_PATH; i++) {
		unsigned char c = (unsigned char)exe[i];

		if (c > ' ' && c < 0x7f && c != '\\')
			line[n++] = (char)c;
		else
			n += (size_t)snprintf(line + n, sizeof(line) - n, "\\x%02x", c);
	}
	line[n++] = '\n';
	if (write(fd, line, n) < 0)
		n = 0; /* the profile is best effort: the program already ran */
	close(fd);
}

/* Leave as the child left: its exit status, or killed by its signal. */
static void exit_as(int status)
{
	sigset_t one;

	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		signal(sig, SIG_DFL);
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		prctl(PR_SET_DUMPABLE, 0); /* the child dumped its core already, if any */
		raise(sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 126);
}

int execprof_fork(const char *record_file, const char *exe, int native)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, chld;
	pid_t parent = getpid(), pid;
	sigset_t all, old;
	siginfo_t si;
	uint64_t start, wall, cpu;
	int status = 0;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	/* An ignored SIGCHLD would reap the child before its status is known; the child keeps it. */
	sigaction(SIGCHLD, &dfl, &chld);
	start = now_us();
	pid = fork();
	if (pid <= 0) {
		/* The child dies with its parent, as the program would have with its own pid. */
		if (pid == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent))
			_exit(126);
		sigaction(SIGCHLD, &chld, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return pid < 0 ? -1 : 0;
	}
	child_pid = pid;
	/* The watchdog looks through this name to our parent: -v must not change what it times. */
	prctl(PR_SET_NAME, WATCHDOG_PROFILER_COMM);
	forward_signals();
	sigprocmask(SIG_SETMASK, &old, NULL);
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	sigprocmask(SIG_BLOCK, &all, NULL);
	wall = now_us() - start;
	cpu = self_cpu_us(pid);
	child_pid = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	record(record_file, exe, native, wall, cpu);
	exit_as(status);
	return 0;
}
