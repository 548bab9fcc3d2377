#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/seccomp.h"

/* Each check in a child: the filter stays with it. Exit code = first failed check's number. */
static int expect_errno(long r, int want)
{
	return r == -1 && errno == want;
}

static int locked_child(void)
{
	char dir[] = "/tmp/mki-seccomp-XXXXXX", path[64];
	char c = 'x';
	int fd;

	if (seccomp_lockdown())
		return 1;
	if (!expect_errno(mount("none", "/tmp", "tmpfs", 0, NULL), EPERM))
		return 2;
	if (!expect_errno(unshare(CLONE_NEWUSER), EPERM) || !expect_errno(unshare(CLONE_NEWNS), EPERM))
		return 3;
	if (!expect_errno(chroot("/"), EPERM))
		return 4;
	if (!expect_errno(syscall(__NR_keyctl, 0, 0, 0, 0, 0), EPERM))
		return 5;
	if (!expect_errno(syscall(435 /* clone3 */, NULL, 0), ENOSYS))
		return 6;
	if (!expect_errno(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM))
		return 7;
	if (!expect_errno(ioctl(0, TIOCSTI, &c), EPERM))
		return 8;
	if (!expect_errno(syscall(425 /* io_uring_setup */, 1, NULL), EPERM))
		return 9;
	if (!expect_errno(syscall(__NR_getpid | 0x40000000), ENOSYS)) /* x32 */
		return 10;
	if (!expect_errno(syscall(__NR_pivot_root, "/", "/"), EPERM))
		return 11;
	if (!expect_errno(syscall(__NR_personality, 0x0040000 /* ADDR_NO_RANDOMIZE */), EPERM))
		return 12;
	/* open_tree_attr: a kernel too old for it says ENOSYS without the filter, EPERM with it */
	if (!expect_errno(syscall(467, -1, "", 0, NULL, 0), EPERM))
		return 12;
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0 ||
	    prctl(PR_CAPBSET_READ, CAP_SYS_CHROOT, 0, 0, 0) != 0 ||
	    prctl(PR_CAPBSET_READ, CAP_CHOWN, 0, 0, 0) != 1)
		return 13;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return 14;
	/* ordinary life goes on: files, personality query, fork + exec */
	if (!mkdtemp(dir))
		return 15;
	strcpy(path, dir);
	strcat(path, "/f");
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1 || close(fd) || unlink(path) || rmdir(dir))
		return 16;
	if (syscall(__NR_personality, 0xffffffff) < 0)
		return 17;
	if (system("exit 0") != 0)
		return 18;
	return 0;
}

START_TEST(lockdown_refuses_kernel_interfaces)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(locked_child());
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "check %d failed",
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}
END_TEST

#if defined(__x86_64__)
/* Whether this kernel has the i386 entry at all (ia32 emulation off: int 0x80 is SIGSEGV). */
static int has_int80(void)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		long r;

		signal(SIGSEGV, SIG_DFL); /* no sanitizer report for the expected fault */
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L /* getpid */) : "memory");
		_exit(r == getpid() ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}
#endif

/* int 0x80 (the i386 ABI) from a 64-bit process is filtered by its own numbers. */
START_TEST(i386_entry_is_filtered)
{
#if defined(__x86_64__)
	int st = 0;
	pid_t pid;

	if (!has_int80())
		return; /* no i386 entry in this kernel: nothing to go around the filter with */
	pid = fork();
	if (pid == 0) {
		long r;

		if (seccomp_lockdown())
			_exit(1);
		/* i386 chroot is 61 */
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(61L), "b"("/") : "memory");
		_exit(r == -EPERM || r == -ENOSYS ? 0 : 2);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "int 0x80 chroot was not refused");
#endif
}
END_TEST

Suite *seccomp_suite(void)
{
	Suite *s = suite_create("seccomp");
	TCase *tc = tcase_create("seccomp");

	tcase_add_test(tc, lockdown_refuses_kernel_interfaces);
	tcase_add_test(tc, i386_entry_is_filtered);
	suite_add_tcase(s, tc);
	return s;
}
