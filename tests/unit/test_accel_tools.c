/*
 * The twins' tables (accel_tools.c) hold together: a package whose programs are limited is a
 * tool package, a machine-dependent program is never a twin's, and every FLAGS word accel.c
 * writes is one mkimage-exec reads (a word it did not know would make its table line no match,
 * silently emulating the program).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/accel_internal.h"
#include "configure/execshim.h"

static int in(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

START_TEST(limited_packages_are_tool_packages)
{
	static const struct {
		const char *package, *program;
	} limited[] = { { "systemd", "systemctl" }, { "udev", "systemd-hwdb" },
			{ "python3.11-minimal", "python3.11" }, { "openssh-client", "ssh-keygen" },
			{ "openssl", "openssl" }, { "util-linux", "getopt" }, { "bsdutils", "logger" } };

	for (size_t i = 0; i < sizeof(limited) / sizeof(limited[0]); i++) {
		ck_assert_msg(in(accel_tools_packages(), limited[i].package), "%s",
			      limited[i].package);
		ck_assert_msg(in(accel_tools_only(limited[i].package), limited[i].program), "%s",
			      limited[i].program);
	}
	/* util-linux's other programs (mount, fdisk, ...) and bsdutils' (script, wall) are not */
	ck_assert(!in(accel_tools_only("util-linux"), "mount"));
	ck_assert(!in(accel_tools_only("bsdutils"), "script"));
	ck_assert_ptr_null(accel_tools_only("coreutils")); /* all of them */
	ck_assert(in(accel_tools_dlopened("libkmod2"), "liblzma5"));
	ck_assert_ptr_null(accel_tools_dlopened("coreutils"));
}
END_TEST

START_TEST(machine_dependent_programs_are_not_limited_twins)
{
	static const char *const machine[] = { "uname", "arch", "nproc", "stdbuf", "chroot" };

	for (size_t i = 0; i < sizeof(machine) / sizeof(machine[0]); i++) {
		ck_assert(accel_tools_machine_dependent(machine[i]));
		ck_assert_ptr_null(accel_tools_flags(machine[i]));
	}
	ck_assert(!accel_tools_machine_dependent("sed"));
	ck_assert(accel_tools_dpkg_program("update-alternatives"));
	ck_assert(!accel_tools_dpkg_program("dpkg-deb")); /* never needed fast */
	ck_assert(accel_tools_machine_dependent("dpkg-deb"));
	ck_assert(accel_tools_python("python3.13"));
	ck_assert(accel_tools_lib_program("usr/lib/dracut/dracut-install"));
	ck_assert(!accel_tools_lib_program("usr/lib/dracut/dracut-install/x"));
}
END_TEST

/* Each FLAGS word accel.c may write makes a table line mkimage-exec matches. */
START_TEST(flags_words_are_read_by_mkimage_exec)
{
	static const char *const programs[] = { "dracut-install", "realpath", "readlink",
		"ssh-keygen", "openssl" };
	char table[] = "/tmp/mki-accel-tools-XXXXXX";
	struct stat sb;

	ck_assert_int_eq(stat("/bin/true", &sb), 0);
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
		struct execshim_hit hit = { 0 };
		const char *flags = accel_tools_flags(programs[i]);
		int fd = mkstemp(table);
		FILE *t = fd >= 0 ? fdopen(fd, "w") : NULL;

		ck_assert_ptr_nonnull(flags);
		ck_assert_ptr_nonnull(t);
		fprintf(t, "native %llu %llu %llu %llu %llu %s /n/%s\n",
			(unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino,
			(unsigned long long)sb.st_size, (unsigned long long)sb.st_mtim.tv_sec,
			(unsigned long long)sb.st_mtim.tv_nsec, flags, programs[i]);
		ck_assert_int_eq(fclose(t), 0);
		ck_assert_int_eq(execshim_lookup(table, "/bin/true", &hit), 0);
		ck_assert_msg(hit.native[0], "mkimage-exec does not read '%s' (%s)", flags,
			      programs[i]);
		ck_assert_int_eq(unlink(table), 0);
		memcpy(table + strlen(table) - 6, "XXXXXX", 6);
	}
}
END_TEST

Suite *accel_tools_suite(void)
{
	Suite *s = suite_create("accel_tools");
	TCase *tc = tcase_create("accel_tools");

	tcase_add_test(tc, limited_packages_are_tool_packages);
	tcase_add_test(tc, machine_dependent_programs_are_not_limited_twins);
	tcase_add_test(tc, flags_words_are_read_by_mkimage_exec);
	suite_add_tcase(s, tc);
	return s;
}
