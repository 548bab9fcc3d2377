#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"

/*
 * Callers log and then return -errno. With stderr on a file (not a terminal) isatty() sets errno
 * to ENOTTY; the logger must hand the caller's errno back unchanged, at every level.
 */
START_TEST(log_preserves_errno)
{
	int fd = open("/dev/null", O_WRONLY), saved = dup(2);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	errno = EACCES;
	log_error("error with %s", "context");
	ck_assert_int_eq(errno, EACCES);
	errno = ENOSPC;
	log_warn("warning");
	ck_assert_int_eq(errno, ENOSPC);
	errno = EROFS;
	log_debug("below the threshold");
	ck_assert_int_eq(errno, EROFS);
	dup2(saved, 2);
	close(fd);
	close(saved);
}
END_TEST

/* stderr into a temp file while `fn` runs; returns what was written (static buffer). */
static const char *capture(void (*fn)(void))
{
	static char out[512];
	char path[] = "/tmp/mki-unit-log.XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(dup2(fd, 2), 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	out[n > 0 ? n : 0] = 0;
	return out;
}

static int got;

static void log_enoent(void)
{
	errno = EPERM;
	got = log_errno(-ENOENT, "cannot open '%s': %m", "x");
	ck_assert_int_eq(errno, EPERM);
}

static void log_mki(void)
{
	errno = EPERM;
	got = log_errno(-MKI_E_RESOLVE, "no %s", "plan");
	ck_assert_int_eq(errno, EPERM);
}

/* One statement logs and returns the code; %m tells the code's errno, the caller's is kept. */
START_TEST(log_errno_returns_the_code)
{
	ck_assert_str_eq(capture(log_enoent),
			 "mkimage: error: cannot open 'x': No such file or directory\n");
	ck_assert_int_eq(got, -ENOENT);
	ck_assert_str_eq(capture(log_mki), "mkimage: error: no plan\n");
	ck_assert_int_eq(got, -MKI_E_RESOLVE);
}
END_TEST

static void log_capped(void)
{
	enum log_level old = log_cap_severity(LOG_INFO);

	log_error("refused");
	log_warn("retrying");
	ck_assert_int_eq(log_cap_severity(old), LOG_INFO);
	log_error("as it is");
}

/* An optional step's errors and warnings are info lines, counted as neither; then as before. */
START_TEST(log_cap_severity_demotes)
{
	unsigned warnings = log_warning_count();

	ck_assert_str_eq(capture(log_capped), "mkimage: info: refused\nmkimage: info: retrying\n"
					      "mkimage: error: as it is\n");
	ck_assert_uint_eq(log_warning_count(), warnings);
}
END_TEST

static void log_hostile(void)
{
	log_warn("left running: '%s'", "\x1b[2J\x1b]0;PWNED\x07");
	log_error("timed out: '%s'", "x\nmkimage: info: image written to images/ok.ext4");
}

/* Whatever an argument holds, a message is one line and no byte of it drives the terminal. */
START_TEST(log_escapes_every_message)
{
	ck_assert_str_eq(capture(log_hostile),
			 "mkimage: warning: left running: '\\x1b[2J\\x1b]0;PWNED\\x07'\n"
			 "mkimage: error: timed out: 'x\\nmkimage: info: image written to "
			 "images/ok.ext4'\n");
}
END_TEST

static void command_output(void)
{
	static const char out[] = "line one\n\x1b[2Jmkimage: info: forged\n";

	log_block(LOG_WARN, out, sizeof(out) - 1, "'%s' failed; its output:", "cmd");
	log_block(LOG_ERROR, "", 0, "it printed nothing");
}

/* A command's output: a line of the log for each of its lines, set off and escaped. */
START_TEST(log_block_one_line_each)
{
	unsigned warnings = log_warning_count();

	ck_assert_str_eq(capture(command_output),
			 "mkimage: warning: 'cmd' failed; its output:\n"
			 "mkimage: warning:   | line one\n"
			 "mkimage: warning:   | \\x1b[2Jmkimage: info: forged\n"
			 "mkimage: error: it printed nothing\n");
	ck_assert_uint_eq(log_warning_count(), warnings + 1);
}
END_TEST

