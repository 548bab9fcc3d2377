/*
 * The rootless sandbox. The build process itself moves into a new user namespace (a helper that
 * stays outside writes the id maps, as newuidmap must run from the parent namespace); each target
 * command then runs in its own pid + mount namespace created with clone3, so its mounts vanish
 * with it and killing its pid 1 ends every process it started.
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "idshift.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "sandbox_int.h"
#include "seccomp.h"


static struct sandbox_info info;
static int entered;

const struct sandbox_info *sandbox_get(void)
{
	return entered ? &info : NULL;
}

int sandbox_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		ret = -errno ? -errno : -EIO;
	close(fd);
	return ret;
}

/* Decided once per process, so checking early and entering later say things once. */
static int choose_ids(const struct sandbox_opts *o)
{
	static int chosen, result;

	if (!chosen) {
		result = sandbox_idmap_choose(&info, o);
		chosen = 1;
	}
	return result;
}

int sandbox_check(const struct sandbox_opts *o)
{
	return entered ? 0 : choose_ids(o);
}

static void explain_unshare_failure(int err)
{
	log_error("cannot create a user namespace: %s", strerror(err));
	if (err == EINVAL)
		log_error("the build must enter its namespace before it starts threads");
	else
		log_error("user namespaces may be disabled: check 'sysctl user.max_user_namespaces', "
			  "'kernel.unprivileged_userns_clone' (Debian kernels before 5.10) and "
			  "'kernel.apparmor_restrict_unprivileged_userns' (Ubuntu >= 23.10)");
}

/* Unshare, let the helper map our ids, and wait for it. */
static int unshare_with_helper(void)
{
	int pipefd[2], wst = 0, ret = 0;
	pid_t self = getpid(), helper;
	char go = 'g';

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	helper = fork();
	if (helper < 0) {
		ret = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return ret;
	}
	if (helper == 0) {
		close(pipefd[1]);
		if (read(pipefd[0], &go, 1) != 1)
			_exit(1);
		_exit(sandbox_idmap_write(&info, self) ? 1 : 0);
	}
	close(pipefd[0]);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC) < 0) {
		ret = -errno;
		explain_unshare_failure(errno);
	} else if (write(pipefd[1], &go, 1) != 1) {
		ret = -EPIPE;
	}
	close(pipefd[1]);
	while (waitpid(helper, &wst, 0) < 0 && errno == EINTR)
		if (err_interrupted())
			kill(helper, SIGKILL); /* reaped by the next waitpid() */
	if (!ret && (!WIFEXITED(wst) || WEXITSTATUS(wst)))
		ret = -MKI_E_SANDBOX;
	return ret;
}

