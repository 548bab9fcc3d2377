#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/watchdog.h"
#include "sandbox/watchdog_internal.h"

/* Parse a cmdline given with '|' for the NULs between arguments (and after the last). */
static int parse(const char *args, struct watchdog_report *r)
{
	char buf[512];
	size_t n = strlen(args), i;

	for (i = 0; i < n; i++)
		buf[i] = args[i] == '|' ? 0 : args[i];
	memset(r, 0, sizeof(*r));
	return watchdog_parse_cmdline(buf, n, r);
}

START_TEST(cmdline_forms)
{
	struct watchdog_report r;

	/* the kernel's #! rewrite of dpkg's exec: interpreter, script path, arguments */
	ck_assert_int_eq(parse("/bin/sh|/var/lib/dpkg/info/hello.postinst|configure|", &r), 1);
	ck_assert_str_eq(r.package, "hello");
	ck_assert_str_eq(r.script, "postinst");
	/* qemu-user with binfmt flag P: qemu, the binary, the original argv[0], then the script */
	ck_assert_int_eq(parse("/usr/bin/qemu-arm-static|/bin/sh|/bin/sh|"
			       "/var/lib/dpkg/info/libc6:armel.preinst|install|", &r), 1);
	ck_assert_str_eq(r.package, "libc6:armel");
	ck_assert_str_eq(r.script, "preinst");
	/* a compiled script executed directly */
	ck_assert_int_eq(parse("/var/lib/dpkg/info/x.config|configure|1.0|", &r), 1);
	ck_assert_str_eq(r.script, "config");
	/* dpkg's new preinst during unpack: no package in the path */
	ck_assert_int_eq(parse("/bin/sh|/var/lib/dpkg/tmp.ci/preinst|upgrade|", &r), 1);
	ck_assert_str_eq(r.package, "");
	ck_assert_str_eq(r.script, "preinst");
}
END_TEST

START_TEST(cmdline_not_scripts)
{
	struct watchdog_report r;

	ck_assert_int_eq(parse("dpkg|--configure|-a|", &r), 0);
	ck_assert_int_eq(parse("/bin/sh|/var/lib/dpkg/info/hello.list|", &r), 0);
	ck_assert_int_eq(parse("/bin/sh|/var/lib/dpkg/info/.postinst|", &r), 0);
	ck_assert_int_eq(parse("/bin/sh|/var/lib/dpkg/info/sub/x.postinst|", &r), 0);
	ck_assert_int_eq(parse("/bin/sh|/var/lib/dpkg/tmp.ci/control|", &r), 0);
	ck_assert_int_eq(parse("/bin/sh|/srv/var/lib/dpkg/info/x.postinst|", &r), 0);
	/* beyond the arguments searched */
	ck_assert_int_eq(parse("a|b|c|d|/var/lib/dpkg/info/x.postinst|", &r), 0);
	/* a truncated last argument is not taken */
	ck_assert_int_eq(parse("/bin/sh|/var/lib/dpkg/info/x.postinst", &r), 0);
	ck_assert_int_eq(parse("", &r), 0);
}
END_TEST

START_TEST(stat_fields)
{
	unsigned long long t = 0;
	long ppid = 0;
	/* comm with spaces and a ')' : fields restart after the last ')' */
	const char *stat = "42 (a) b) S 7 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 "
			   "123456 2400000 100 18446744073709551615\n";

	ck_assert_int_eq(watchdog_parse_stat(stat, &ppid, &t), 0);
	ck_assert_uint_eq(t, 123456);
	ck_assert_int_eq(ppid, 7);
	ck_assert_int_eq(watchdog_parse_stat("42 (x) S 1 2 3\n", &ppid, &t), -EINVAL);
	ck_assert_int_eq(watchdog_parse_stat("no paren", &ppid, &t), -EINVAL);
	ck_assert_int_eq(watchdog_parse_stat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
					     "x12 0\n", &ppid, &t), -EINVAL);
	ck_assert_int_eq(watchdog_parse_stat("1 (x) S p 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
					     "12 0\n", &ppid, &t), -EINVAL);
}
END_TEST

/* Threads and resident pages, for the process and memory bounds. */
START_TEST(stat_usage)
{
	unsigned long long threads = 0, rss = 0;
	const char *stat = "42 (a) b) S 7 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 3 0 "
			   "123456 2400000 517 18446744073709551615\n";

	ck_assert_int_eq(watchdog_parse_stat_usage(stat, &threads, &rss), 0);
	ck_assert_uint_eq(threads, 3);
	ck_assert_uint_eq(rss, 517);
	ck_assert_int_eq(watchdog_parse_stat_usage("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
						   "12 0\n", &threads, &rss), -EINVAL);
	ck_assert_int_eq(watchdog_parse_stat_usage("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 t 0 "
						   "12 0 5\n", &threads, &rss), -EINVAL);
	ck_assert_int_eq(watchdog_parse_stat_usage("no paren", &threads, &rss), -EINVAL);
}
END_TEST

