#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "configure/execprof.h"

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = fopen(path, "re"), *m = open_memstream(&text, &size);
	int c;

	while (f && (c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	if (f)
		fclose(f);
	return text;
}

static void empty_record(char *path)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

/*
 * A process that profiles itself as mkimage-exec does: the program (the child execprof_fork
 * returns 0 in) sleeps `ms` and exits `code`, or kills itself with `sig`. The wait status of the
 * profiled process (the parent, which exits as its child did).
 */
static int profiled(const char *record, const char *exe, int native, int ms, int code, int sig)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		if (execprof_fork(record, exe, native) != 0)
			_exit(99);
		nanosleep(&ts, NULL);
		if (sig) {
			signal(sig, SIG_DFL);
			raise(sig);
		}
		_exit(code);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

START_TEST(records_one_line_and_exits_as_the_program)
{
	char rec[] = "/tmp/mki-prof-XXXXXX", path[256], kind[16];
	unsigned long long wall = 0, cpu = 0;
	char *text;
	int st;

	empty_record(rec);
	st = profiled(rec, "/usr/bin/sed", 1, 50, 7, 0);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 7);
	text = slurp(rec);
	ck_assert_int_eq(sscanf(text, "%15s %llu %llu %255s", kind, &wall, &cpu, path), 4);
	ck_assert_str_eq(kind, "native");
	ck_assert_str_eq(path, "/usr/bin/sed");
	ck_assert_uint_ge(wall, 50000); /* it slept 50 ms: wall time, not CPU time */
	ck_assert_uint_lt(cpu, wall);
	ck_assert_ptr_eq(strchr(text, '\n'), text + strlen(text) - 1); /* one line */
	free(text);

	/* a second program appends; one killed by a signal kills its profiler the same way */
	st = profiled(rec, "/bin/true", 0, 0, 0, SIGTERM);
	ck_assert(WIFSIGNALED(st));
	ck_assert_int_eq(WTERMSIG(st), SIGTERM);
	text = slurp(rec);
	ck_assert_ptr_nonnull(strstr(text, "\nemulated "));
	ck_assert_ptr_nonnull(strstr(text, " /bin/true\n"));
	free(text);
	unlink(rec);
}
END_TEST

/* Whatever a script names its programs, the record stays one line of printable ASCII. */
START_TEST(paths_are_escaped_and_bounded)
{
	char rec[] = "/tmp/mki-prof-XXXXXX", rec2[] = "/tmp/mki-prof-XXXXXX";
	char long_path[EXECPROF_MAX_PATH + 50];
	char *text, *p;

	empty_record(rec);
	ck_assert(WIFEXITED(profiled(rec, "/tmp/a b\\c\n\xff", 0, 0, 0, 0)));
	text = slurp(rec);
	p = strrchr(text, ' ');
	ck_assert_str_eq(p, " /tmp/a\\x20b\\x5cc\\x0a\\xff\n");
	free(text);
	unlink(rec);

	empty_record(rec2);
	memset(long_path, 'x', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = 0;
	ck_assert(WIFEXITED(profiled(rec2, long_path, 0, 0, 0, 0)));
	text = slurp(rec2);
	p = strrchr(text, ' ') + 1;
	ck_assert_uint_eq(strlen(p), EXECPROF_MAX_PATH + 1); /* the path's first bytes, "\n" */
	ck_assert(!strncmp(p, long_path, EXECPROF_MAX_PATH));
	free(text);
	unlink(rec2);
}
END_TEST

/* A signal sent to the profiler reaches the program, which decides what it means. */
START_TEST(signals_are_forwarded)
{
	char rec[] = "/tmp/mki-prof-XXXXXX", ready;
	int pipefd[2], st = 0;
	pid_t pid;

	empty_record(rec);
	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		if (execprof_fork(rec, "/bin/daemon", 1) != 0)
			_exit(99);
		signal(SIGUSR1, _exit); /* _exit(SIGUSR1): the program's own answer */
		if (write(pipefd[1], "r", 1) != 1)
			_exit(98);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	ck_assert_int_eq(read(pipefd[0], &ready, 1), 1);
	ck_assert_int_eq(kill(pid, SIGUSR1), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), SIGUSR1);
	close(pipefd[0]);
	unlink(rec);
}
END_TEST

/* A record that is not a regular file, or is full, is left alone; the program runs regardless. */
START_TEST(record_refused_but_program_runs)
{
	char dir[] = "/tmp/mki-prof-XXXXXX", link[4200], target[4200], full[4200];
	struct stat sb;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(full, sizeof(full), "%s/full", dir);
	fd = open(target, O_CREAT | O_WRONLY, 0644);
	close(fd);
	ck_assert_int_eq(symlink(target, link), 0);
	fd = open(full, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_eq(ftruncate(fd, EXECPROF_MAX_BYTES), 0);
	close(fd);

	ck_assert_int_eq(WEXITSTATUS(profiled(link, "/bin/x", 1, 0, 3, 0)), 3);
	ck_assert_int_eq(stat(target, &sb), 0);
	ck_assert_int_eq(sb.st_size, 0);
	ck_assert_int_eq(WEXITSTATUS(profiled(full, "/bin/x", 1, 0, 4, 0)), 4);
	ck_assert_int_eq(stat(full, &sb), 0);
	ck_assert_int_eq(sb.st_size, EXECPROF_MAX_BYTES);
	ck_assert_int_eq(WEXITSTATUS(profiled(dir, "/bin/x", 1, 0, 5, 0)), 5);
	ck_assert_int_eq(WEXITSTATUS(profiled("/nonexistent/rec", "/bin/x", 1, 0, 6, 0)), 6);
	unlink(link);
	unlink(target);
	unlink(full);
	rmdir(dir);
}
END_TEST

Suite *execprof_run_suite(void)
{
	Suite *s = suite_create("execprof_run");
	TCase *tc = tcase_create("execprof_run");

	tcase_add_test(tc, records_one_line_and_exits_as_the_program);
	tcase_add_test(tc, paths_are_escaped_and_bounded);
	tcase_add_test(tc, signals_are_forwarded);
	tcase_add_test(tc, record_refused_but_program_runs);
	suite_add_tcase(s, tc);
	return s;
}
