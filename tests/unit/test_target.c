#include <check.h>
#include <elf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/target.h"
#include "lib/err.h"
#include "unit_target.h"

START_TEST(init_sets_the_environment)
{
	static const char *const want[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
		"LC_ALL=C.UTF-8", "DEBIAN_FRONTEND=noninteractive",
		"DEBCONF_NONINTERACTIVE_SEEN=true", "SOURCE_DATE_EPOCH=1700000000", NULL };
	static const char *const extra[] = { "A=1", "B=2", NULL };
	struct unit_target u;
	struct strv env = { 0 };
	char primary[64];
	size_t i;

	snprintf(primary, sizeof(primary), "MKIMAGE_ARCH=%s", arch_host());
	unit_target_data(&u);
	u.r.script_timeout = 77;
	strv_push(&u.p.archs, "armhf");
	target_init(&u.t, "/tree", 5, &u.p, &u.r, &u.st);
	ck_assert_str_eq(u.t.root, "/tree");
	ck_assert_int_eq(u.t.rootfd, 5);
	for (i = 0; want[i]; i++)
		ck_assert_str_eq(u.t.env.v[i], want[i]);
	ck_assert_uint_eq(u.t.env.n, i);
	ck_assert_uint_eq(u.t.hook_env.n, 3);
	ck_assert_str_eq(u.t.hook_env.v[0], "MKIMAGE_NAME=board");
	ck_assert_str_eq(u.t.hook_env.v[1], primary);
	ck_assert_ptr_nonnull(strstr(u.t.hook_env.v[2], " armhf"));
	ck_assert_uint_eq(u.t.watch.script_timeout, 77);
	ck_assert_uint_eq(u.t.watch.max_procs, runlimits_get(&u.st.limits, LIMIT_PROCESSES));
	ck_assert_ptr_eq(u.t.limits, &u.st.limits);
	/* the environment plus extra variables, after what is already there */
	strv_push(&env, "FIRST=0");
	target_env(&u.t, extra, &env);
	ck_assert_uint_eq(env.n, 1 + u.t.env.n + 2);
	ck_assert_str_eq(env.v[0], "FIRST=0");
	ck_assert_str_eq(env.v[env.n - 1], "B=2");
	strv_release(&env);
	target_env(&u.t, NULL, &env);
	ck_assert_uint_eq(env.n, u.t.env.n);
	strv_release(&env);
	target_release(&u.t);

	/* no SOURCE_DATE_EPOCH; a plan without a primary takes the recipe's arch */
	u.st.source_date_epoch = -1;
	free(u.p.primary);
	u.p.primary = NULL;
	free(u.r.arch);
	u.r.arch = xstrdup("riscv64");
	target_init(&u.t, "/tree", 5, &u.p, &u.r, &u.st);
	ck_assert_uint_eq(u.t.env.n, 5);
	ck_assert_str_eq(u.t.hook_env.v[1], "MKIMAGE_ARCH=riscv64");
	target_release(&u.t);
	unit_target_release(&u);
}
END_TEST

/* A command in the tree sees exactly the target's environment plus the extra, as root. */
START_TEST(runs_in_the_tree_with_a_clean_environment)
{
	static const char *const argv[] = { "/bin/sh", "-c",
					    "env > /out; id -u >> /out; pwd >> /out", NULL };
	static const char *const extra[] = { "EXTRA=yes", NULL };
	struct unit_target u;
	char *out;

	setenv("MKI_UNIT_HOST_ONLY", "leak", 1);
	unit_target_init(&u);
	ck_assert_int_eq(target_run(&u.t, u.t.root, argv, extra, 30, "the env test"), 0);
	out = unit_read(u.dir, "out");
	ck_assert_ptr_nonnull(out);
	for (size_t i = 0; i < u.t.env.n; i++)
		ck_assert_msg(strstr(out, u.t.env.v[i]), "'%s' missing from:\n%s", u.t.env.v[i],
			      out);
	ck_assert_ptr_nonnull(strstr(out, "EXTRA=yes\n"));
	ck_assert_ptr_null(strstr(out, "MKI_UNIT_HOST_ONLY"));
	ck_assert_ptr_null(strstr(out, "MKIMAGE_NAME")); /* only hooks get the hooks' variables */
	ck_assert_ptr_nonnull(strstr(out, "\n0\n/\n")); /* root, in "/" of the tree */
	free(out);
	unit_target_release(&u);
}
END_TEST

