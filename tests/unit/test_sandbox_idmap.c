#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"
#include "sandboxed.h"

static void file_in(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(subid_lines_that_do_not_count)
{
	char path[] = "/tmp/mki-unit-subid-XXXXXX";
	unsigned long start = 7, count = 7;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	file_in("/", path, "alice\nalice:100000\nalice:1x:5\nalice:-:5\n"
			   "alice:1:99999999999999999999999\nalice:2:0\n", 0644);
	ck_assert_int_eq(sandbox_find_subid(path, "alice", 1000, &start, &count), 0);
	/* the name first matches a line of the uid, whichever comes first */
	file_in("/", path, "1000:5000:10\nalice:6000:20\n", 0644);
	ck_assert_int_eq(sandbox_find_subid(path, "alice", 1000, &start, &count), 1);
	ck_assert_uint_eq(start, 5000);
	ck_assert_uint_eq(count, 10);
	/* a name is not a prefix */
	ck_assert_int_eq(sandbox_find_subid(path, "ali", 1, &start, &count), 0);
	ck_assert_int_eq(sandbox_find_subid(path, "alice2", 1, &start, &count), 0);
	unlink(path);
}
END_TEST

START_TEST(map_texts)
{
	static const struct sandbox_info full = { .ids = SANDBOX_IDS_FULL, .outer_uid = 1000,
		.outer_gid = 100, .sub_uid = 165536, .sub_gid = 300000, .sub_count = 1000 };
	static const struct sandbox_info single = { .ids = SANDBOX_IDS_SINGLE, .outer_uid = 1000,
		.outer_gid = 100 };
	char *m;

	m = sandbox_idmap_text(&full, 1);
	ck_assert_str_eq(m, "0 100 1\n1 300000 1000\n");
	free(m);
	m = sandbox_idmap_text(&single, 1);
	ck_assert_str_eq(m, "0 100 1\n");
	free(m);
}
END_TEST

/* What sandbox_idmap_choose() decided in a namespace of its own, and what it logged. */
struct choice {
	int ret;
	struct sandbox_info si;
	char log[1024];
};

/*
 * Run sandbox_idmap_choose() as `uid` in a user + mount namespace of the test's own, where /etc
 * is a directory holding `passwd`, /etc/subuid and /etc/subgid only, and PATH holds only the
 * tools named in `tools` (empty executables).
 */
static void choose_as(unsigned uid, const char *subuid, const char *subgid, const char *tools,
		      int allow_single, struct choice *out)
{
	struct choice *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char etc[] = "/tmp/mki-unit-etc-XXXXXX", bin[] = "/tmp/mki-unit-bin-XXXXXX";
	char map[64], logf[] = "/tmp/mki-unit-log-XXXXXX", *log; /* the child's */
	unsigned outer_uid = geteuid(), outer_gid = getegid();
	int st = 0;
	pid_t pid;

	ck_assert_ptr_ne(c, MAP_FAILED);
	ck_assert_ptr_nonnull(mkdtemp(etc));
	ck_assert_ptr_nonnull(mkdtemp(bin));
	file_in(etc, "passwd", "root:x:0:0::/root:/bin/sh\nbuilder:x:4242:4242::/:/bin/sh\n", 0644);
	file_in(etc, "group", "root:x:0:\nbuilder:x:4242:\n", 0644);
	file_in(etc, "nsswitch.conf", "passwd: files\ngroup: files\n", 0644);
	file_in(etc, "subuid", subuid, 0644);
	file_in(etc, "subgid", subgid, 0644);
	for (const char *t = tools; *t; t += strcspn(t, " "), t += *t == ' ') {
		char name[32];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(t, " "), t);
		file_in(bin, name, "", 0755);
	}
	pid = fork();
	if (pid == 0) {
		unit_log_capture(logf);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			_exit(2);
		snprintf(map, sizeof(map), "%u %u 1\n", uid, outer_uid);
		if (sandbox_write_file("/proc/self/setgroups", "deny") ||
		    sandbox_write_file("/proc/self/uid_map", map))
			_exit(3);
		snprintf(map, sizeof(map), "%u %u 1\n", uid, outer_gid);
		if (sandbox_write_file("/proc/self/gid_map", map))
			_exit(4);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(etc, "/etc", NULL, MS_BIND, NULL) < 0)
			_exit(5);
		setenv("PATH", bin, 1);
		c->ret = sandbox_idmap_choose(&c->si, &(struct sandbox_opts){ allow_single });
		log = unit_log_text(logf);
		snprintf(c->log, sizeof(c->log), "%s", log);
		unlink(logf);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "namespace set-up failed: %d", st);
	*out = *c;
	munmap(c, sizeof(*c));
	for (const char *n = "passwd\0group\0nsswitch.conf\0subuid\0subgid\0"; *n;
	     n += strlen(n) + 1) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", etc, n);
		unlink(path);
	}
	for (const char *n = "newuidmap\0newgidmap\0"; *n; n += strlen(n) + 1) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", bin, n);
		unlink(path);
	}
	rmdir(etc);
	rmdir(bin);
}

