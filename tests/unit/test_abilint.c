/*
 * The multiarch lint's ABI check on control data: an old library name in Pre-Depends or Depends,
 * in any alternative, of a package of an architecture whose plan records the rename, is one
 * warning per package and name; nothing on other architectures or for the new name.
 */
#include <check.h>
#include <fcntl.h>
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
	f->plan.primary = xstrdup("armhf");
	plan_add_abi_rename(&f->plan, "armhf", "libfoo3", "libfoo3t64");
	plan_add_abi_rename(&f->plan, "armhf", "libfoo3", "libfoo3t64"); /* kept once */
	ck_assert_uint_eq(f->plan.n_abi_renames, 1);
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

static char *finish(struct fix *f)
{
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < f->n; i++)
		deb_control_release(&f->pkgs[i].ctl);
	plan_release(&f->plan);
	ck_assert_int_eq(readfile_read(f->log, 1 << 20, &b, NULL), 0);
	unlink(f->log);
	return buf_detach(&b);
}

START_TEST(old_names_warned)
{
	struct fix f;
	char *log;

	setup(&f);
	add(&f, "either", "armhf", "Depends: libc6, libfoo3 (>= 3.0) | libfoo3t64\n");
	add(&f, "twice", "armhf", "Pre-Depends: libfoo3\nDepends: libfoo3:armhf (>= 3)\n");
	add(&f, "script", "all", "Depends: libfoo3\n"); /* all: the primary architecture's */
	add(&f, "new", "armhf", "Depends: libfoo3t64 (>= 3.1)\n");
	ck_assert_uint_eq(abilint_warn(&f.plan, f.pkgs, f.n), 3);
	log = finish(&f);
	ck_assert_msg(strstr(log, "multiarch lint: 'either:armhf=1.0' depends on 'libfoo3', the "
				  "name of 'libfoo3t64' before Debian's 64-bit time_t transition: "
				  "on armhf, where 'libfoo3t64' does not provide it, time_t and "
				  "off_t related structures changed size"),
		      "%s", log);
	ck_assert_msg(strstr(log, "use a build of 'either' for this release"), "%s", log);
	ck_assert_msg(strstr(log, "'twice:armhf=1.0'") && strstr(log, "'script:all=1.0'"), "%s",
		      log);
	ck_assert_msg(!strstr(log, "'new:"), "%s", log);
	free(log);
}
END_TEST

/*
 * Quiet: armel's plan records no rename (there the new name provides the old one), and a plan
 * without renames checks nothing.
 */
START_TEST(quiet)
{
	struct fix f;
	char *log;

	setup(&f);
	if (_i)
		plan_release(&f.plan);
	add(&f, "app", _i ? "armhf" : "armel", "Depends: libfoo3\n");
	ck_assert_uint_eq(abilint_warn(&f.plan, f.pkgs, f.n), 0);
	log = finish(&f);
	ck_assert_str_eq(log, "");
	free(log);
}
END_TEST

Suite *abilint_suite(void)
{
	Suite *s = suite_create("abilint");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, old_names_warned);
	tcase_add_loop_test(tc, quiet, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