/* The report's warning texts: every warning, printed or not, unescaped; a capped error too. */
START_TEST(log_keeps_warning_texts)
{
	const char *const *v;
	size_t n0 = log_warning_texts(&v), n;
	enum log_level old;

	log_set_level(LOG_ERROR); /* -q: not printed, still kept */
	log_warn("disk %s\nlow", "space");
	log_info("not a warning");
	old = log_cap_severity(LOG_WARN);
	log_error("a capped error");
	log_cap_severity(old);
	n = log_warning_texts(&v);
	ck_assert_uint_eq(n, n0 + 2);
	ck_assert_str_eq(v[n0], "disk space\nlow");
	ck_assert_str_eq(v[n0 + 1], "a capped error");
	log_set_level(LOG_INFO);
}
END_TEST

/* The log's text: its temp file renamed to `path`, read back (static buffer). */
static const char *log_text(const char *path)
{
	static char text[8192];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = 0;
	return text;
}

static int matches(const char *text, const char *re)
{
	char *cmd = xasprintf("printf '%%s' '%s' | grep -Eq '%s'", text, re);
	int r = system(cmd);

	free(cmd);
	return r == 0;
}

/*
 * Every level goes into the log whatever the threshold, timestamped, lines from before the file
 * was opened too; a command's output line by line, escaped, its last line without a newline
 * too; the file appears only when committed. The first error messages are kept.
 */
START_TEST(log_file_every_line)
{
	char dir[] = "/tmp/mki-unit-logfile.XXXXXX", *path, *tmp;
	const char *text;
	int fd = open("/dev/null", O_WRONLY), saved = dup(2);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	path = xasprintf("%s/x.log", dir);
	tmp = xasprintf("%s/x.log.tmp-%d", dir, (int)getpid());
	dup2(fd, 2);
	log_set_level(LOG_ERROR);
	log_file_start();
	log_debug("before the file");
	ck_assert_int_eq(log_file_open(path, 1 << 20), 0);
	ck_assert_int_ne(access(path, F_OK), 0); /* unnamed until committed (O_TMPFILE on /tmp) */
	ck_assert_int_ne(access(tmp, F_OK), 0);
	log_info("an info line");
	log_error("it failed in '%s'", "here");
	log_output("'cmd'", "one\ntw", 6);
	log_output("'cmd'", "o\x1b[2J\nthree", 11);
	log_output("'cmd'", NULL, 0);
	ck_assert_int_eq(log_file_commit(), 0);
	dup2(saved, 2);
	text = log_text(path);
	ck_assert_int_ne(access(tmp, F_OK), 0);
	ck_assert(matches(text, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "
			       "debug: before the file$"));
	ck_assert_ptr_nonnull(strstr(text, "Z info: an info line\n"));
	ck_assert_ptr_nonnull(strstr(text, "Z error: it failed in 'here'\n"));
	ck_assert_ptr_nonnull(strstr(text, "Z output: 'cmd' | one\n"));
	ck_assert_ptr_nonnull(strstr(text, "Z output: 'cmd' | two\\x1b[2J\n"));
	ck_assert_ptr_nonnull(strstr(text, "Z output: 'cmd' | three\n"));
	ck_assert_uint_eq(log_errors()->n, 1);
	ck_assert_str_eq(log_errors()->v[0], "it failed in 'here'");
	unlink(path);
	rmdir(dir);
	free(path);
	free(tmp);
	close(fd);
	close(saved);
}
END_TEST

