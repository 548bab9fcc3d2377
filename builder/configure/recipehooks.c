/*
 * The recipe's hooks, in recipe order: an inside hook is copied into the tree and run there as
 * root in the sandbox (emulated when foreign); an outside hook runs on the host, in the sandbox
 * too, with MKIMAGE_ROOT naming the tree.
 */
#include "recipehooks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "sandbox/idshift.h"

#define SCRIPT_MAX (16u << 20)

/* Copy the hook into the tree, run it there, remove it. */
static int hook_inside(const struct target *t, const struct recipe_hook *h, const char *what)
{
	char *rel = NULL, *inside = NULL;
	const char *kind = NULL;
	struct buf script = { 0 };
	const char *argv[2] = { NULL, NULL };
	int fd, ret, r;

	ret = readfile_read(h->script, SCRIPT_MAX, &script, &kind);
	if (ret == -MKI_E_INTERRUPTED)
		goto out;
	if (ret) {
		log_error("cannot read hook '%s' script '%s': %s", h->name, h->script,
			  readfile_why(ret, kind));
		ret = -MKI_E_HOOK;
		goto out;
	}
	/*
	 * At the tree's root, which is never a link: /var/tmp may be one by now (a script can point
	 * it anywhere, even at nothing) and /tmp is a tmpfs in the command's namespace.
	 */
	fd = beneath_mkstemp(t->rootfd, ".", ".mkimage-hook-", &rel);
	/* A short write on a full disk leaves errno alone: take the error write_all returns. */
	ret = fd < 0 ? fd : fsutil_write_all(fd, script.p, script.len);
	if (!ret && (fchmod(fd, 0755) || fchown(fd, idshift_tree_uid(0), idshift_tree_gid(0))))
		ret = -errno;
	if (fd >= 0 && close(fd) < 0 && !ret)
		ret = -errno;
	if (ret) {
		log_error("cannot copy hook '%s' into '%s': %s", h->name, t->root,
			  strerror(-ret));
		if (fd >= 0)
			beneath_unlink(t->rootfd, rel, 0);
		ret = -MKI_E_HOOK;
		goto out;
	}
	inside = xasprintf("/%s", rel);
	argv[0] = inside;
	ret = target_run_hook(t, t->root, argv, (const char *const *)t->hook_env.v, h->timeout,
			      what);
	if ((r = beneath_unlink(t->rootfd, rel, 0)) && r != -ENOENT && !ret) {
		log_error("cannot remove the copy of hook '%s' ('%s') from the tree: %s", h->name,
			  inside, strerror(-r));
		ret = -MKI_E_HOOK;
	}
out:
	buf_release(&script);
	free(rel);
	free(inside);
	return ret;
}

static int hook_outside(const struct target *t, const struct recipe_hook *h, const char *what)
{
	const char *argv[] = { h->script, NULL };
	struct strv ev = { 0 };
	size_t i;
	int ret;

	for (i = 0; i < t->hook_env.n; i++)
		strv_push(&ev, t->hook_env.v[i]);
	strv_push_take(&ev, xasprintf("MKIMAGE_ROOT=%s", t->root));
	ret = target_run_hook(t, NULL, argv, (const char *const *)ev.v, h->timeout, what);
	strv_release(&ev);
	return ret;
}

int recipehooks_run(const struct target *t, const struct recipe *r)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < r->n_hooks; i++) {
		const struct recipe_hook *h = &r->hooks[i];
		char *what = xasprintf("hook '%s' (%s, %s:%d)", h->name,
				       h->where == HOOK_INSIDE ? "inside" : "outside", r->file,
				       h->line);
		double t0 = log_now();

		ret = h->where == HOOK_INSIDE ? hook_inside(t, h, what) : hook_outside(t, h, what);
		if (!ret)
			log_info("hook '%s': %.1f s", h->name, log_now() - t0);
		free(what);
	}
	return ret;
}