START_TEST(user_with_a_range)
{
	struct choice c;

	choose_as(4242, "other:1:65536\nbuilder:100000:65536\n", "4242:200000:70000\n",
		  "newuidmap newgidmap", 0, &c);
	ck_assert_int_eq(c.ret, 0);
	ck_assert_int_eq(c.si.ids, SANDBOX_IDS_FULL);
	ck_assert_uint_eq(c.si.outer_uid, 4242);
	ck_assert_uint_eq(c.si.outer_gid, 4242);
	ck_assert_uint_eq(c.si.sub_uid, 100000);
	ck_assert_uint_eq(c.si.sub_gid, 200000);
	ck_assert_uint_eq(c.si.sub_count, 65536);
	ck_assert_str_eq(c.log, "");
}
END_TEST

START_TEST(user_with_a_small_range_is_warned)
{
	struct choice c;

	choose_as(4242, "builder:100000:1000\n", "builder:200000:5000\n", "newuidmap newgidmap", 0,
		  &c);
	ck_assert_int_eq(c.ret, 0);
	ck_assert_int_eq(c.si.ids, SANDBOX_IDS_FULL);
	ck_assert_uint_eq(c.si.sub_count, 1000); /* the smaller of the two */
	ck_assert_ptr_nonnull(strstr(c.log, "warning: only 1000 subordinate ids for 'builder'"));
}
END_TEST

START_TEST(user_without_the_tools)
{
	struct choice c;

	choose_as(4242, "builder:100000:65536\n", "builder:200000:65536\n", "newuidmap", 0, &c);
	ck_assert_int_eq(c.ret, -MKI_E_SANDBOX);
	ck_assert_ptr_nonnull(strstr(c.log, "install the 'uidmap' package"));
}
END_TEST

START_TEST(user_without_a_range)
{
	struct choice c;

	choose_as(4242, "other:100000:65536\n", "", "newuidmap newgidmap", 0, &c);
	ck_assert_int_eq(c.ret, -MKI_E_SANDBOX);
	ck_assert_int_eq(c.si.ids, SANDBOX_IDS_NONE);
	ck_assert_ptr_nonnull(strstr(c.log, "user 'builder' has no subordinate id range"));
	ck_assert_ptr_nonnull(strstr(c.log, "--single-id"));
	/* asked for: a single id, with a warning */
	choose_as(4242, "other:100000:65536\n", "", "newuidmap newgidmap", 1, &c);
	ck_assert_int_eq(c.ret, 0);
	ck_assert_int_eq(c.si.ids, SANDBOX_IDS_SINGLE);
	ck_assert_uint_eq(c.si.outer_uid, 4242);
	ck_assert_ptr_nonnull(strstr(c.log, "warning: no subordinate ids for 'builder'"));
}
END_TEST

START_TEST(root_takes_its_range_or_the_fixed_one)
{
	struct choice c;

	/* no tools needed: root writes its maps itself */
	choose_as(0, "", "", "", 0, &c);
	ck_assert_int_eq(c.ret, 0);
	ck_assert_int_eq(c.si.ids, SANDBOX_IDS_ROOT);
	ck_assert_uint_eq(c.si.sub_uid, SANDBOX_ROOT_RANGE);
	ck_assert_uint_eq(c.si.sub_gid, SANDBOX_ROOT_RANGE);
	ck_assert_uint_eq(c.si.sub_count, SANDBOX_ROOT_COUNT);
	choose_as(0, "root:500000:70000\n", "root:600000:65536\n", "", 0, &c);
	ck_assert_uint_eq(c.si.sub_uid, 500000);
	ck_assert_uint_eq(c.si.sub_gid, 600000);
	ck_assert_uint_eq(c.si.sub_count, 65536);
	/* only one of the two files, or a range starting at host root: the fixed range */
	choose_as(0, "root:500000:65536\n", "", "", 0, &c);
	ck_assert_uint_eq(c.si.sub_uid, SANDBOX_ROOT_RANGE);
	choose_as(0, "root:0:65536\n", "root:0:65536\n", "", 0, &c);
	ck_assert_uint_eq(c.si.sub_uid, SANDBOX_ROOT_RANGE);
	ck_assert_uint_eq(c.si.sub_gid, SANDBOX_ROOT_RANGE);
}
END_TEST

