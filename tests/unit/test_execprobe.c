#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/execprobe.h"
#include "lib/execprobe_internal.h"

/* The probe program must be a real i386 executable that exits 0: run it through qemu-i386. */
START_TEST(probe_image_runs_under_qemu)
{
	char path[] = "/tmp/mki-probe-XXXXXX", cmd[128];
	unsigned len;
	const unsigned char *img = execprobe_ia32_image(&len);
	int fd = mkstemp(path), st;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, img, len), (ssize_t)len);
	close(fd);
	ck_assert_int_eq(chmod(path, 0755), 0);
	if (access("/usr/bin/qemu-i386-static", X_OK) == 0) {
		snprintf(cmd, sizeof(cmd), "/usr/bin/qemu-i386-static %s", path);
		st = system(cmd);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "probe under qemu: %d", st);
	}
	snprintf(cmd, sizeof(cmd), "file -b %s | grep -q 'ELF 32-bit LSB executable, Intel 80386'",
		 path);
	st = system(cmd);
	unlink(path);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "file(1) does not see an i386 ELF");
}
END_TEST

/* The answer matches what the kernel does with a real i386 program run directly. */
START_TEST(probe_agrees_with_kernel)
{
	char path[] = "/tmp/mki-probe-XXXXXX";
	unsigned len;
	const unsigned char *img = execprobe_ia32_image(&len);
	int fd = mkstemp(path), st, direct;
	pid_t pid;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, img, len), (ssize_t)len);
	close(fd);
	ck_assert_int_eq(chmod(path, 0755), 0);
	pid = fork();
	if (pid == 0) {
		execl(path, path, (char *)NULL);
		_exit(99);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	unlink(path);
	direct = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	ck_assert_int_eq(execprobe_ia32(), direct);
}
END_TEST

Suite *execprobe_suite(void)
{
	Suite *s = suite_create("execprobe");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, probe_image_runs_under_qemu);
	tcase_add_test(tc, probe_agrees_with_kernel);
	suite_add_tcase(s, tc);
	return s;
}