/* qemu-arm 7.2 needs 4.4 GiB of address space to start: an emulating build leaves room. */
START_TEST(as_limit)
{
	ck_assert_uint_eq(watchdog_as_limit(0, 1), 0);
	ck_assert_uint_eq(watchdog_as_limit(1ull << 30, 0), 2ull << 30);
	ck_assert_uint_ge(watchdog_as_limit(1, 1), 4505ull << 20);
}
END_TEST

/* The command's own limits: RLIMIT_NPROC never above the process limit, the OOM killer's pick. */
START_TEST(limit_self)
{
	struct watchdog_opts o = { .max_procs = 150, .max_tree_bytes = 1ull << 30,
				   .max_memory = 1ull << 30 };
	struct rlimit rl;
	char buf[16] = "";
	int fd;
	ssize_t n;

#ifdef __SANITIZE_ADDRESS__
	o.max_memory = 0; /* ASan's shadow mappings are far beyond any address-space bound */
#endif
	watchdog_limit_self(&o, 0);
	ck_assert_int_eq(getrlimit(RLIMIT_NPROC, &rl), 0);
	ck_assert_uint_eq(rl.rlim_cur, 150);
	ck_assert_uint_eq(rl.rlim_max, 150);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	ck_assert_uint_eq(rl.rlim_max, 1ull << 30);
	ck_assert_int_eq(getrlimit(RLIMIT_AS, &rl), 0);
	if (o.max_memory)
		ck_assert_uint_eq(rl.rlim_max, watchdog_as_limit(1ull << 30, 0));
	fd = open("/proc/self/oom_score_adj", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_str_eq(buf, "1000\n");
}
END_TEST

static int runs_dpkg(const char *args)
{
	char buf[512];
	size_t n = strlen(args), i;

	for (i = 0; i < n; i++)
		buf[i] = args[i] == '|' ? 0 : args[i];
	return watchdog_runs_dpkg(buf, n);
}

/* dpkg as the kernel, qemu-user (binfmt flag P) and mkimage-exec start it; nothing else. */
START_TEST(dpkg_cmdline)
{
	ck_assert_int_eq(runs_dpkg("dpkg|--configure|-a|"), 1);
	ck_assert_int_eq(runs_dpkg("/usr/bin/qemu-arm-static|/usr/bin/dpkg|dpkg|--configure|-a|"),
			 1);
	ck_assert_int_eq(runs_dpkg("/usr/bin/qemu-arm-static|-0|dpkg|/usr/bin/dpkg|--configure|"),
			 1);
	ck_assert_int_eq(runs_dpkg("/usr/bin/dpkg-divert|--add|/x|"), 0);
	ck_assert_int_eq(runs_dpkg("/bin/sh|/var/lib/dpkg/info/dpkg.postinst|configure|"), 0);
	ck_assert_int_eq(runs_dpkg("a|b|c|d|dpkg|"), 0);
	/* a truncated argument is not taken */
	ck_assert_int_eq(runs_dpkg("dpkg"), 0);
	ck_assert_int_eq(runs_dpkg(""), 0);
}
END_TEST

/* The tree walk counts allocated blocks, not apparent sizes, and not what a symlink points to. */
START_TEST(tree_bound)
{
	char dir[] = "/tmp/test-watchdog-XXXXXX", path[128], block[65536];
	struct watchdog_opts o = { .max_tree_bytes = 512 * 1024 };
	struct watchdog w;
	struct watchdog_report r;
	int root, fd, i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	root = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(root, 0);
	/* a sparse 1 GiB file takes no room; a symlink to /usr is not followed */
	snprintf(path, sizeof(path), "%s/sparse", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_eq(ftruncate(fd, 1 << 30), 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/usr", dir);
	ck_assert_int_eq(symlink("/usr", path), 0);
	watchdog_init(&w, -1, root, 0, &o);
	ck_assert_int_eq(watchdog_finish(&w, &r, 0), 0);
	/* 1 MiB of data in a subdirectory passes the 512 KiB bound */
	snprintf(path, sizeof(path), "%s/d", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/d/data", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	memset(block, 'x', sizeof(block));
	for (i = 0; i < 16; i++)
		ck_assert_int_eq(write(fd, block, sizeof(block)), (int)sizeof(block));
	ck_assert_int_eq(fsync(fd), 0);
	close(fd);
	ck_assert_int_eq(watchdog_finish(&w, &r, 0), 1);
	ck_assert_int_eq(r.verdict, WATCHDOG_STAGING);
	ck_assert_uint_ge(r.count, 1 << 20);
	ck_assert_uint_eq(r.limit, 512 * 1024);
	close(root);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

START_TEST(cpu_fields)
{
	unsigned long long t = 0;
	char state = 0;
	/* comm with spaces and ')': state T, utime 30, stime 12 */
	const char *stat = "42 (a) b) T 7 42 42 0 -1 4194560 100 0 0 0 30 12 0 0 20 0 1 0 "
			   "123456 2400000 100\n";

	ck_assert_int_eq(watchdog_parse_cpu(stat, &state, &t), 0);
	ck_assert_int_eq(state, 'T');
	ck_assert_uint_eq(t, 42);
	ck_assert_int_eq(watchdog_parse_cpu("42 (x) S 1 2 3\n", &state, &t), -EINVAL);
	ck_assert_int_eq(watchdog_parse_cpu("42 (x)", &state, &t), -EINVAL);
	ck_assert_int_eq(watchdog_parse_cpu("1 (x) S 1 1 1 0 -1 0 0 0 0 0 x 1 0\n", &state, &t),
			 -EINVAL);
}
END_TEST

/* The stall clock: only a change of CPU time or of the process set restarts it. */
START_TEST(progress_clock)
{
	struct watchdog_opts o = { .stall_timeout = 5 };
	struct watchdog_progress p = { .cpu = 100, .pids = 10, .n = 2, .dpkg = 1 };
	struct watchdog w;

	watchdog_init(&w, -1, -1, 0, &o);
	ck_assert(watchdog_progress_seen(&w, &p, 1000.0) == 0);
	ck_assert(watchdog_progress_seen(&w, &p, 1003.0) == 3.0);
	p.stopped = 1; /* being stopped is no progress */
	ck_assert(watchdog_progress_seen(&w, &p, 1006.0) == 6.0);
	p.cpu++;
	ck_assert(watchdog_progress_seen(&w, &p, 1007.0) == 0);
	ck_assert(watchdog_progress_seen(&w, &p, 1009.0) == 2.0);
	p.pids += 5; /* a process ended and another started: the count alone stays */
	ck_assert(watchdog_progress_seen(&w, &p, 1010.0) == 0);
	p.n++;
	ck_assert(watchdog_progress_seen(&w, &p, 1011.0) == 0);
	ck_assert(watchdog_progress_seen(&w, &p, 1020.5) == 9.5);
}
END_TEST

/* A step without dpkg stalls only under stall_any (a hook), and the verdict says dpkg did not run. */
START_TEST(stall_any)
{
	struct watchdog_opts o = { .stall_timeout = 5 };
	struct watchdog_progress p = { .cpu = 7, .pids = 40, .n = 3, .stopped = 1 };
	struct watchdog_report r = { 0 };
	struct watchdog w;

	watchdog_init(&w, -1, -1, 0, &o);
	ck_assert_int_eq(watchdog_stalled(&w, &p, 100.0, &r), 0);
	ck_assert_int_eq(watchdog_stalled(&w, &p, 130.0, &r), 0); /* no dpkg: not a stall */
	ck_assert_int_eq(r.verdict, WATCHDOG_NONE);
	o.stall_any = 1;
	watchdog_init(&w, -1, -1, 0, &o);
	ck_assert_int_eq(watchdog_stalled(&w, &p, 100.0, &r), 0);
	ck_assert_int_eq(watchdog_stalled(&w, &p, 105.0, &r), 0); /* at the bound, not past it */
	p.cpu++;
	ck_assert_int_eq(watchdog_stalled(&w, &p, 105.5, &r), 0); /* progress restarts the clock */
	ck_assert_int_eq(watchdog_stalled(&w, &p, 110.0, &r), 0);
	ck_assert_int_eq(watchdog_stalled(&w, &p, 111.0, &r), 1);
	ck_assert_int_eq(r.verdict, WATCHDOG_STALLED);
	ck_assert_uint_eq(r.seconds, 5);
	ck_assert_uint_eq(r.limit, 5);
	ck_assert_uint_eq(r.count, 3);
	ck_assert_uint_eq(r.stopped, 1);
	ck_assert_int_eq(r.dpkg, 0);
	/* with dpkg running the same holds without stall_any, and the verdict says so */
	memset(&r, 0, sizeof(r));
	o.stall_any = 0;
	p.dpkg = 1;
	watchdog_init(&w, -1, -1, 0, &o);
	ck_assert_int_eq(watchdog_stalled(&w, &p, 200.0, &r), 0);
	ck_assert_int_eq(watchdog_stalled(&w, &p, 206.0, &r), 1);
	ck_assert_int_eq(r.dpkg, 1);
}
END_TEST

Suite *watchdog_suite(void)
{
	Suite *s = suite_create("watchdog");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cmdline_forms);
	tcase_add_test(tc, cmdline_not_scripts);
	tcase_add_test(tc, stat_fields);
	tcase_add_test(tc, stat_usage);
	tcase_add_test(tc, as_limit);
	tcase_add_test(tc, limit_self);
	tcase_add_test(tc, dpkg_cmdline);
	tcase_add_test(tc, tree_bound);
	tcase_add_test(tc, cpu_fields);
	tcase_add_test(tc, progress_clock);
	tcase_add_test(tc, stall_any);
	suite_add_tcase(s, tc);
	return s;
}