/* A process that has unshared its user namespace and waits for its maps; *go ends it. */
static pid_t waiting_child(int *go)
{
	int in[2], out[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	pid = fork();
	if (pid == 0) {
		close(in[1]);
		close(out[0]);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		if (write(out[1], "u", 1) != 1 || read(in[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(in[0]);
	close(out[1]);
	ck_assert_int_eq(read(out[0], &c, 1), 1);
	close(out[0]);
	*go = in[1];
	return pid;
}

static void end_child(pid_t pid, int go)
{
	int st = 0;

	close(go);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

START_TEST(write_single_directly)
{
	struct sandbox_info single = { .ids = SANDBOX_IDS_SINGLE, .outer_uid = geteuid(),
				       .outer_gid = getegid() };
	unsigned long in = 9, outer = 9, n = 9;
	char path[64], *text;
	int go;
	pid_t pid = waiting_child(&go);

	ck_assert_int_eq(sandbox_idmap_write(&single, pid), 0);
	snprintf(path, sizeof(path), "proc/%d/uid_map", (int)pid);
	text = unit_read("/", path);
	ck_assert_int_eq(sscanf(text, "%lu %lu %lu", &in, &outer, &n), 3);
	ck_assert_uint_eq(in, 0);
	ck_assert_uint_eq(outer, geteuid());
	ck_assert_uint_eq(n, 1);
	free(text);
	snprintf(path, sizeof(path), "proc/%d/setgroups", (int)pid);
	text = unit_read("/", path);
	ck_assert_str_eq(text, "deny\n");
	free(text);
	end_child(pid, go);
	/* a process that is gone */
	ck_assert_int_eq(sandbox_idmap_write(&single, pid), -1);
}
END_TEST

/* A user build hands the numbers to newuidmap and newgidmap, and says when they refuse. */
START_TEST(write_full_through_the_tools)
{
	static const struct sandbox_info full = { .ids = SANDBOX_IDS_FULL, .outer_uid = 1000,
		.outer_gid = 1001, .sub_uid = 100000, .sub_gid = 200000, .sub_count = 65536 };
	char bin[] = "/tmp/mki-unit-bin-XXXXXX", calls[600], script[1200], logf[] =
		"/tmp/mki-unit-log-XXXXXX";
	char *text;

	ck_assert_ptr_nonnull(mkdtemp(bin));
	snprintf(calls, sizeof(calls), "%s/calls", bin);
	snprintf(script, sizeof(script), "#!/bin/sh\necho \"${0##*/} $*\" >> %s\n", calls);
	file_in(bin, "newuidmap", script, 0755);
	file_in(bin, "newgidmap", script, 0755);
	setenv("PATH", bin, 1);
	ck_assert_int_eq(sandbox_idmap_write(&full, 4321), 0);
	text = unit_read("/", calls);
	ck_assert_str_eq(text, "newuidmap 4321 0 1000 1 1 100000 65536\n"
			       "newgidmap 4321 0 1001 1 1 200000 65536\n");
	free(text);

	file_in(bin, "newuidmap", "#!/bin/sh\necho 'newuidmap: range not allowed' >&2\nexit 1\n",
		0755);
	unlink(calls);
	unit_log_capture(logf);
	ck_assert_int_eq(sandbox_idmap_write(&full, 4321), -1);
	text = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(text, "'newuidmap' could not map ids for the build namespace: "
					   "newuidmap: range not allowed"));
	free(text);
	ck_assert(!unit_exists("/", calls)); /* newgidmap is not tried after newuidmap failed */
	unlink(logf);
	unit_tree_remove(bin);
}
END_TEST

Suite *sandbox_idmap_suite(void)
{
	Suite *s = suite_create("sandbox_idmap");
	TCase *tc = tcase_create("sandbox_idmap");

	tcase_add_test(tc, subid_lines_that_do_not_count);
	tcase_add_test(tc, map_texts);
	tcase_add_test(tc, write_full_through_the_tools);
	UNIT_ADD_SANDBOXED(tc, user_with_a_range);
	UNIT_ADD_SANDBOXED(tc, user_with_a_small_range_is_warned);
	UNIT_ADD_SANDBOXED(tc, user_without_the_tools);
	UNIT_ADD_SANDBOXED(tc, user_without_a_range);
	UNIT_ADD_SANDBOXED(tc, root_takes_its_range_or_the_fixed_one);
	UNIT_ADD_SANDBOXED(tc, write_single_directly);
	suite_add_tcase(s, tc);
	return s;
}
