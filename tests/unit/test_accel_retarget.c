/*
 * accel_retarget() on the host's own dpkg programs: a copy made to name another architecture
 * says so when the host runs it (the unit tests run on a Debian host), and anything ambiguous
 * is refused with the file unchanged.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "configure/accel_internal.h"
#include "debian/arch.h"

static char *copy_of(const char *src)
{
	char *dst = strdup("/tmp/mkimage-retarget-XXXXXX"), cmd[512];
	int fd = mkstemp(dst);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 755 %s", src, dst, dst);
	ck_assert_int_eq(system(cmd), 0);
	return dst;
}

/* The first line `prog args` prints, run by the host. */
static void first_line(const char *prog, const char *args, char *out, size_t n)
{
	char cmd[512];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s %s", prog, args);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(out, (int)n, f));
	/* the rest read too: a program writing into a closed pipe would die of SIGPIPE */
	while (fgetc(f) != EOF)
		;
	ck_assert_int_eq(pclose(f), 0);
	out[strcspn(out, "\n")] = 0;
}

static int same_file(const char *a, const char *b)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cmp -s %s %s", a, b);
	return system(cmd) == 0;
}

static void retargeted_dpkg_says(const char *arch)
{
	char *dpkg = copy_of("/usr/bin/dpkg"), line[256], want[64];
	const char *why;

	ck_assert_int_eq(accel_retarget(dpkg, arch_host(), arch, &why), 2);
	first_line(dpkg, "--print-architecture", line, sizeof(line));
	ck_assert_str_eq(line, arch);
	first_line(dpkg, "--version", line, sizeof(line));
	snprintf(want, sizeof(want), " (%s).", arch);
	ck_assert_msg(strstr(line, want), "'%s' lacks '%s'", line, want);
	unlink(dpkg);
	free(dpkg);
}

START_TEST(retargeted_dpkg_names_the_target)
{
	retargeted_dpkg_says("armhf");
	retargeted_dpkg_says("i386"); /* shorter: the release text keeps its ")" */
}
END_TEST

/* dpkg-query answers the database's questions with the target's names. */
START_TEST(retargeted_query_and_statoverride)
{
	char *query = copy_of("/usr/bin/dpkg-query"), *stat = copy_of("/usr/bin/dpkg-statoverride");
	char line[256];
	const char *why;

	ck_assert_int_eq(accel_retarget(query, arch_host(), "arm64", &why), 2);
	first_line(query, "--version", line, sizeof(line));
	ck_assert_msg(strstr(line, " (arm64)."), "%s", line);
	/* dpkg-statoverride names no architecture but in its release text. */
	ck_assert_int_eq(accel_retarget(stat, arch_host(), "arm64", &why), 1);
	unlink(query);
	unlink(stat);
	free(query);
	free(stat);
}
END_TEST

START_TEST(program_without_the_name_is_unchanged)
{
	char *t = copy_of("/bin/true");
	const char *why;

	ck_assert_int_eq(accel_retarget(t, arch_host(), "armhf", &why), 0);
	ck_assert(same_file(t, "/bin/true"));
	unlink(t);
	free(t);
}
END_TEST

START_TEST(ambiguous_or_too_long_is_refused)
{
	char *dpkg = copy_of("/usr/bin/dpkg"), *t = copy_of("/bin/true"), cmd[512];
	const char *why;

	/* The host's name outside read-only data (here: after every section). */
	snprintf(cmd, sizeof(cmd), "printf '\\0%s\\0' >>%s", arch_host(), t);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_lt(accel_retarget(t, arch_host(), "armhf", &why), 0);
	ck_assert_ptr_nonnull(why);
	ck_assert(strstr(why, "outside"));
	/* A name longer than the host's does not fit. */
	ck_assert_int_eq(accel_retarget(dpkg, arch_host(), "riscv64", &why), -ENAMETOOLONG);
	ck_assert(same_file(dpkg, "/usr/bin/dpkg"));
	unlink(dpkg);
	unlink(t);
	free(dpkg);
	free(t);
}
END_TEST

Suite *accel_retarget_suite(void)
{
	Suite *s = suite_create("accel_retarget");
	TCase *tc = tcase_create("accel_retarget");

	/* The host's dpkg names its architecture in 5 letters, as amd64 and arm64 do. */
	if (strlen(arch_host()) == 5 && access("/usr/bin/dpkg", X_OK) == 0) {
		tcase_add_test(tc, retargeted_dpkg_names_the_target);
		tcase_add_test(tc, retargeted_query_and_statoverride);
		tcase_add_test(tc, program_without_the_name_is_unchanged);
		tcase_add_test(tc, ambiguous_or_too_long_is_refused);
	}
	suite_add_tcase(s, tc);
	return s;
}
