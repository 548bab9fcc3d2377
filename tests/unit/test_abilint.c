/*
 * The multiarch lint's ABI check on control data: a package the plan records as a user of a
 * rename (met only through the old name) whose Pre-Depends or Depends name the old name is one
 * warning per package and name; packages not recorded, and a control file that does not name
 * the old name, are quiet.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/readfile.h"
#include "unpack/abilint.h"

struct fix {
	struct plan plan;
	struct plan_entry pe[4];
	struct pkg pkgs[4];
	size_t n;
	char log[64];
};

static void setup(struct fix *f)
{
	int fd;

	memset(f, 0, sizeof(*f));
	snprintf(f->log, sizeof(f->log), "/tmp/mki-unit-abilint.XXXXXX");
	fd = mkstemp(f->log);
	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	close(fd);
	plan_add_abi_rename(&f->plan, "armhf", "libfoo3", "libfoo3t64");
	plan_add_abi_rename(&f->plan, "armhf", "libbar2", "libbar2t64");
}

static void add(struct fix *f, const char *name, const char *arch, const char *fields)
{
	char *text = xasprintf("Package: %s\nVersion: 1.0\nArchitecture: %s\n%s", name, arch,
			       fields);
	const char *why = NULL;

	f->pe[f->n].name = (char *)(uintptr_t)name;
	f->pe[f->n].arch = (char *)(uintptr_t)arch;
	f->pe[f->n].version = (char *)(uintptr_t)"1.0";
	f->pkgs[f->n].pe = &f->pe[f->n];
	ck_assert_int_eq(deb_control_parse(&f->pkgs[f->n].ctl, text, NULL, &why), 0);
	free(text);
	f->n++;
}

static char *finish(struct fix *f, unsigned want)
{
	struct buf b = { 0 };
	size_t i;

	ck_assert_uint_eq(abilint_warn(&f->plan, f->pkgs, f->n), want);
	for (i = 0; i < f->n; i++)
		deb_control_release(&f->pkgs[i].ctl);
	plan_release(&f->plan);
	ck_assert_int_eq(readfile_read(f->log, 1 << 20, &b, NULL), 0);
	unlink(f->log);
	return buf_detach(&b);
}

START_TEST(users_warned)
{
	struct fix f;
	char *log;

	setup(&f);
	plan_add_abi_user(&f.plan, "armhf", "libfoo3", "app:armhf");
	plan_add_abi_user(&f.plan, "armhf", "libbar2", "app:armhf");
	plan_add_abi_user(&f.plan, "armhf", "libfoo3", "tool:armhf");
	plan_add_abi_user(&f.plan, "armhf", "libfoo3", "tool:armhf"); /* kept once */
	plan_add_abi_user(&f.plan, "armel", "libfoo3", "other:armel"); /* no such rename */
	ck_assert_uint_eq(f.plan.abi_renames[0].users.n, 2);
	add(&f, "app", "armhf", "Pre-Depends: libbar2 (>= 2)\nDepends: libc6, libfoo3 (>= 3.0)\n");
	add(&f, "tool", "armhf", "Depends: libfoo3:armhf | libfoo-shim\n");
	add(&f, "quiet", "armhf", "Depends: libfoo3\n");       /* not a user: met otherwise */
	log = finish(&f, 3);
	ck_assert_msg(strstr(log, "multiarch lint: 'app:armhf=1.0' names 'libfoo3' in its Depends, "
				  "the name of 'libfoo3t64' before Debian's 64-bit time_t "
				  "transition, met here only by a package providing 'libfoo3': on "
				  "armhf 'libfoo3t64' does not provide it, time_t and off_t related "
				  "structures changed size"),
		      "%s", log);
	ck_assert_msg(strstr(log, "; use a build of 'app' for this release"), "%s", log);
	ck_assert_msg(strstr(log, "'app:armhf=1.0' names 'libbar2' in its Pre-Depends"), "%s", log);
	ck_assert_msg(strstr(log, "'tool:armhf=1.0' names 'libfoo3' in its Depends"), "%s", log);
	ck_assert_msg(!strstr(log, "'quiet:"), "%s", log);
	free(log);
}
END_TEST

/* A user whose control data does not name the old name (it cannot, but the plan is not the
 * .deb): nothing; a plan without renames checks nothing. */
START_TEST(quiet)
{
	struct fix f;
	char *log;

	setup(&f);
	plan_add_abi_user(&f.plan, "armhf", "libfoo3", "app:armhf");
	if (_i)
		plan_release(&f.plan);
	add(&f, "app", "armhf", _i ? "Depends: libfoo3\n" : "Depends: libfoo3t64\n");
	log = finish(&f, 0);
	ck_assert_str_eq(log, "");
	free(log);
}
END_TEST

Suite *abilint_suite(void)
{
	Suite *s = suite_create("abilint");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, users_warned);
	tcase_add_loop_test(tc, quiet, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
