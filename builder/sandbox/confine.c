/*
 * Confining a command (see confine.h). The sequence follows bubblewrap and runc: bind the new
 * root onto itself so it is a mount point, pivot_root(".", ".") stacks the old root on it, and a
 * lazy unmount through a handle on the old root drops it, so no path and no chroot escape leads
 * back to the host. The command then unshares a user namespace: mounts made here are locked for
 * it (no remount of a read-only bind, no unmount), and its ids are the nested map.
 */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "idshift.h"
#include "lib/log.h"
#include "userns.h"

static int pivot_into(const char *root)
{
	int oldfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), ret = 0;
	int newfd = oldfd < 0 ? -1 : open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (newfd < 0 || fchdir(newfd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    fchdir(oldfd) < 0)
		ret = -errno;
	/* The old root now sits on top of the tree: keep its unmount from propagating, drop it. */
	if (!ret && (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0 ||
		     umount2(".", MNT_DETACH) < 0 || chdir("/") < 0))
		ret = -errno;
	if (oldfd >= 0)
		close(oldfd);
	if (newfd >= 0)
		close(newfd);
	return ret;
}

/* bubblewrap's list: proc files that reach the whole kernel, whatever the namespace. */
static int proc_knobs_readonly(void)
{
	static const char *const knobs[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
					     "/proc/bus" };
	unsigned long ro = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
	size_t i;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		if (access(knobs[i], F_OK) < 0 && errno == ENOENT)
			continue;
		if (mount(knobs[i], knobs[i], NULL, MS_BIND | MS_REC, NULL) < 0 ||
		    mount(NULL, knobs[i], NULL, ro, NULL) < 0) {
			log_error("sandbox: cannot make '%s' read-only: %s", knobs[i], strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/*
 * The build host's kernel command line is not the device's: a script that reads it (Debian's
 * u-boot-update takes root= from it when fstab names none) would write the host's into the
 * tree, and two hosts would build two images. It reads as empty.
 */
static int proc_cmdline_empty(void)
{
	/* Not MS_NODEV: the file in its place is /dev/null, which reads as empty. */
	unsigned long ro = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC;

	if (mount("/dev/null", "/proc/cmdline", NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, "/proc/cmdline", NULL, ro, NULL) < 0) {
		log_error("sandbox: cannot hide the host's '/proc/cmdline': %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int confine_root(const char *root)
{
	int ret = 0;

	if (mount(root, root, NULL, MS_BIND | MS_REC, NULL) < 0)
		ret = -errno;
	if (!ret)
		ret = pivot_into(root);
	if (ret) {
		log_error("sandbox: cannot make '%s' the root: %s", root, strerror(-ret));
		return ret;
	}
	ret = proc_knobs_readonly();
	return ret ? ret : proc_cmdline_empty();
}

static int write_map(pid_t pid, const char *file, const char *text)
{
	char path[64];
	size_t len = strlen(text);
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		ret = errno ? -errno : -EIO;
	close(fd);
	if (ret)
		log_error("sandbox: cannot write '%s' ('%.*s'): %s", path, (int)strcspn(text, "\n"),
			  text, strerror(-ret));
	return ret;
}

static int write_maps(const struct sandbox_info *si, pid_t pid, int host)
{
	char *uids = idshift_nested_map(si, 0, host), *gids = idshift_nested_map(si, 1, host);
	int ret = 0;

	if (si->ids == SANDBOX_IDS_SINGLE)
		ret = write_map(pid, "setgroups", "deny");
	if (!ret)
		ret = write_map(pid, "uid_map", uids);
	if (!ret)
		ret = write_map(pid, "gid_map", gids);
	free(uids);
	free(gids);
	return ret;
}

struct clone_args_v0 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* In the child: wait for the maps, then be root of the new namespace. */
static void become_root(const struct sandbox_info *si, int syncfd)
{
	char go;

	if (read(syncfd, &go, 1) != 1)
		_exit(125);
	close(syncfd);
	if (setresgid(0, 0, 0) || setresuid(0, 0, 0) ||
	    (si->ids != SANDBOX_IDS_SINGLE && setgroups(0, NULL))) {
		dprintf(2, "mkimage: cannot become root in the command's namespace: %s\n",
			strerror(errno));
		_exit(125);
	}
}

pid_t confine_fork(const struct sandbox_info *si, int host)
{
	struct clone_args_v0 ca = { .flags = CLONE_NEWUSER | CLONE_NEWNS, .exit_signal = SIGCHLD };
	int sync[2], ret = 0;
	long pid;

	if (pipe2(sync, O_CLOEXEC) < 0)
		return -errno;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0) {
		close(sync[1]);
		become_root(si, sync[0]);
		return 0;
	}
	close(sync[0]);
	if (pid < 0) {
		ret = -errno;
		log_error("sandbox: cannot create the command's user namespace: %s", strerror(errno));
	} else if (!write_maps(si, (pid_t)pid, host) && write(sync[1], "g", 1) == 1) {
		ret = (int)pid;
	}
	/* On failure the child reads end of file and exits 125: reaped by the caller's wait loop. */
	close(sync[1]);
	return ret ? ret : -EPERM;
}