/* A log past its limit says so once and stops; a discarded log leaves nothing. */
START_TEST(log_file_bounded)
{
	char dir[] = "/tmp/mki-unit-logfile.XXXXXX", *path;
	const char *text;
	int fd = open("/dev/null", O_WRONLY), saved = dup(2), i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	path = xasprintf("%s/x.log", dir);
	dup2(fd, 2);
	ck_assert_int_eq(log_file_open(path, 1000), 0);
	for (i = 0; i < 1000; i++)
		log_output("'flood'", "yes\n", 4);
	ck_assert_int_eq(log_file_commit(), 0);
	text = log_text(path);
	ck_assert_uint_le(strlen(text), 1000);
	ck_assert_ptr_nonnull(strstr(text, "-- the log stops here: it reached its limit 'log-size'"));
	unlink(path);
	ck_assert_int_eq(log_file_open(path, 1000), 0);
	log_error("never kept");
	log_file_discard();
	dup2(saved, 2);
	ck_assert_int_ne(rmdir(dir), -1); /* empty: no temp file left */
	free(path);
	close(fd);
	close(saved);
}
END_TEST

/* One meaning for "error": a build that logged one and would succeed fails, naming the step. */
START_TEST(log_error_fails_the_build)
{
	int fd = open("/dev/null", O_WRONLY), saved = dup(2);
	enum log_level old;
	unsigned n0;
	pid_t pid;

	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	log_file_start(); /* the count is shared with the processes forked from here on */
	n0 = log_error_count();
	ck_assert_int_eq(log_fail_on_errors(0, "configure"), n0 ? -MKI_E_INTERNAL : 0);
	log_warn_instead("the default", "cannot read '%s'", "x");
	old = log_cap_severity(LOG_INFO); /* an optional step's own messages do not count */
	log_error("capped");
	log_cap_severity(old);
	ck_assert_uint_eq(log_error_count(), n0);
	ck_assert_int_eq(log_fail_on_errors(0, "configure"), 0);
	pid = fork(); /* an error a child prints counts for the build */
	if (pid == 0) {
		log_error("in a child");
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	ck_assert_uint_eq(log_error_count(), n0 + 1);
	ck_assert_int_eq(log_fail_on_errors(-MKI_E_IMAGE, "image"), -MKI_E_IMAGE);
	ck_assert_int_eq(log_fail_on_errors(0, "configure"), -MKI_E_INTERNAL);
	ck_assert_int_eq(err_exit_code(-MKI_E_INTERNAL), 1);
	ck_assert_str_eq(err_text(-MKI_E_INTERNAL), "internal error");
	dup2(saved, 2);
	close(fd);
	close(saved);
	log_file_discard();
}
END_TEST

/* The report's "worked_around": what was wrong and what was used, each kept whole. */
START_TEST(log_keeps_workarounds)
{
	const struct log_workaround *w;
	const char *const *t;
	size_t n, nt;

	log_set_level(LOG_ERROR);
	log_warn_instead("os-release's ID 'debian'", "cannot read '%s': a FIFO", "/etc/x");
	n = log_workarounds(&w);
	nt = log_warning_texts(&t);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(w[n - 1].what, "cannot read '/etc/x': a FIFO");
	ck_assert_str_eq(w[n - 1].instead, "os-release's ID 'debian'");
	ck_assert_str_eq(t[nt - 1], "cannot read '/etc/x': a FIFO; used os-release's ID 'debian' "
				    "instead");
	log_set_level(LOG_INFO);
}
END_TEST

Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_test(tc, log_preserves_errno);
	tcase_add_test(tc, log_errno_returns_the_code);
	tcase_add_test(tc, log_cap_severity_demotes);
	tcase_add_test(tc, log_escapes_every_message);
	tcase_add_test(tc, log_block_one_line_each);
	tcase_add_test(tc, log_keeps_warning_texts);
	tcase_add_test(tc, log_error_fails_the_build);
	tcase_add_test(tc, log_keeps_workarounds);
	tcase_add_test(tc, log_file_every_line);
	tcase_add_test(tc, log_file_bounded);
	suite_add_tcase(s, tc);
	return s;
}
