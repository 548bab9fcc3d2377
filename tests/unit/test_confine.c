#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"
#include "sandbox/confine.h"
#include "sandbox/idshift.h"
#include "sandbox/sandbox.h"
#include "sandboxed.h"

/*
 * Run `fn` in a child (pid 1 of new pid and mount namespaces when `newpid`, as sandbox_run()'s
 * init: pivot_root changes the root of every process of its mount namespace); its exit status.
 */
static int in_child(int (*fn)(const char *), const char *arg, int newpid)
{
	int st = 0;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		if (newpid) {
			pid_t inner;

			if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
				_exit(100);
			inner = fork();
			if (inner == 0)
				_exit(fn(arg));
			if (inner < 0 || waitpid(inner, &st, 0) != inner || !WIFEXITED(st))
				_exit(101);
			_exit(WEXITSTATUS(st));
		}
		_exit(fn(arg));
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* In the confined child: each check its own exit code. */
static int confined(const char *tree)
{
	char cwd[64], *old = strdup(tree);
	struct statvfs sv;
	FILE *f;

	snprintf(cwd, sizeof(cwd), "%s/proc", tree);
	if (mount("proc", cwd, "proc", 0, NULL) < 0)
		return 2;
	if (confine_root(tree))
		return 3;
	if (access("/inside", F_OK) < 0) /* the tree is "/" */
		return 4;
	if (access(old, F_OK) == 0 || errno != ENOENT) /* nothing above it is reachable */
		return 5;
	if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, "/"))
		return 6;
	if (statvfs("/proc/sys", &sv) < 0 || !(sv.f_flag & ST_RDONLY))
		return 7;
	if (statvfs("/proc", &sv) < 0 || (sv.f_flag & ST_RDONLY)) /* only the knobs */
		return 8;
	if (!(f = fopen("/proc/cmdline", "r")) || fgetc(f) != EOF) /* not the host's */
		return 9;
	fclose(f);
	free(old);
	return 0;
}

START_TEST(root_is_the_tree_and_only_the_tree)
{
	char tree[] = "/tmp/mki-unit-confine-XXXXXX";

	unit_sandbox_enter();
	ck_assert_ptr_nonnull(mkdtemp(tree));
	unit_mkdir(tree, "proc");
	unit_mkdir(tree, "dev");
	unit_write(tree, "dev/null", "", 0644); /* the sandbox's /dev has the device */
	unit_write(tree, "inside", "", 0644);
	ck_assert_int_eq(in_child(confined, tree, 1), 0);
	/* the test's own root is untouched */
	ck_assert(unit_exists(tree, "inside"));
	unit_tree_remove(tree);
}
END_TEST

static int confine_missing(const char *tree)
{
	return -confine_root(tree);
}

START_TEST(missing_root_is_an_error)
{
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *text;

	unit_sandbox_enter();
	unit_log_capture(logf);
	ck_assert_int_eq(in_child(confine_missing, "/nonexistent/tree", 0), ENOENT);
	text = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(text, "sandbox: cannot make '/nonexistent/tree' the root: "));
	free(text);
	unlink(logf);
}
END_TEST

/* The child's uid_map and gid_map, as "INSIDE OUTSIDE COUNT\n" lines without the padding. */
static void own_map(const char *file, char *out, size_t size)
{
	unsigned long a, b, c;
	char path[64], *text, *p;
	size_t n = 0;

	snprintf(path, sizeof(path), "proc/self/%s", file);
	text = unit_read("/", path);
	out[0] = 0;
	for (p = text; p && sscanf(p, "%lu %lu %lu", &a, &b, &c) == 3; p = strchr(p, '\n') + 1)
		n += (size_t)snprintf(out + n, size - n, "%lu %lu %lu\n", a, b, c);
	free(text);
}

static int forked_as(const struct sandbox_info *si, int host)
{
	char *want_u = idshift_nested_map(si, 0, host), *want_g = idshift_nested_map(si, 1, host);
	char got[256];
	int st = 0;
	pid_t pid = confine_fork(si, host);

	if (pid == 0) {
		if (getuid() != 0 || getgid() != 0)
			_exit(2);
		own_map("uid_map", got, sizeof(got));
		if (strcmp(got, want_u))
			_exit(3);
		own_map("gid_map", got, sizeof(got));
		if (strcmp(got, want_g))
			_exit(4);
		/* a new mount namespace: what it mounts is its own */
		if (mount("tmpfs", "/mnt", "tmpfs", 0, NULL) < 0)
			_exit(5);
		_exit(0);
	}
	free(want_u);
	free(want_g);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

START_TEST(child_is_root_of_the_nested_map)
{
	unit_sandbox_enter();
	ck_assert_int_eq(forked_as(sandbox_get(), 0), 0);
	ck_assert_int_eq(forked_as(sandbox_get(), 1), 0);
}
END_TEST

/* Maps the build namespace cannot give: the parent says so, the child never runs as root. */
START_TEST(maps_refused_end_the_child)
{
	static const struct sandbox_info bad = { .ids = SANDBOX_IDS_ROOT, .sub_uid = 4294967000u,
		.sub_gid = 4294967000u, .sub_count = 65536 };
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *text;
	int st = 0;
	pid_t pid;

	unit_sandbox_enter();
	unit_log_capture(logf);
	pid = confine_fork(&bad, 0);
	if (pid == 0)
		_exit(0); /* must never get here: it exits 125 before */
	ck_assert_int_eq(pid, -EPERM);
	ck_assert_int_gt(waitpid(-1, &st, 0), 0);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 125);
	text = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(text, "/uid_map' ('0 4294967000 65536'): "));
	free(text);
	unlink(logf);
}
END_TEST

Suite *confine_suite(void)
{
	Suite *s = suite_create("confine");
	TCase *tc = tcase_create("confine");

	UNIT_ADD_SANDBOXED(tc, root_is_the_tree_and_only_the_tree);
	UNIT_ADD_SANDBOXED(tc, missing_root_is_an_error);
	UNIT_ADD_SANDBOXED(tc, child_is_root_of_the_nested_map);
	UNIT_ADD_SANDBOXED(tc, maps_refused_end_the_child);
	suite_add_tcase(s, tc);
	return s;
}
