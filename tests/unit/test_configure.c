#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/configure.h"
#include "lib/err.h"
#include "unit_target.h"

static void add_entry(struct plan *p, const char *name, const char *arch, const char *ma)
{
	struct plan_entry *e;

	ALLOC_GROW(p->v, p->n + 1, p->alloc);
	e = &p->v[p->n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	e->arch = xstrdup(arch);
	e->version = xstrdup("1.0");
	e->multi_arch = xstrdup(ma);
}

/* Run `fn` on `u` with the log captured; the log (new string). */
static char *logged(int (*fn)(const struct target *), struct unit_target *u, int want)
{
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *log;

	unit_log_capture(logf);
	ck_assert_int_eq(fn(&u->t), want);
	log = unit_log_text(logf);
	unlink(logf);
	return log;
}

/* A plain directory as the tree (no namespace): what is checked from the host side. */
static void plain_tree(struct unit_target *u)
{
	unit_target_data(u);
	snprintf(u->dir, sizeof(u->dir), "/tmp/mki-unit-tree-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(u->dir));
	u->rootfd = open(u->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(u->rootfd, 0);
	target_init(&u->t, u->dir, u->rootfd, &u->p, &u->r, &u->st);
}

START_TEST(needs_the_targets_dpkg)
{
	struct unit_target u;
	char *log;

	plain_tree(&u);
	log = logged(configure_has_dpkg, &u, -MKI_E_NOTYET);
	ck_assert_ptr_nonnull(strstr(log, "the package set has no dpkg: configuring a tree "
					  "without the target's dpkg is not yet supported (add "
					  "'dpkg' to the packages)"));
	free(log);
	unit_mkdir(u.dir, "usr");
	unit_mkdir(u.dir, "usr/bin");
	unit_write(u.dir, "usr/bin/dpkg", "", 0755);
	log = logged(configure_has_dpkg, &u, 0);
	ck_assert_str_eq(log, "");
	free(log);
	unit_target_release(&u);
}
END_TEST

/* Every package must be "install ok installed"; dpkg --audit is not even asked otherwise. */
START_TEST(verify_reads_the_status)
{
	struct unit_target u;
	char *log;

	plain_tree(&u);
	log = logged(configure_verify, &u, -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "cannot read '/var/lib/dpkg/status' in the tree '"));
	free(log);
	unit_mkdir(u.dir, "var");
	unit_mkdir(u.dir, "var/lib");
	unit_mkdir(u.dir, "var/lib/dpkg");
	unit_write(u.dir, "var/lib/dpkg/status",
		   "Package: good\nStatus: install ok installed\nVersion: 1\n\n"
		   "Package: half\nStatus: install ok half-configured\nVersion: 1\n\n"
		   "Package: trig\nStatus: install ok triggers-pending\n", 0644);
	log = logged(configure_verify, &u, -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "2 package(s) are not fully configured: half (install ok "
					  "half-configured), trig (install ok triggers-pending)"));
	free(log);
	unit_target_release(&u);
}
END_TEST

static const char preinst[] =
	"#!/bin/sh\necho \"$DPKG_MAINTSCRIPT_PACKAGE $DPKG_MAINTSCRIPT_ARCH $DPKG_MAINTSCRIPT_NAME "
	"$1 $DPKG_ROOT. $DPKG_ADMINDIR\" >> /preinst.log\n";

/* preinst install of each package, base-passwd first, then dpkg --configure -a, in the tree. */
START_TEST(preinsts_then_dpkg)
{
	struct unit_target u;
	char *log, want[512];
	const char *h = arch_host();

	unit_target_init(&u);
	add_entry(&u.p, "libfoo", h, "same");
	add_entry(&u.p, "bar", "all", "no");
	add_entry(&u.p, "base-passwd", h, "no");
	snprintf(want, sizeof(want), "var/lib/dpkg/info/libfoo:%s.preinst", h);
	unit_write(u.dir, want, preinst, 0755);
	unit_write(u.dir, "var/lib/dpkg/info/base-passwd.preinst", preinst, 0755);
	ck_assert_int_eq(configure_packages(&u.t, &u.p, &u.r), 0);
	log = unit_read(u.dir, "preinst.log");
	snprintf(want, sizeof(want), "base-passwd %s preinst install . /var/lib/dpkg\n"
		 "libfoo %s preinst install . /var/lib/dpkg\n", h, h);
	ck_assert_str_eq(log, want);
	free(log);
	unit_target_release(&u);
}
END_TEST

START_TEST(failing_preinst_stops)
{
	struct unit_target u;
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *log;

	unit_target_init(&u);
	add_entry(&u.p, "first", "all", "no");
	add_entry(&u.p, "second", "all", "no");
	unit_write(u.dir, "var/lib/dpkg/info/first.preinst", "#!/bin/sh\necho no room\nexit 1\n",
		   0755);
	unit_write(u.dir, "var/lib/dpkg/info/second.preinst", preinst, 0755);
	unit_log_capture(logf);
	ck_assert_int_eq(configure_packages(&u.t, &u.p, &u.r), -MKI_E_HOOK);
	log = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(log, "the preinst of 'first' (1.0) failed with exit status 1; "
					  "last lines of its output:\nmkimage: error:   | no room"));
	free(log);
	ck_assert(!unit_exists(u.dir, "preinst.log"));
	unlink(logf);
	unit_target_release(&u);
}
END_TEST

/* After configuration: dpkg --audit, run in the tree, must have nothing to say. */
START_TEST(verify_asks_dpkg_audit)
{
	struct unit_target u;
	char *log, list[128];

	unit_target_init(&u);
	unit_write(u.dir, "var/lib/dpkg/status",
		   "Package: good\nStatus: install ok installed\nVersion: 1\nArchitecture: all\n"
		   "Maintainer: nobody\nDescription: test\n", 0644);
	unit_write(u.dir, "var/lib/dpkg/info/good.list", "/.\n", 0644);
	unit_write(u.dir, "var/lib/dpkg/info/good.md5sums", "", 0644);
	log = logged(configure_verify, &u, 0);
	ck_assert_ptr_null(strstr(log, "error"));
	free(log);
	/* a package without its file list is what dpkg --audit reports */
	snprintf(list, sizeof(list), "%s/var/lib/dpkg/info/good.list", u.dir);
	ck_assert_int_eq(unlink(list), 0);
	log = logged(configure_verify, &u, -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "'dpkg --audit' in the configured tree is not clean"));
	ck_assert_ptr_nonnull(strstr(log, "good"));
	free(log);
	unit_target_release(&u);
}
END_TEST

Suite *configure_suite(void)
{
	Suite *s = suite_create("configure");
	TCase *tc = tcase_create("configure");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, needs_the_targets_dpkg);
	tcase_add_test(tc, verify_reads_the_status);
	UNIT_ADD_SANDBOXED(tc, preinsts_then_dpkg);
	UNIT_ADD_SANDBOXED(tc, failing_preinst_stops);
	UNIT_ADD_SANDBOXED(tc, verify_asks_dpkg_audit);
	suite_add_tcase(s, tc);
	return s;
}
