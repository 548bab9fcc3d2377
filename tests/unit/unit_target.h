/*
 * For the configure family's suites: a target (target.h) on a fake tree (sandboxed.h) in the
 * build namespace, with a recipe named "board" for the host's architecture and a fixed
 * SOURCE_DATE_EPOCH.
 */
#ifndef MKI_UNIT_TARGET_H
#define MKI_UNIT_TARGET_H

#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/target.h"
#include "debian/arch.h"
#include "sandboxed.h"

#define UNIT_SDE 1700000000

struct unit_target {
	char dir[64];
	int rootfd;
	struct plan p;
	struct recipe r;
	struct settings st;
	struct target t;
};

/* The plan, recipe and settings only (no tree, no namespace): for target_init() alone. */
static inline void unit_target_data(struct unit_target *u)
{
	memset(u, 0, sizeof(*u));
	u->rootfd = -1;
	strv_push(&u->p.archs, arch_host());
	u->p.primary = xstrdup(arch_host());
	u->r.name = xstrdup("board");
	u->r.arch = xstrdup(arch_host());
	u->r.file = xstrdup("/recipes/board.cfg");
	u->r.hook_timeout = 60;
	u->st.source_date_epoch = UNIT_SDE;
}

/* Enter the build namespace, make the fake tree, set up the target on it. */
static inline void unit_target_init(struct unit_target *u)
{
	unit_target_data(u);
	log_set_level(LOG_WARN); /* the steps' timings: not what the suites check */
	unit_sandbox_enter();
	snprintf(u->dir, sizeof(u->dir), "/tmp/mki-unit-tree-XXXXXX");
	unit_fake_tree(u->dir);
	u->rootfd = open(u->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(u->rootfd, 0);
	target_init(&u->t, u->dir, u->rootfd, &u->p, &u->r, &u->st);
	/* the tree's usr is the host's, on the same filesystem: the size bound would walk it all */
	u->t.watch.max_tree_bytes = 0;
}

static inline void unit_target_release(struct unit_target *u)
{
	if (u->rootfd >= 0) {
		target_release(&u->t);
		close(u->rootfd);
		unit_tree_remove(u->dir);
	}
	plan_release(&u->p);
	free(u->r.name);
	free(u->r.arch);
	free(u->r.file);
}

#endif
