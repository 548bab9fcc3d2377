#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/proc.h"

/* Captured output, the exit status and the working directory. */
START_TEST(captures_and_status)
{
	const char *argv[] = { "sh", "-c", "pwd; echo oops >&2; exit 3", NULL };
	struct buf out = { 0 }, err = { 0 };
	struct proc_opts o = { .stdin_fd = -1, .out = &out, .err = &err, .cwd = "/usr" };
	int status = -1;

	ck_assert_int_eq(proc_run(argv, &o, &status), 0);
	ck_assert_int_eq(status, 3);
	ck_assert_str_eq(out.p, "/usr\n");
	ck_assert_str_eq(err.p, "oops\n");
	buf_release(&out);
	buf_release(&err);
}
END_TEST

/* The environment given replaces ours; stdin comes from the fd given, else /dev/null. */
START_TEST(env_and_stdin)
{
	const char *argv[] = { "sh", "-c", "echo \"$ONLY:${HOME-unset}\"; cat", NULL };
	const char *env[] = { "ONLY=1", "PATH=/usr/bin:/bin", NULL };
	struct buf out = { 0 };
	struct proc_opts o = { .stdin_fd = -1, .out = &out, .env = env };
	char file[] = "/tmp/mki-unit-proc.XXXXXX";
	int fd = mkstemp(file), status;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "fed\n", 4), 4);
	ck_assert_int_eq(proc_run(argv, &o, &status), 0);
	ck_assert_int_eq(status, 0);
	ck_assert_str_eq(out.p, "1:unset\n");
	buf_release(&out);
	lseek(fd, 0, SEEK_SET);
	o.stdin_fd = fd;
	ck_assert_int_eq(proc_run(argv, &o, &status), 0);
	ck_assert_str_eq(out.p, "1:unset\nfed\n");
	buf_release(&out);
	close(fd);
	unlink(file);
}
END_TEST

/* Output beyond the limit is drained, not kept, and the program still finishes normally. */
START_TEST(output_bounded)
{
	const char *argv[] = { "sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x; exit 0", NULL };
	struct buf out = { 0 };
	struct proc_opts o = { .stdin_fd = -1, .out = &out, .limit = 1000 };
	int status = -1;

	ck_assert_int_eq(proc_run(argv, &o, &status), 0);
	ck_assert_int_eq(status, 0);
	ck_assert_uint_eq(out.len, 1000);
	buf_release(&out);
}
END_TEST

/* A timeout kills the whole process group: 124, as timeout(1), and promptly. */
START_TEST(timeout_and_signal)
{
	const char *sleeper[] = { "sh", "-c", "sleep 30 & sleep 30", NULL };
	const char *killed[] = { "sh", "-c", "kill -9 $$", NULL };
	struct buf out = { 0 };
	struct proc_opts o = { .stdin_fd = -1, .out = &out, .timeout = 1 };
	double start = log_now();
	int status = -1;

	ck_assert_int_eq(proc_run(sleeper, &o, &status), 0);
	ck_assert_int_eq(status, 124);
	ck_assert_double_lt(log_now() - start, 10);
	o.timeout = 0;
	ck_assert_int_eq(proc_run(killed, &o, &status), 0);
	ck_assert_int_eq(status, 128 + 9);
	buf_release(&out);
}
END_TEST

/* A program that does not exist ran nowhere: 127 as a shell says; which finds nothing. */
START_TEST(missing_program)
{
	const char *argv[] = { "mki-no-such-program", NULL };
	struct buf err = { 0 };
	struct proc_opts o = { .stdin_fd = -1, .err = &err };
	char *p;
	int status = -1;

	ck_assert_int_eq(proc_run(argv, &o, &status), 0);
	ck_assert_int_eq(status, 127);
	buf_release(&err);
	ck_assert_ptr_null(proc_which("mki-no-such-program"));
	p = proc_which("sh");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p[0], '/');
	ck_assert_int_eq(access(p, X_OK), 0);
	free(p);
	p = proc_which("/bin/sh");
	ck_assert_str_eq(p, "/bin/sh");
	free(p);
	ck_assert_ptr_null(proc_which("/nonexistent/sh"));
	setenv("PATH", "/nonexistent:/bin", 1);
	p = proc_which("sh");
	ck_assert_str_eq(p, "/bin/sh");
	free(p);
}
END_TEST

Suite *proc_suite(void)
{
	Suite *s = suite_create("proc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, captures_and_status);
	tcase_add_test(tc, env_and_stdin);
	tcase_add_test(tc, output_bounded);
	tcase_add_test(tc, timeout_and_signal);
	tcase_add_test(tc, missing_program);
	suite_add_tcase(s, tc);
	return s;
}
