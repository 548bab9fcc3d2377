#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "configure/guards.h"
#include "sandbox/idshift.h"
#include "sandbox/sandbox.h"
#include "sandboxed.h"

#define PKG_POLICY "#!/bin/sh\n# the package's own\nexit 0\n"
#define PKG_SSD "#!/bin/sh\necho real start-stop-daemon\n"

/* A tree in the build namespace with usr, and usr/sbin holding `policy`, `ssd` (NULL: absent). */
static int tree_with(char *dir, const char *policy, const char *ssd)
{
	int fd = unit_tree_new(dir, "usr", (char *)NULL);

	if (policy || ssd)
		unit_mkdir(dir, "usr/sbin");
	if (policy)
		unit_write(dir, "usr/sbin/policy-rc.d", policy, 0755);
	if (ssd)
		unit_write(dir, "usr/sbin/start-stop-daemon", ssd, 0755);
	return fd;
}

/* The exit status of running the tree's script `rel` with the host's shell. */
static int run_status(const char *dir, const char *rel)
{
	char path[512];
	int st = 0;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl("/bin/sh", "sh", path, "restart", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void no_traces(const char *dir)
{
	ck_assert(!unit_exists(dir, "usr/sbin/policy-rc.d.mkimage-saved"));
	ck_assert(!unit_exists(dir, "usr/sbin/policy-rc.d.mkimage-tmp"));
	ck_assert(!unit_exists(dir, "usr/sbin/start-stop-daemon.mkimage-real"));
	ck_assert(!unit_exists(dir, "usr/sbin/start-stop-daemon.mkimage-tmp"));
}

START_TEST(installed_then_put_back_exactly)
{
	char dir[] = "/tmp/mki-unit-guards-XXXXXX", path[512];
	struct guards g = { 0 };
	struct stat sb;
	int fd = tree_with(dir, PKG_POLICY, PKG_SSD);

	ck_assert_int_eq(guards_install(&g, fd), 0);
	ck_assert_int_eq(g.policy_saved, 1);
	ck_assert_int_eq(g.policy_installed, 1);
	ck_assert_int_eq(g.ssd_diverted, 1);
	unit_file_is(dir, "usr/sbin/policy-rc.d.mkimage-saved", PKG_POLICY);
	unit_file_is(dir, "usr/sbin/start-stop-daemon.mkimage-real", PKG_SSD);
	ck_assert_int_eq(run_status(dir, "usr/sbin/policy-rc.d"), 101); /* action forbidden */
	ck_assert_int_eq(run_status(dir, "usr/sbin/start-stop-daemon"), 0);
	unit_file_is(dir, "usr/sbin/start-stop-daemon",
		"#!/bin/sh\necho 'start-stop-daemon: not started while the image is built' >&2\n"
		"exit 0\n");
	/* executable, owned by the commands' root */
	snprintf(path, sizeof(path), "%s/usr/sbin/policy-rc.d", dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0755);
	ck_assert_uint_eq(sb.st_uid, idshift_tree_uid(0));
	ck_assert_uint_eq(sb.st_gid, idshift_tree_gid(0));

	ck_assert_int_eq(guards_remove(&g, fd, dir), 0);
	unit_file_is(dir, "usr/sbin/policy-rc.d", PKG_POLICY);
	unit_file_is(dir, "usr/sbin/start-stop-daemon", PKG_SSD);
	no_traces(dir);
	ck_assert_int_eq(g.policy_saved + g.policy_installed + g.ssd_diverted, 0);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

START_TEST(bare_tree)
{
	char dir[] = "/tmp/mki-unit-guards-XXXXXX";
	struct guards g = { 0 };
	int fd = tree_with(dir, NULL, NULL);

	ck_assert_int_eq(guards_install(&g, fd), 0); /* usr/sbin made */
	ck_assert_int_eq(g.policy_saved, 0);
	ck_assert_int_eq(g.policy_installed, 1);
	ck_assert_int_eq(g.ssd_diverted, 0); /* nothing to divert */
	ck_assert_int_eq(run_status(dir, "usr/sbin/policy-rc.d"), 101);
	ck_assert(!unit_exists(dir, "usr/sbin/start-stop-daemon"));
	ck_assert_int_eq(guards_remove(&g, fd, dir), 0);
	ck_assert(!unit_exists(dir, "usr/sbin/policy-rc.d"));
	no_traces(dir);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

/* A tree restored from the layer cache has the guards in place: adopted, then removed. */
START_TEST(adopted_from_the_tree)
{
	char dir[] = "/tmp/mki-unit-guards-XXXXXX";
	struct guards g = { 0 }, adopted = { 0 };
	int fd = tree_with(dir, NULL, PKG_SSD);

	ck_assert_int_eq(guards_install(&g, fd), 0);
	guards_adopt(&adopted, fd);
	ck_assert_int_eq(adopted.policy_saved, 0);
	ck_assert_int_eq(adopted.policy_installed, 1);
	ck_assert_int_eq(adopted.ssd_diverted, 1);
	ck_assert_int_eq(guards_remove(&adopted, fd, dir), 0);
	ck_assert(!unit_exists(dir, "usr/sbin/policy-rc.d"));
	unit_file_is(dir, "usr/sbin/start-stop-daemon", PKG_SSD);
	no_traces(dir);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

/* Installing stops at the first failure; removing then puts back what was done. */
START_TEST(failed_install_is_undone)
{
	char dir[] = "/tmp/mki-unit-guards-XXXXXX";
	struct guards g = { 0 };
	int fd = tree_with(dir, PKG_POLICY, PKG_SSD);

	unit_write(dir, "usr/sbin/policy-rc.d.mkimage-tmp", "stale", 0644);
	ck_assert_int_eq(guards_install(&g, fd), -EEXIST);
	ck_assert_int_eq(g.policy_saved, 1);
	ck_assert_int_eq(g.policy_installed, 0);
	ck_assert_int_eq(g.ssd_diverted, 0);
	ck_assert_int_eq(guards_remove(&g, fd, dir), 0);
	unit_file_is(dir, "usr/sbin/policy-rc.d", PKG_POLICY);
	unit_file_is(dir, "usr/sbin/start-stop-daemon", PKG_SSD);
	unit_file_is(dir, "usr/sbin/policy-rc.d.mkimage-tmp", "stale"); /* not ours: left alone */
	ck_assert(!unit_exists(dir, "usr/sbin/policy-rc.d.mkimage-saved"));
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

/* One guard that cannot be removed is an error, logged; the others are still removed. */
START_TEST(remove_goes_on_after_a_failure)
{
	char dir[] = "/tmp/mki-unit-guards-XXXXXX", logf[] = "/tmp/mki-unit-log-XXXXXX", path[512];
	struct guards g = { 0 };
	char *log;
	int fd = tree_with(dir, PKG_POLICY, PKG_SSD);

	ck_assert_int_eq(guards_install(&g, fd), 0);
	snprintf(path, sizeof(path), "%s/usr/sbin/start-stop-daemon.mkimage-real", dir);
	ck_assert_int_eq(unlink(path), 0); /* a script removed it meanwhile */
	unit_log_capture(logf);
	ck_assert_int_eq(guards_remove(&g, fd, dir), -ENOENT);
	log = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(log, "cannot remove the build guards (policy-rc.d, "
					  "start-stop-daemon) from '"));
	ck_assert_ptr_nonnull(strstr(log, dir));
	free(log);
	unit_file_is(dir, "usr/sbin/policy-rc.d", PKG_POLICY);
	ck_assert(!unit_exists(dir, "usr/sbin/policy-rc.d.mkimage-saved"));
	ck_assert_int_eq(g.policy_saved + g.policy_installed + g.ssd_diverted, 0);
	unlink(logf);
	close(fd);
	unit_tree_remove(dir);
}
END_TEST

Suite *guards_suite(void)
{
	Suite *s = suite_create("guards");
	TCase *tc = tcase_create("guards");

	UNIT_ADD_SANDBOXED(tc, installed_then_put_back_exactly);
	UNIT_ADD_SANDBOXED(tc, bare_tree);
	UNIT_ADD_SANDBOXED(tc, adopted_from_the_tree);
	UNIT_ADD_SANDBOXED(tc, failed_install_is_undone);
	UNIT_ADD_SANDBOXED(tc, remove_goes_on_after_a_failure);
	suite_add_tcase(s, tc);
	return s;
}
