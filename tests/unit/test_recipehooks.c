#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/recipehooks.h"
#include "lib/err.h"
#include "unit_target.h"

/* A hook of `u`'s recipe running `script` (written to a host file), at recipe line `line`. */
static void add_hook(struct unit_target *u, const char *name, enum hook_where where,
		     const char *script, int line)
{
	struct recipe_hook *h;
	char path[] = "/tmp/mki-unit-hook-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unit_write("/", path + 1, script, 0755);
	u->r.hooks = realloc(u->r.hooks, (u->r.n_hooks + 1) * sizeof(*h));
	h = &u->r.hooks[u->r.n_hooks++];
	*h = (struct recipe_hook){ .name = xstrdup(name), .script = xstrdup(path), .where = where,
				   .timeout = 30, .line = line };
}

static void release_hooks(struct unit_target *u)
{
	for (size_t i = 0; i < u->r.n_hooks; i++) {
		if (strncmp(u->r.hooks[i].script, "/nonexistent", 12))
			unlink(u->r.hooks[i].script);
		free(u->r.hooks[i].script);
		free(u->r.hooks[i].name);
	}
	free(u->r.hooks);
	unit_target_release(u);
}

/* Nothing of a hook's copy is left at the tree's root. */
static void no_copies(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		ck_assert_msg(strncmp(e->d_name, ".mkimage-hook-", 14), "'%s' left in the tree",
			      e->d_name);
	closedir(d);
}

START_TEST(hooks_run_in_recipe_order_where_they_belong)
{
	struct unit_target u;
	char *out, want[512];

	unit_target_init(&u);
	add_hook(&u, "first", HOOK_INSIDE,
		 "#!/bin/sh\necho \"in $MKIMAGE_NAME $MKIMAGE_ARCH $MKIMAGE_ARCHS ${0%%-*}"
		 " ${MKIMAGE_ROOT-unset}\" >> /order\n", 3);
	add_hook(&u, "second", HOOK_OUTSIDE,
		 "#!/bin/sh\necho \"out $MKIMAGE_NAME $MKIMAGE_ROOT\" >> "
		 "\"$MKIMAGE_ROOT/order\"\n", 9);
	add_hook(&u, "third", HOOK_INSIDE, "#!/bin/sh\necho third >> /order\n", 12);
	ck_assert_int_eq(recipehooks_run(&u.t, &u.r), 0);
	out = unit_read(u.dir, "order");
	snprintf(want, sizeof(want), "in board %s %s /.mkimage unset\nout board %s\nthird\n",
		 arch_host(), arch_host(), u.dir);
	ck_assert_str_eq(out, want);
	free(out);
	no_copies(u.dir);
	release_hooks(&u);
}
END_TEST

/* The first failing hook stops the rest; its name, side and recipe line are in the error. */
START_TEST(failing_hook_stops_the_rest)
{
	struct unit_target u;
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *log;

	unit_target_init(&u);
	add_hook(&u, "breaks", HOOK_INSIDE, "#!/bin/sh\necho cannot do it\nexit 2\n", 7);
	add_hook(&u, "after", HOOK_OUTSIDE, "#!/bin/sh\ntouch \"$MKIMAGE_ROOT/after\"\n", 8);
	unit_log_capture(logf);
	ck_assert_int_eq(recipehooks_run(&u.t, &u.r), -MKI_E_HOOK);
	log = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(log, "error: hook 'breaks' (inside, /recipes/board.cfg:7) "
					  "failed with exit status 2; last lines of its output:\n"
					  "mkimage: error:   | cannot do it"));
	free(log);
	ck_assert(!unit_exists(u.dir, "after"));
	no_copies(u.dir);
	unlink(logf);
	release_hooks(&u);
}
END_TEST

START_TEST(outside_hook_failure)
{
	struct unit_target u;
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *log;

	unit_target_init(&u);
	add_hook(&u, "host-side", HOOK_OUTSIDE, "#!/bin/sh\nexit 5\n", 4);
	unit_log_capture(logf);
	ck_assert_int_eq(recipehooks_run(&u.t, &u.r), -MKI_E_HOOK);
	log = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(log, "error: hook 'host-side' (outside, /recipes/board.cfg:4) "
					  "failed with exit status 5; it printed nothing"));
	free(log);
	unlink(logf);
	release_hooks(&u);
}
END_TEST

START_TEST(unreadable_script)
{
	struct unit_target u;
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *log;

	unit_target_init(&u);
	add_hook(&u, "gone", HOOK_INSIDE, "", 5);
	unlink(u.r.hooks[0].script);
	free(u.r.hooks[0].script);
	u.r.hooks[0].script = xstrdup("/nonexistent/hook.sh");
	unit_log_capture(logf);
	ck_assert_int_eq(recipehooks_run(&u.t, &u.r), -MKI_E_HOOK);
	log = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(log, "error: cannot read hook 'gone' script "
					  "'/nonexistent/hook.sh': "));
	free(log);
	no_copies(u.dir);
	unlink(logf);
	release_hooks(&u);
}
END_TEST

Suite *recipehooks_suite(void)
{
	Suite *s = suite_create("recipehooks");
	TCase *tc = tcase_create("recipehooks");

	tcase_set_timeout(tc, 30);
	UNIT_ADD_SANDBOXED(tc, hooks_run_in_recipe_order_where_they_belong);
	UNIT_ADD_SANDBOXED(tc, failing_hook_stops_the_rest);
	UNIT_ADD_SANDBOXED(tc, outside_hook_failure);
	UNIT_ADD_SANDBOXED(tc, unreadable_script);
	suite_add_tcase(s, tc);
	return s;
}