static void mount_binfmt(void)
{
	if (mount("binfmt_misc", BINFMT_DIR, "binfmt_misc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) == 0) {
		info.binfmt_private = 1;
		return;
	}
	log_debug("no private binfmt_misc (%s): kernel < 6.7?; host registrations will be used",
		  strerror(errno));
}

int sandbox_enter(const struct sandbox_opts *o)
{
	int ret;

	if (entered)
		return 0;
	ret = choose_ids(o);
	if (ret)
		return ret;
	ret = unshare_with_helper();
	if (ret) {
		if (ret == -MKI_E_SANDBOX)
			log_error("could not set up the id maps of the build namespace");
		return ret == -MKI_E_SANDBOX ? ret : -MKI_E_SANDBOX;
	}
	if (setresgid(0, 0, 0) || setresuid(0, 0, 0) ||
	    (info.ids != SANDBOX_IDS_SINGLE && setgroups(0, NULL))) {
		log_error("cannot become root in the build namespace: %s", strerror(errno));
		return -MKI_E_SANDBOX;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		log_error("cannot make mounts private in the build namespace: %s", strerror(errno));
		return -MKI_E_SANDBOX;
	}
	if (sethostname("localhost", 9) < 0)
		log_debug("sethostname: %s", strerror(errno));
	mount_binfmt();
	info.binfmt_dir = xstrdup(BINFMT_DIR);
	entered = 1;
	idshift_set_namespace(&info);
	log_debug("sandbox: ids %s, binfmt_misc %s",
		  info.ids == SANDBOX_IDS_FULL	 ? "full subordinate range"
		  : info.ids == SANDBOX_IDS_ROOT ? "identity (root)"
						 : "single",
		  info.binfmt_private ? "private" : "host");
	return 0;
}

/* --- running commands -------------------------------------------------------------------- */

#define TMPFS_BYTES_PER_INODE 16384 /* an inode costs memory size= does not count: bound both */

/* ",size=N,nr_inodes=N" for a tmpfs of the step: each is at most the step's memory limit. */
static void tmpfs_bound(const struct sandbox_cmd *c, char *out, size_t size)
{
	unsigned long long mem = c->watch ? c->watch->max_memory : 0, inodes;

	out[0] = 0;
	if (!mem)
		return;
	inodes = mem / TMPFS_BYTES_PER_INODE > 4096 ? mem / TMPFS_BYTES_PER_INODE : 4096;
	snprintf(out, size, ",size=%llu,nr_inodes=%llu", mem, inodes);
}

struct mnt {
	const char *src, *dir, *type;
	unsigned long flags;
	const char *data;
};

/* Mount onto `rel` inside the tree without following a symlink the tree might have there. */
static int mount_in(int rootfd, const struct mnt *m)
{
	char target[64];
	int fd, ret = 0;

	if (mkdirat(rootfd, m->dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(rootfd, m->dir, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
	if (mount(m->src, target, m->type, m->flags, m->data) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Bind `src` onto what `fd` (O_PATH or open) is, without resolving a path in the tree again. */
static int bind_onto_fd(const char *src, int fd)
{
	char target[64];

	snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
	return mount(src, target, NULL, MS_BIND, NULL) < 0 ? -errno : 0;
}

/* Bind a host device node onto an empty file in the tree's tmpfs /dev. */
static int bind_dev(int devfd, const char *name)
{
	char src[64];
	int fd, ret;

	snprintf(src, sizeof(src), "/dev/%s", name);
	fd = openat(devfd, name, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	ret = bind_onto_fd(src, fd);
	close(fd);
	return ret;
}

static int setup_dev(int rootfd, const char *bound)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", NULL };
	static const char *const optional[] = { "tty", "console", NULL };
	static const char *const links[][2] = { { "fd", "/proc/self/fd" },
		{ "stdin", "/proc/self/fd/0" }, { "stdout", "/proc/self/fd/1" },
		{ "stderr", "/proc/self/fd/2" }, { "ptmx", "pts/ptmx" } };
	char pts_opts[80], shm_opts[160];
	struct mnt pts = { "devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, pts_opts };
	struct mnt shm = { "tmpfs", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, shm_opts };
	int devfd, ret = 0, i;

	snprintf(pts_opts, sizeof(pts_opts), "newinstance,ptmxmode=0666,mode=0620");
	if (info.ids != SANDBOX_IDS_SINGLE)
		snprintf(pts_opts + strlen(pts_opts), sizeof(pts_opts) - strlen(pts_opts),
			 ",gid=%lu", (unsigned long)idshift_tree_gid(5));
	snprintf(shm_opts, sizeof(shm_opts), "mode=1777,uid=%lu,gid=%lu%s",
		 (unsigned long)idshift_tree_uid(0), (unsigned long)idshift_tree_gid(0), bound);

	devfd = openat(rootfd, "dev", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (devfd < 0)
		return -errno;
	for (i = 0; !ret && nodes[i]; i++)
		ret = bind_dev(devfd, nodes[i]);
	for (i = 0; !ret && optional[i]; i++)
		if (bind_dev(devfd, optional[i]))
			unlinkat(devfd, optional[i], 0);
	for (i = 0; !ret && i < (int)(sizeof(links) / sizeof(links[0])); i++)
		if (symlinkat(links[i][1], devfd, links[i][0]) < 0)
			ret = -errno;
	close(devfd);
	if (!ret)
		ret = mount_in(rootfd, &pts);
	if (!ret)
		ret = mount_in(rootfd, &shm);
	return ret;
}

/*
 * A host directory, read-only, onto an existing directory of the tree. The remount goes through
 * the new mount (a fresh fd) and keeps the flags the namespace may not clear.
 */
static int bind_ro(int rootfd, const char *src, const char *dir)
{
	char target[64];
	int fd = openat(rootfd, dir, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC), ret = 0;
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;
	struct statvfs sv;

	if (fd < 0)
		return -errno;
	ret = bind_onto_fd(src, fd);
	close(fd);
	fd = ret ? -1 : openat(rootfd, dir, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (!ret && (fd < 0 || fstatvfs(fd, &sv) < 0))
		ret = -errno;
	if (!ret) {
		flags |= (sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0) |
			 (sv.f_flag & ST_NOATIME ? MS_NOATIME : 0) |
			 (sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0) |
			 (sv.f_flag & ST_RELATIME ? MS_RELATIME : 0);
		snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
		if (mount(NULL, target, NULL, flags, NULL) < 0)
			ret = -errno;
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/* A host file, writable, onto an existing regular file of the tree (never through a symlink). */
static int bind_rw_file(int rootfd, const char *src, const char *dst)
{
	int fd = openat(rootfd, dst, O_PATH | O_NOFOLLOW | O_CLOEXEC), ret;
	struct stat sb;

	if (fd < 0)
		return -errno;
	ret = fstat(fd, &sb) < 0 ? -errno : !S_ISREG(sb.st_mode) ? -EINVAL : bind_onto_fd(src, fd);
	close(fd);
	return ret;
}

static int setup_mounts(const struct sandbox_cmd *c)
{
	const char *root = c->root;
	char owned[160], tmp[160], bound[64];
	const struct mnt m[] = {
		{ "proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL },
		{ "tmpfs", "dev", "tmpfs", MS_NOSUID, owned },
		{ "tmpfs", "run", "tmpfs", MS_NOSUID | MS_NODEV, owned },
		{ "tmpfs", "tmp", "tmpfs", MS_NOSUID | MS_NODEV, tmp },
	};
	int rootfd, ret = 0;
	size_t i;

	/* Owned by the command's root, or it could not create anything in them. */
	tmpfs_bound(c, bound, sizeof(bound));
	snprintf(owned, sizeof(owned), "mode=0755,uid=%lu,gid=%lu%s",
		 (unsigned long)idshift_tree_uid(0), (unsigned long)idshift_tree_gid(0), bound);
	snprintf(tmp, sizeof(tmp), "mode=1777,uid=%lu,gid=%lu%s", (unsigned long)idshift_tree_uid(0),
		 (unsigned long)idshift_tree_gid(0), bound);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	for (i = 0; !ret && i < sizeof(m) / sizeof(m[0]); i++) {
		ret = mount_in(rootfd, &m[i]);
		if (ret)
			log_error("sandbox: cannot mount %s on '%s/%s': %s", m[i].type, root, m[i].dir,
				  strerror(-ret));
		else if (i == 1 && (ret = setup_dev(rootfd, bound)))
			log_error("sandbox: cannot populate '%s/dev': %s", root, strerror(-ret));
	}
	if (!ret && c->bind_src && (ret = bind_ro(rootfd, c->bind_src, c->bind_dir)))
		log_error("sandbox: cannot bind '%s' onto '%s/%s': %s", c->bind_src, root,
			  c->bind_dir, strerror(-ret));
	if (!ret && c->bind_file_src && (ret = bind_rw_file(rootfd, c->bind_file_src,
							    c->bind_file_dst)))
		log_error("sandbox: cannot bind '%s' onto '%s/%s': %s", c->bind_file_src, root,
			  c->bind_file_dst, strerror(-ret));
	close(rootfd);
	return ret;
}

/* The command itself, root of its nested namespace (the tree is already "/"): never returns. */
static void exec_command(const struct sandbox_cmd *c, int outfd, int statfd)
{
	extern char **environ;
	const char *cwd = c->cwd ? c->cwd : c->root ? "/" : NULL;
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC), ret;

	setsid();
	if (cwd && chdir(cwd) < 0) {
		dprintf(outfd, "mkimage: cannot change to '%s': %s\n", cwd, strerror(errno));
		_exit(127);
	}
	if (in < 0 || dup2(in, 0) < 0 || dup2(outfd, 1) < 0 || dup2(outfd, 2) < 0)
		_exit(127);
	/* The status pipe's write end: all the command can do with it is write lines to us. */
	if (statfd >= 0 && (statfd == SANDBOX_STATUS_FD ? fcntl(statfd, F_SETFD, 0)
							: dup2(statfd, SANDBOX_STATUS_FD)) < 0)
		_exit(127);
	/* Nothing of mkimage's (caches, locks, the image) may stay reachable from the command. */
	if (syscall(SYS_close_range, statfd >= 0 ? SANDBOX_STATUS_FD + 1U : 3U, ~0U, 0U) < 0)
		_exit(127);
	if (c->root && (ret = seccomp_lockdown()) < 0) {
		dprintf(2, "mkimage: cannot lock the sandbox down: %s\n", strerror(-ret));
		_exit(125);
	}
	environ = (char **)(uintptr_t)c->env;
	execvp(c->argv[0], (char *const *)(uintptr_t)c->argv);
	dprintf(2, "mkimage: cannot execute '%s': %s\n", c->argv[0], strerror(errno));
	_exit(127);
}

/* A new network namespace has only a loopback, and it starts down. */
static void loopback_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			log_debug("sandbox: cannot bring up lo: %s", strerror(errno));
	}
	close(fd);
}

/* Append the name of host pid `pid` (from /proc/PID/comm) to `out`, bounded. */
static void add_comm(char *out, size_t size, const char *pid)
{
	char path[64], name[32] = "?";
	size_t len = strlen(out);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (n = read(fd, name, sizeof(name) - 1)) > 0)
		name[n - (name[n - 1] == '\n')] = 0;
	if (fd >= 0)
		close(fd);
	if (len + strlen(name) + 6 < size)
		snprintf(out + len, size - len, "%s'%s'", len ? ", " : "", name);
	else if (len + 6 < size && !strstr(out, "..."))
		snprintf(out + len, size - len, ", ...");
}

/*
 * After the command: what it left running. Orphans are re-parented to this init, so they are our
 * children; the ones that already exited are reaped first (zombies are not left running). The
 * /proc read is this pid namespace's own (mounted by ns_init), so pids and names agree. The
 * names are a hint: a daemon caught between fork and exec still has its parent's name.
 */
static void note_leftovers(char *out, size_t size)
{
	char buf[1024], *p, *end;
	ssize_t n = 0;
	int fd;

	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	out[0] = 0;
	fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = 0;
	for (p = buf; *p; p = end) {
		end = p + strcspn(p, " \n");
		if (end > p) {
			char pid[24];

			snprintf(pid, sizeof(pid), "%.*s", (int)(end - p), p);
			add_comm(out, size, pid);
		}
		end += strspn(end, " \n");
	}
	/* A daemon still forking may be nobody's child for a moment: ask the kernel too. */
	if (!out[0] && kill(-1, 0) == 0)
		snprintf(out, size, "processes");
}

/* --- watchdog: bounds on the command while it runs (watchdog.h) --- */

/*
 * The step's /proc and tree, for the watchdog. A command without a root (an outside hook) has
 * its own /proc (ns_init mounts it) but no tree to walk: root_fd -1.
 */
static void watch_fds(const struct sandbox_cmd *c, int *proc_fd, int *root_fd)
{
	*proc_fd = *root_fd = -1;
	if (!c->watch)
		return;
	if (!c->root) {
		*proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		/* This init already lives in the tree (confine_root): its "/" is the tree. */
		*root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		*proc_fd = *root_fd >= 0 ? openat(*root_fd, "proc", O_RDONLY | O_DIRECTORY |
						  O_NOFOLLOW | O_CLOEXEC) : -1;
	}
	if (*proc_fd < 0)
		log_debug("sandbox: no /proc for the watchdog: %s", strerror(errno));
}

/*
 * Wait for the command, woken by SIGCHLD (blocked in `chld`) or every WATCH_TICK_MS to let the
 * watchdog look at the step. Its wait status, or -1 when it was lost.
 */
#define WATCH_TICK_MS 200
static int wait_command(const struct sandbox_cmd *c, pid_t cmd, const sigset_t *chld,
			struct sandbox_report *rep)
{
	struct timespec tick = { 0, WATCH_TICK_MS * 1000000L };
	struct watchdog w;
	int proc_fd, root_fd, wst = 0, found = 0;
	double next = log_now() + WATCH_TICK_MS / 1000.0;
	pid_t pid;

	watch_fds(c, &proc_fd, &root_fd);
	if (proc_fd >= 0)
		watchdog_init(&w, proc_fd, root_fd, cmd, c->watch);
	while (!found) {
		pid = waitpid(-1, &wst, WNOHANG);
		if (pid < 0 && errno != EINTR)
			break;
		found = pid == cmd;
		if (pid != 0)
			continue; /* reap every exited orphan before sleeping */
		if (proc_fd >= 0 && !rep->watch.verdict && log_now() >= next) {
			watchdog_tick(&w, &rep->watch);
			next = log_now() + WATCH_TICK_MS / 1000.0;
		}
		sigtimedwait(chld, NULL, &tick);
	}
	if (found && proc_fd >= 0 && !rep->watch.verdict)
		watchdog_finish(&w, &rep->watch, !WIFEXITED(wst) || WEXITSTATUS(wst));
	if (proc_fd >= 0)
		close(proc_fd);
	if (root_fd >= 0)
		close(root_fd);
	return found ? wst : -1;
}

/*
 * The step's own IPC namespace (sandbox_run) starts with the kernel's defaults: SysV shared
 * memory up to the whole of RAM and 32000 message queues. Bound them by the memory limit (the
 * watchdog counts what they hold). Before the pivot, /proc/sys is the build's (the values are
 * the writer's IPC namespace's); a kernel that refuses leaves the defaults and the watchdog.
 */
static void bound_ipc(unsigned long long mem)
{
	long page = sysconf(_SC_PAGESIZE);
	char v[32];
	int ret;

	if (!mem || page <= 0)
		return;
	snprintf(v, sizeof(v), "%llu", mem);
	ret = sandbox_write_file("/proc/sys/kernel/shmmax", v);
	snprintf(v, sizeof(v), "%llu", mem / (unsigned long long)page);
	if (!ret)
		ret = sandbox_write_file("/proc/sys/kernel/shmall", v);
	if (!ret)
		ret = sandbox_write_file("/proc/sys/kernel/msgmni", "64");
	if (ret)
		log_debug("sandbox: cannot bound the step's SysV IPC: %s", strerror(-ret));
}

/*
 * pid 1 of the command's namespace: mount, start the command, reap everything, exit with it.
 * `rep` is shared with the parent (a MAP_SHARED page).
 */
/* Close every fd from 3 on but `a` and `b` (-1: none). */
static void close_all_but(int a, int b)
{
	int keep[2] = { a < b ? a : b, a < b ? b : a };
	unsigned from = 3;

	for (int i = 0; i < 2; i++) {
		if (keep[i] < (int)from)
			continue;
		if (keep[i] > (int)from)
			syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0U);
		from = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0U);
}

static void ns_init(const struct sandbox_cmd *c, int outfd, int statfd,
		    struct sandbox_report *rep)
{
	int wst = 0, status = 0;
	sigset_t chld, old;
	pid_t cmd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/*
	 * This init lives in the tree with the command, so it holds nothing of mkimage's either (the
	 * command cannot open /proc/1/fd, being in a nested user namespace; this makes sure).
	 */
	close_all_but(outfd, statfd);
	log_file_forget(); /* its fd is closed: the number may be reused by what this opens */
	if (!c->network)
		loopback_up();
	if (c->watch)
		bound_ipc(c->watch->max_memory);
	if (c->root && (setup_mounts(c) || confine_root(c->root)))
		_exit(125);
	/* confine_fork() finds the command in /proc: on the host filesystem too, it must be ours. */
	if (!c->root && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		log_error("sandbox: cannot mount a /proc for '%s': %s", c->argv[0], strerror(errno));
		_exit(125);
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	cmd = confine_fork(&info, !c->root);
	if (cmd < 0)
		_exit(125);
	if (cmd == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (c->root && c->watch)
			watchdog_limit_self(c->watch, sandbox_binfmt_emulates());
		exec_command(c, outfd, statfd);
	}
	close(outfd);
	if (statfd >= 0)
		close(statfd);
	wst = wait_command(c, cmd, &chld, rep);
	if (wst >= 0) {
		status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
		rep->signal = WIFSIGNALED(wst) ? WTERMSIG(wst) : 0;
	} else {
		status = 125;
	}
	note_leftovers(rep->leftover, sizeof(rep->leftover));
	/* Exiting kills whatever the command left behind in this pid namespace. */
	_exit(status);
}

struct clone_args_v0 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* Keep only the last `limit` bytes of `b` (plus a little slack, to move rarely). */
static void tail_add(struct buf *b, const char *p, size_t n, size_t limit)
{
	buf_add(b, p, n);
	if (b->len > 2 * limit) {
		memmove(b->p, b->p + b->len - limit, limit);
		b->len = limit;
		b->p[limit] = 0;
	}
}

static void tail_trim(struct buf *b, size_t limit)
{
	if (b->len > limit) {
		memmove(b->p, b->p + b->len - limit, limit);
		b->len = limit;
		b->p[limit] = 0;
	}
}

/* The status pipe's reader: whole lines of at most SANDBOX_STATUS_LINE bytes, the rest dropped. */
struct status_reader {
	char line[SANDBOX_STATUS_LINE + 1];
	size_t len;
	int skipping; /* inside a line that was too long */
};

static void status_feed(const struct sandbox_cmd *c, struct status_reader *r, const char *p,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			r->line[r->len] = 0;
			if (!r->skipping)
				c->on_status(c->status_ctx, r->line);
			r->len = 0;
			r->skipping = 0;
		} else if (r->len < SANDBOX_STATUS_LINE) {
			r->line[r->len++] = p[i];
		} else {
			r->skipping = 1;
		}
	}
}

/* Read what is there on `*fd` (output or status); close it at its end. */
static void pump(const struct sandbox_cmd *c, int *fd, int is_status, struct buf *out,
		 size_t limit, struct status_reader *sr)
{
	char chunk[8192];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n > 0 && is_status) {
		status_feed(c, sr, chunk, (size_t)n);
	} else if (n > 0) {
		tail_add(out, chunk, (size_t)n, limit);
		if (c->log_as)
			log_output(c->log_as, chunk, (size_t)n);
	} else if (n == 0 || errno != EINTR) {
		close(*fd);
		*fd = -1;
	}
}

/* Pump output until the namespace's init exits; kill it on timeout or interruption. */
static int wait_ns(pid_t pid, int fd, int statfd, const struct sandbox_cmd *c, int *status)
{
	struct buf sink = { 0 };
	struct buf *out = c->out ? c->out : &sink;
	struct status_reader *sr = statfd >= 0 ? xcalloc(1, sizeof(*sr)) : NULL;
	size_t limit = c->limit ? c->limit : 65536;
	double deadline = c->timeout ? log_now() + c->timeout : 0;
	int wst = 0, timed_out = 0, interrupted = 0, done = 0;

	while (!done || fd >= 0 || statfd >= 0) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = statfd, .events = POLLIN } };

		if ((fd >= 0 || statfd >= 0) && poll(p, 2, 100) > 0) {
			if (fd >= 0 && p[0].revents)
				pump(c, &fd, 0, out, limit, sr);
			if (statfd >= 0 && p[1].revents)
				pump(c, &statfd, 1, out, limit, sr);
		} else if (fd < 0 && statfd < 0) {
			/* Output is closed: the namespace's init exits within moments. */
			struct timespec ts = { 0, 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		if (c->progress)
			log_progress_tick(c->progress);
		if (!done && waitpid(pid, &wst, WNOHANG) == pid)
			done = 1;
		if (!done && deadline && log_now() > deadline && !timed_out) {
			timed_out = 1;
			kill(pid, SIGKILL);
		}
		if (!done && err_interrupted() && !interrupted) {
			interrupted = 1;
			kill(pid, SIGKILL);
		}
	}
	if (c->log_as)
		log_output(c->log_as, NULL, 0);
	tail_trim(out, limit);
	buf_release(&sink);
	free(sr);
	if (interrupted)
		return -MKI_E_INTERRUPTED;
	*status = timed_out ? 124 : WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
	return 0;
}

int sandbox_run(const struct sandbox_cmd *c, int *status)
{
	/* A fresh IPC namespace: no SysV or POSIX object outlives the step that made it. */
	struct clone_args_v0 ca = { .flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC,
				    .exit_signal = SIGCHLD };
	struct sandbox_report *rep;
	int pipefd[2], statfd[2] = { -1, -1 }, ret;
	long pid;

	if (!c->network)
		ca.flags |= CLONE_NEWNET;
	if (!entered) {
		log_error("internal: sandbox_run before sandbox_enter");
		return -MKI_E_SANDBOX;
	}
	/* The namespace's init writes what it learns here: it shares no memory with us otherwise. */
	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rep == MAP_FAILED)
		return -errno;
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		ret = -errno;
		goto out;
	}
	if (c->on_status && pipe2(statfd, O_CLOEXEC) < 0) {
		ret = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		goto out;
	}
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		ret = -errno;
		log_error("cannot create a pid namespace for '%s': %s", c->argv[0], strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		if (statfd[0] >= 0) {
			close(statfd[0]);
			close(statfd[1]);
		}
		goto out;
	}
	if (pid == 0) {
		close(pipefd[0]);
		if (statfd[0] >= 0)
			close(statfd[0]); /* the read end never enters the namespace */
		ns_init(c, pipefd[1], statfd[1], rep);
	}
	close(pipefd[1]);
	if (statfd[1] >= 0)
		close(statfd[1]);
	ret = wait_ns((pid_t)pid, pipefd[0], statfd[0], c, status);
	if (!ret && *status == 125)
		log_debug("'%s' exited 125 (also what a failed sandbox set-up returns)", c->argv[0]);
	if (!ret && c->report)
		*c->report = *status == 124 ? (struct sandbox_report){ 0 } : *rep;
out:
	munmap(rep, sizeof(*rep));
	return ret;
}

const char *sandbox_tail(const char *text, unsigned lines)
{
	const char *p;
	size_t len;

	if (!text)
		return "";
	len = strlen(text);
	while (len && text[len - 1] == '\n')
		len--;
	if (!lines)
		return text + len;
	for (p = text + len; p > text; p--)
		if (p[-1] == '\n' && !--lines)
			return p;
	return text;
}
