/*
 * mkimage-exec's own answers against coreutils' (the host's, the unit tests run on Debian): for
 * every path of a small tree with links, dangling links, a loop, files where directories are
 * expected, "." and "..", each question the builtin answers must get coreutils' answer, byte for
 * byte and with its exit status; a question it declines is left to coreutils anyway.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "configure/execbuiltin.h"

struct run {
	char out[8192];
	int status; /* exit status, or -1: the builtin declined */
};

/* The standard output and exit status of child `pid`, whose output is the pipe `fd`. */
static void collect(pid_t pid, int fd, struct run *r)
{
	ssize_t n, len = 0;
	int status;

	while ((n = read(fd, r->out + len, sizeof(r->out) - 1 - (size_t)len)) > 0)
		len += n;
	r->out[len] = 0;
	close(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r->status = WEXITSTATUS(status);
}

/* A child whose standard output is a pipe; its read end in `*fd`. */
static pid_t child(int *fd)
{
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		return 0;
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

/* The builtin's answer: status -1 when it declined. */
static void builtin(enum execbuiltin b, const char *opt, char *path, struct run *r)
{
	int fd;
	pid_t pid = child(&fd);

	if (pid == 0) {
		char o[8], *args[] = { o, path, NULL };

		snprintf(o, sizeof(o), "%s", opt);
		_exit(execbuiltin_run(b, 2, args) & 0xff);
	}
	collect(pid, fd, r);
	if (r->status == 0xff)
		r->status = -1;
}

/* coreutils' answer. */
static void coreutils(const char *prog, const char *opt, char *path, struct run *r)
{
	int fd;
	pid_t pid = child(&fd);

	if (pid == 0) {
		dup2(open("/dev/null", O_WRONLY), STDERR_FILENO);
		execl(prog, prog, opt, path, (char *)NULL);
		_exit(127);
	}
	collect(pid, fd, r);
}

START_TEST(builtin_answers_as_coreutils)
{
	static const char *const rel[] = { "", "/", "//a///b", "/a", "/a/", "/a/./b", "/a/../a/b",
		"/l/b", "/l/../a", "/abs/b", "/dang", "/dang/x", "/dang/", "/loop1", "/loop1/x",
		"/a/file", "/a/file/", "/a/file/x", "/a/file/../b", "/missing", "/missing/x",
		"/missing/../a", "/a/up/a/b", "/sp ace", "/a/b/../../..", "/a/b/../../../..", "/.",
		"/a/b/.", "/./a", "/l", "/l/", "/abs" };
	static const char *const bare[] = { "/", "//", "/..", "/../..", "", "relative", "-s" };
	static const struct { enum execbuiltin b; const char *prog, *opt; } q[] = {
		{ EXECBUILTIN_REALPATH, "/usr/bin/realpath", "-ms" },
		{ EXECBUILTIN_REALPATH, "/usr/bin/realpath", "-sm" },
		{ EXECBUILTIN_REALPATH, "/usr/bin/realpath", "-s" },
		{ EXECBUILTIN_REALPATH, "/usr/bin/realpath", "-m" },
		{ EXECBUILTIN_READLINK, "/usr/bin/readlink", "-f" },
		{ EXECBUILTIN_READLINK, "/usr/bin/readlink", "-e" },
	};
	char dir[] = "/tmp/mkimage-builtin-XXXXXX", path[512], cmd[1024];
	int answered[sizeof(q) / sizeof(q[0])] = { 0 };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir -p a/b && : >a/file && : >'sp ace' && ln -s a l && ln -s %s/a abs "
		 "&& ln -s nonexist/zz dang && ln -s loop2 loop1 && ln -s loop1 loop2 && ln -s .. a/up",
		 dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]) + sizeof(bare) / sizeof(bare[0]); i++) {
		if (i < sizeof(rel) / sizeof(rel[0]))
			snprintf(path, sizeof(path), "%s%s", dir, rel[i]);
		else
			snprintf(path, sizeof(path), "%s", bare[i - sizeof(rel) / sizeof(rel[0])]);
		for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++) {
			struct run ours, theirs;

			builtin(q[k].b, q[k].opt, path, &ours);
			if (ours.status < 0)
				continue;
			answered[k]++;
			coreutils(q[k].prog, q[k].opt, path, &theirs);
			ck_assert_msg(ours.status == theirs.status && !strcmp(ours.out, theirs.out),
				      "%s %s '%s': builtin '%s' (%d), coreutils '%s' (%d)", q[k].prog,
				      q[k].opt, path, ours.out, ours.status, theirs.out, theirs.status);
		}
	}
	/* The shapes initramfs-tools uses are answered; the others never are. */
	ck_assert_int_ge(answered[0], 20);
	ck_assert_int_ge(answered[2], 8);
	ck_assert_int_ge(answered[4], 8);
	ck_assert_int_eq(answered[3], 0);
	ck_assert_int_eq(answered[5], 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *execbuiltin_suite(void)
{
	Suite *s = suite_create("execbuiltin");
	TCase *tc = tcase_create("execbuiltin");

	if (access("/usr/bin/realpath", X_OK) == 0 && access("/usr/bin/readlink", X_OK) == 0)
		tcase_add_test(tc, builtin_answers_as_coreutils);
	suite_add_tcase(s, tc);
	return s;
}
