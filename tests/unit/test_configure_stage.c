#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/configure.h"
#include "configure/overlay.h"
#include "lib/err.h"
#include "unit_target.h"

#define SSD_STANDIN "#!/bin/sh\nexit 0\n" /* unit_fake_tree()'s start-stop-daemon */

static void add_hook(struct recipe *r, const char *name, enum hook_where where,
		     const char *script)
{
	char path[] = "/tmp/mki-unit-hook-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unit_write("/", path + 1, script, 0755);
	r->hooks = realloc(r->hooks, (r->n_hooks + 1) * sizeof(*r->hooks));
	r->hooks[r->n_hooks++] = (struct recipe_hook){ .name = xstrdup(name),
		.script = xstrdup(path), .where = where, .timeout = 30, .line = 20 };
}

static void release(struct unit_target *u)
{
	for (size_t i = 0; i < u->r.n_hooks; i++) {
		unlink(u->r.hooks[i].script);
		free(u->r.hooks[i].script);
		free(u->r.hooks[i].name);
	}
	free(u->r.hooks);
	free(u->r.hostname);
	unit_target_release(u);
}

/* One installed package, "pkg", whose preinst `preinst` (a shell body) is run at configure. */
static void one_package(struct unit_target *u, const char *preinst)
{
	struct plan_entry *e;
	char script[256];

	ALLOC_GROW(u->p.v, u->p.n + 1, u->p.alloc);
	e = &u->p.v[u->p.n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup("pkg");
	e->arch = xstrdup("all");
	e->version = xstrdup("1.0");
	e->multi_arch = xstrdup("no");
	unit_write(u->dir, "var/lib/dpkg/status", "Package: pkg\nStatus: install ok installed\n"
		   "Version: 1.0\nArchitecture: all\nMaintainer: nobody\nDescription: test\n",
		   0644);
	unit_write(u->dir, "var/lib/dpkg/info/pkg.list", "/.\n", 0644);
	unit_write(u->dir, "var/lib/dpkg/info/pkg.md5sums", "", 0644);
	snprintf(script, sizeof(script), "#!/bin/sh\n%s\n", preinst);
	unit_write(u->dir, "var/lib/dpkg/info/pkg.preinst", script, 0755);
	u->st.no_native_tools = 1;
	u->r.hostname = xstrdup("board1");
}

/* The whole stage, as main.c runs it without a layer cache. */
static int configure_all(struct staging *s, const struct plan *p, const struct recipe *r,
			 const struct settings *st, struct overlay_report **ov)
{
	struct plan twins = { 0 };
	struct configure c;
	int ret = configure_init(&c, s, p, r, st);

	if (!ret)
		ret = configure_tree(&c, &twins, NULL);
	if (!ret)
		ret = configure_finish(&c, ov);
	configure_release(&c);
	return ret;
}

/* The stage on the fake tree; what it logged in `*log` (new string). */
static int run_hooks(struct unit_target *u, char **log)
{
	struct staging s = { .root = u->dir };
	struct overlay_report *ov = NULL;
	char logf[] = "/tmp/mki-unit-log-XXXXXX";
	int ret;

	unit_log_capture(logf);
	ret = configure_all(&s, &u->p, &u->r, &u->st, &ov);
	overlay_report_free(ov);
	*log = unit_log_text(logf);
	unlink(logf);
	return ret;
}

static void guards_gone(const char *dir)
{
	char *ssd = unit_read(dir, "usr/sbin/start-stop-daemon");

	ck_assert(!unit_exists(dir, "usr/sbin/policy-rc.d"));
	ck_assert(!unit_exists(dir, "usr/sbin/start-stop-daemon.mkimage-real"));
	ck_assert_str_eq(ssd, SSD_STANDIN);
	free(ssd);
}

START_TEST(tree_that_cannot_be_opened)
{
	char root[] = "/nonexistent/tree";
	struct unit_target u;
	struct staging s = { .root = root };
	struct overlay_report *ov = NULL;
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *log;

	unit_target_data(&u);
	unit_log_capture(logf);
	ck_assert_int_eq(configure_all(&s, &u.p, &u.r, &u.st, &ov), -MKI_E_HOOK);
	ck_assert_ptr_null(ov);
	log = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(log, "cannot open the staging tree '/nonexistent/tree': "));
	free(log);
	unlink(logf);
	unit_target_release(&u);
}
END_TEST

/*
 * The order: packages configured with the guards in place, then the identity files, then the
 * recipe's hooks (still guarded); a failing hook ends the step, and the guards go all the same.
 */
START_TEST(configure_identity_hooks_in_order)
{
	struct unit_target u;
	char *order, *log;

	unit_target_init(&u);
	one_package(&u, "/usr/sbin/policy-rc.d; echo \"preinst $?\" >> /order");
	add_hook(&u.r, "look", HOOK_INSIDE,
		 "#!/bin/sh\n/usr/sbin/policy-rc.d\n"
		 "echo \"hook $? $(cat /etc/hostname)\" >> /order\n");
	add_hook(&u.r, "fails", HOOK_OUTSIDE, "#!/bin/sh\nexit 3\n");
	ck_assert_int_eq(run_hooks(&u, &log), -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "error: hook 'fails' (outside, /recipes/board.cfg:20) "
					  "failed with exit status 3"));
	free(log);
	order = unit_read(u.dir, "order");
	ck_assert_str_eq(order, "preinst 101\nhook 101 board1\n");
	free(order);
	guards_gone(u.dir);
	ck_assert(!unit_exists(u.dir, "etc/machine-id")); /* what follows the hooks did not run */
	release(&u);
}
END_TEST

/* A failing preinst: no identity, no hooks, and the tree keeps no guard. */
START_TEST(failed_configuration_stops_before_the_hooks)
{
	struct unit_target u;
	char *log;

	unit_target_init(&u);
	one_package(&u, "exit 1");
	add_hook(&u.r, "never", HOOK_OUTSIDE, "#!/bin/sh\ntouch \"$MKIMAGE_ROOT/hook-ran\"\n");
	ck_assert_int_eq(run_hooks(&u, &log), -MKI_E_HOOK);
	ck_assert_ptr_nonnull(strstr(log, "error: the preinst of 'pkg' (1.0) failed with exit "
					  "status 1"));
	free(log);
	ck_assert(!unit_exists(u.dir, "hook-ran"));
	ck_assert(!unit_exists(u.dir, "etc/hostname"));
	guards_gone(u.dir);
	release(&u);
}
END_TEST

Suite *configure_stage_suite(void)
{
	Suite *s = suite_create("configure_stage");
	TCase *tc = tcase_create("configure_stage");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, tree_that_cannot_be_opened);
	UNIT_ADD_SANDBOXED(tc, configure_identity_hooks_in_order);
	UNIT_ADD_SANDBOXED(tc, failed_configuration_stops_before_the_hooks);
	suite_add_tcase(s, tc);
	return s;
}
