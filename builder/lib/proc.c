#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "log.h"

static void child(const char *const *argv, const struct proc_opts *o, int out[2], int err[2])
{
	int in = o->stdin_fd >= 0 ? o->stdin_fd : open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	if (in < 0 || dup2(in, 0) < 0)
		_exit(127);
	if (o->out && dup2(out[1], 1) < 0)
		_exit(127);
	if (!o->out && dup2(2, 1) < 0)
		_exit(127);
	if (o->err && dup2(err[1], 2) < 0)
		_exit(127);
	if (o->cwd && chdir(o->cwd) < 0)
		_exit(127);
	/* exec takes char *const[] for historical reasons; it never writes through it. */
	if (o->env)
		execvpe(argv[0], (char *const *)(uintptr_t)argv, (char *const *)(uintptr_t)o->env);
	else
		execvp(argv[0], (char *const *)(uintptr_t)argv);
	_exit(127);
}

/* Read whatever is ready on the pipes, keeping at most `limit` bytes of each. */
static int pump(struct pollfd *pfd, struct buf *dst[2], size_t limit, int wait_ms)
{
	char chunk[8192];
	int open_fds = 0, i;
	ssize_t n;

	if (poll(pfd, 2, wait_ms) < 0 && errno != EINTR)
		return -errno;
	for (i = 0; i < 2; i++) {
		if (pfd[i].fd < 0)
			continue;
		if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(pfd[i].fd, chunk, sizeof(chunk));
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				continue;
			}
			if (dst[i]->len < limit)
				buf_add(dst[i], chunk,
					(size_t)n < limit - dst[i]->len ? (size_t)n : limit - dst[i]->len);
		}
		open_fds++;
	}
	return open_fds;
}

int proc_run(const char *const *argv, const struct proc_opts *o, int *status)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, wst = 0, timed_out = 0, interrupted = 0;
	struct buf sink[2] = { { 0 }, { 0 } };
	struct buf *dst[2];
	struct pollfd pfd[2];
	size_t limit = o->limit ? o->limit : (1u << 20);
	double deadline = o->timeout ? log_now() + o->timeout : 0;
	pid_t pid;

	if ((o->out && pipe2(out, O_CLOEXEC) < 0) || (o->err && pipe2(err, O_CLOEXEC) < 0))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child(argv, o, out, err);
	setpgid(pid, pid);
	if (out[1] >= 0)
		close(out[1]);
	if (err[1] >= 0)
		close(err[1]);
	pfd[0] = (struct pollfd){ .fd = out[0], .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = err[0], .events = POLLIN };
	dst[0] = o->out ? o->out : &sink[0];
	dst[1] = o->err ? o->err : &sink[1];
	for (;;) {
		int r = pump(pfd, dst, limit, 100);

		if (waitpid(pid, &wst, WNOHANG) == pid)
			break;
		if (deadline && log_now() > deadline && !timed_out) {
			timed_out = 1;
			kill(-pid, SIGKILL);
		}
		/* Its own process group: SIGINT from the terminal does not reach it, so end it. */
		if (err_interrupted() && !interrupted) {
			interrupted = 1;
			kill(-pid, SIGKILL);
		}
		if (r <= 0) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	/* Collect what is already buffered, but never wait on a pipe a daemon still holds. */
	while (pump(pfd, dst, limit, 0) > 0 && (pfd[0].revents || pfd[1].revents))
		;
	/* Daemons the child left behind in its group must not outlive it. */
	kill(-pid, SIGKILL);
	if (pfd[0].fd >= 0)
		close(pfd[0].fd);
	if (pfd[1].fd >= 0)
		close(pfd[1].fd);
	buf_release(&sink[0]);
	buf_release(&sink[1]);
	if (interrupted)
		return -MKI_E_INTERRUPTED;
	if (timed_out)
		*status = 124;
	else if (WIFEXITED(wst))
		*status = WEXITSTATUS(wst);
	else
		*status = 128 + WTERMSIG(wst);
	return 0;
}

char *proc_which(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char *cand;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		cand = xasprintf("%.*s/%s", (int)(end - p), p, name);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
	}
	return NULL;
}