/* Outside the tree (an outside hook): on the host filesystem, with the same environment. */
START_TEST(runs_on_the_host_without_a_root)
{
	char file[] = "/tmp/mki-unit-host-XXXXXX", cmd[128], *out;
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct unit_target u;
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0666), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "echo \"$HOME $LC_ALL\" > %s", file);
	unit_target_init(&u);
	ck_assert_int_eq(target_run(&u.t, NULL, argv, NULL, 30, "the host test"), 0);
	out = unit_read("/", file);
	ck_assert_str_eq(out, "/root C.UTF-8\n");
	free(out);
	unlink(file);
	unit_target_release(&u);
}
END_TEST

/* Run `script` in the tree as `what`; its return, and the log in `*log` (new string). */
static int run_logged(struct unit_target *u, const char *script, unsigned timeout, char **log)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	char logf[] = "/tmp/mki-unit-log-XXXXXX";
	int ret;

	unit_log_capture(logf);
	ret = target_run(&u->t, u->t.root, argv, NULL, timeout, "the step 'x'");
	*log = unit_log_text(logf);
	unlink(logf);
	return ret;
}

START_TEST(failure_is_told_with_the_last_lines)
{
	struct unit_target u;
	char *log;

	unit_target_init(&u);
	ck_assert_int_eq(run_logged(&u, "echo one; echo two; exit 3", 30, &log), -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "error: the step 'x' failed with exit status 3; last "
					  "lines of its output:\nmkimage: error:   | one\n"
					  "mkimage: error:   | two\n"));
	free(log);
	ck_assert_int_eq(run_logged(&u, "exit 4", 30, &log), -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "the step 'x' failed with exit status 4; it printed "
					  "nothing"));
	free(log);
	ck_assert_int_eq(run_logged(&u, "kill -TERM $$", 30, &log), -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "the step 'x' was killed by signal 15 ("));
	free(log);
	/* success says nothing at error or warning level */
	ck_assert_int_eq(run_logged(&u, "echo fine", 30, &log), 0);
	ck_assert_ptr_null(strstr(log, "error"));
	ck_assert_ptr_null(strstr(log, "warning"));
	free(log);
	unit_target_release(&u);
}
END_TEST

START_TEST(timeout_and_leftovers)
{
	struct unit_target u;
	char *log;

	unit_target_init(&u);
	ck_assert_int_eq(run_logged(&u, "echo started; sleep 20", 1, &log), -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "the step 'x' did not finish within 1 s and was killed; "
					  "last lines of its output:\nmkimage: error:   | started"));
	free(log);
	/* a daemon left behind is killed and named, but the step succeeded */
	ck_assert_int_eq(run_logged(&u, "sleep 20 & exit 0", 30, &log), 0);
	/* by name: 'sleep', or 'sh' when caught between fork and exec */
	ck_assert_ptr_nonnull(strstr(log, "warning: the step 'x' left '"));
	ck_assert_ptr_nonnull(strstr(log, "' running when it ended; killed"));
	free(log);
	unit_target_release(&u);
}
END_TEST

/* The program interpreter (PT_INTERP) of the ELF file `path`, or NULL. */
static char *interp_of(const char *path)
{
	char *text = unit_read("/", path), *interp = NULL;
	const Elf64_Ehdr *e64 = (const void *)text;
	const Elf32_Ehdr *e32 = (const void *)text;
	int i;

	if (!text)
		return NULL;
	for (i = 0; e64->e_ident[EI_CLASS] == ELFCLASS64 && i < e64->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(text + e64->e_phoff + i * e64->e_phentsize);

		if (ph->p_type == PT_INTERP)
			interp = strdup(text + ph->p_offset);
	}
	for (i = 0; e32->e_ident[EI_CLASS] == ELFCLASS32 && i < e32->e_phnum; i++) {
		const Elf32_Phdr *ph = (const void *)(text + e32->e_phoff + i * e32->e_phentsize);

		if (ph->p_type == PT_INTERP)
			interp = strdup(text + ph->p_offset);
	}
	free(text);
	return interp;
}

/* Copy the host's file `path` to the same path in `tree`, making its directories. */
static void copy_in(const char *tree, const char *path)
{
	char rel[512], *p;
	FILE *in = fopen(path, "re"), *out;
	int c;

	snprintf(rel, sizeof(rel), "%s", path + 1);
	for (p = strchr(rel, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		unit_mkdir(tree, rel);
		*p = '/';
	}
	ck_assert_ptr_nonnull(in);
	unit_write(tree, rel, "", 0755);
	snprintf(rel, sizeof(rel), "%s%s", tree, path);
	out = fopen(rel, "we");
	ck_assert_ptr_nonnull(out);
	while ((c = fgetc(in)) != EOF)
		fputc(c, out);
	fclose(in);
	fclose(out);
}

/* Point the target at another tree, made by the test (only what it copied in). */
static void retarget(struct unit_target *u, char *dir)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chown(dir, idshift_tree_uid(0), idshift_tree_gid(0)), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	close(u->rootfd);
	u->rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(u->rootfd, 0);
	u->t.root = dir;
	u->t.rootfd = u->rootfd;
}

/* Each arch's libc must start in the tree: natively here; no libc, nothing to probe. */
START_TEST(archs_are_registered_and_probed)
{
	const struct arch *host = arch_find(arch_host());
	char tree[] = "/tmp/mki-unit-libc-XXXXXX", libc[256], logf[] = "/tmp/mki-unit-log-XXXXXX";
	char *interp, *log, want[512];
	struct strv archs = { 0 };
	struct unit_target u;

	unit_target_init(&u);
	retarget(&u, tree);
	snprintf(libc, sizeof(libc), "/usr/lib/%s/libc.so.6", host->triplet);
	interp = interp_of(libc);
	ck_assert_ptr_nonnull(interp);
	copy_in(tree, libc);
	copy_in(tree, interp);
	log_set_level(LOG_DEBUG);
	unit_log_capture(logf);
	strv_push(&archs, arch_host());
	ck_assert_int_eq(target_setup_archs(&u.t, &archs), 0);
	log = unit_log_text(logf);
	ck_assert_msg(strstr(log, "GNU C Library"), "the tree's libc did not run:\n%s", log);
	free(log);
	/* a libc that does not start: the arch cannot be used */
	unit_write(tree, libc + 1, "not a program\n", 0755);
	ck_assert_int_eq(target_setup_archs(&u.t, &archs), -MKI_E_SANDBOX);
	log = unit_log_text(logf);
	snprintf(want, sizeof(want), "error: running %s binaries (%s, natively) failed", host->name,
		 libc);
	ck_assert_msg(strstr(log, want), "'%s' not in:\n%s", want, log);
	free(log);
	/* an arch without a libc in the tree is not probed; an unknown one is refused */
	unlink(logf);
	strv_release(&archs);
	strv_push(&archs, "nonesuch");
	ck_assert_int_eq(target_setup_archs(&u.t, &archs), -MKI_E_SANDBOX);
	strv_release(&archs);
	free(interp);
	unit_tree_remove(tree);
	u.rootfd = open(u.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	unit_target_release(&u);
}
END_TEST

Suite *target_suite(void)
{
	Suite *s = suite_create("target");
	TCase *tc = tcase_create("target");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, init_sets_the_environment);
	UNIT_ADD_SANDBOXED(tc, runs_in_the_tree_with_a_clean_environment);
	UNIT_ADD_SANDBOXED(tc, runs_on_the_host_without_a_root);
	UNIT_ADD_SANDBOXED(tc, failure_is_told_with_the_last_lines);
	UNIT_ADD_SANDBOXED(tc, timeout_and_leftovers);
	UNIT_ADD_SANDBOXED(tc, archs_are_registered_and_probed);
	suite_add_tcase(s, tc);
	return s;
}
