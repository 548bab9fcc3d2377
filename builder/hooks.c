/*
 * Configure the unpacked tree and run the recipe's hooks, in the sandbox. Maintainer scripts are
 * run by the target's own dpkg under emulation (dpkg's ordering, trigger and conffile semantics
 * exactly), after `preinst install` of every package, which dpkg itself would have run at unpack.
 */
#include "hooks.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "accel.h"
#include "arch.h"
#include "beneath.h"
#include "err.h"
#include "fsutil.h"
#include "identity.h"
#include "log.h"
#include "overlay.h"
#include "readfile.h"
#include "sandbox.h"

#define TAIL_LINES 20
#define CONFIGURE_TIMEOUT_MIN 1800
#define SCRIPT_MAX (16u << 20)
#define XATTR_LIST_MAX_BYTES 65536
#define TARGET_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define POLICY_RC_D "usr/sbin/policy-rc.d"
#define SSD "usr/sbin/start-stop-daemon"
#define SSD_REAL "usr/sbin/start-stop-daemon.mkimage-real"
#define SAVED_SUFFIX ".mkimage-saved"
#define STATUS_FILE "var/lib/dpkg/status"

struct ctx {
	struct stage *s;
	const struct plan *p, *twins;
	const struct recipe *r;
	const struct settings *st;
	struct strv env; /* the clean environment of every target command */
	struct strv hook_env; /* what hooks learn beyond it: MKIMAGE_NAME, _ARCH, _ARCHS */
	int rootfd; /* the tree; every host-side access goes through beneath.h */
	int policy_saved, policy_installed, ssd_diverted;
	struct accel accel; /* native tools, while maintainer scripts run */
	struct watchdog_opts watch; /* bounds on every command run in the tree */
};

static void env_init(struct ctx *c)
{
	char *archs = strv_join(&c->p->archs, " ");

	strv_push(&c->env, TARGET_PATH);
	strv_push(&c->env, "HOME=/root");
	strv_push(&c->env, "LC_ALL=C.UTF-8");
	strv_push(&c->env, "DEBIAN_FRONTEND=noninteractive");
	strv_push(&c->env, "DEBCONF_NONINTERACTIVE_SEEN=true");
	if (c->st->source_date_epoch >= 0)
		strv_push_take(&c->env, xasprintf("SOURCE_DATE_EPOCH=%lld",
						  (long long)c->st->source_date_epoch));
	strv_push_take(&c->hook_env, xasprintf("MKIMAGE_NAME=%s", c->r->name));
	strv_push_take(&c->hook_env, xasprintf("MKIMAGE_ARCH=%s",
					       c->p->primary ? c->p->primary : c->r->arch));
	strv_push_take(&c->hook_env, xasprintf("MKIMAGE_ARCHS=%s", archs));
	free(archs);
}

/* The environment plus `extra` (NULL-terminated), as a new vector. */
static void env_with(const struct ctx *c, const char *const *extra, struct strv *out)
{
	size_t i;

	for (i = 0; i < c->env.n; i++)
		strv_push(out, c->env.v[i]);
	for (i = 0; extra && extra[i]; i++)
		strv_push(out, extra[i]);
}

/* dpkg reports a failing script long before its summary: show each one with its context. */
static void log_dpkg_errors(const char *out)
{
	const char *hit = out, *from, *to;
	int n;

	while (out && (hit = strstr(hit, "dpkg: error processing"))) {
		for (from = hit, n = 0; from > out && n < 4; from--)
			n += from[-1] == '\n';
		from += from > out;
		for (to = hit, n = 0; *to && n < 2; to++)
			n += *to == '\n';
		log_error("dpkg reported:\n%.*s", (int)(to - from), from);
		hit = to;
	}
}

/* Why the command failed, in the caller's words, with the last lines of its output. */
static void log_failure(const char *what, int status, unsigned timeout,
			const struct sandbox_report *rep, const struct buf *out)
{
	const char *tail = sandbox_tail(out->p, TAIL_LINES);
	const char *intro = out->len ? "last lines of its output:\n" : "it printed nothing";

	if (status == 124)
		log_error("%s did not finish within %u s and was killed; %s%s", what, timeout, intro,
			  tail);
	else if (rep->signal)
		log_error("%s was killed by signal %d (%s); %s%s", what, rep->signal,
			  strsignal(rep->signal), intro, tail);
	else
		log_error("%s failed with exit status %d; %s%s", what, status, intro, tail);
}

/* Run argv in the target (root != NULL) or on the host; log the failure in the caller's words. */
static int run(const struct ctx *c, const char *root, const char *const *argv,
	       const char *const *extra_env, unsigned timeout, const char *what)
{
	struct strv env = { 0 };
	struct buf out = { 0 };
	struct sandbox_report rep = { 0 };
	struct sandbox_cmd cmd = { .root = root, .argv = argv, .timeout = timeout, .out = &out,
				   .network = !root, .report = &rep,
				   .watch = root ? &c->watch : NULL };
	int status = 0, ret;

	env_with(c, extra_env, &env);
	cmd.env = (const char *const *)env.v;
	if (root && c->accel.active) {
		cmd.bind_src = c->accel.dir;
		cmd.bind_dir = ACCEL_MOUNT;
	}
	ret = sandbox_run(&cmd, &status);
	if (!ret && out.len)
		log_debug("%s:\n%s", what, out.p);
	if (!ret && rep.watch.verdict) {
		watchdog_log(&rep.watch, what, &c->st->limits);
		ret = -MKI_E_HOOK;
	}
	/* Not an error: the namespace is gone, so nothing outlives it; but the author should know. */
	if (!ret && rep.leftover[0])
		log_warn("%s left %s running when it ended; killed (nothing may keep running after a "
			 "build step: start services on the device, not while building)", what,
			 rep.leftover);
	if (!ret && status)
		log_failure(what, status, timeout, &rep, &out);
	if (!ret && status && !strcmp(argv[0], "dpkg"))
		log_dpkg_errors(out.p);
	if (!ret && status)
		ret = -MKI_E_HOOK;
	if (ret == -MKI_E_INTERRUPTED)
		log_info("%s was stopped: interrupted", what);
	strv_release(&env);
	buf_release(&out);
	return ret;
}

/* --- emulation ---------------------------------------------------------------------------- */

/* Register every arch of the plan, then make sure each one's libc actually starts. */
static int setup_archs(const struct ctx *c)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < c->p->archs.n; i++)
		ret = sandbox_add_arch(c->p->archs.v[i]);
	for (i = 0; !ret && i < c->p->archs.n; i++) {
		const struct arch *a = arch_find(c->p->archs.v[i]);
		char *libc = xasprintf("/usr/lib/%s/libc.so.6", a->triplet), *what;
		const char *argv[] = { libc, NULL };
		int fd = beneath_open(c->rootfd, libc, O_PATH, 0);

		what = xasprintf("running %s binaries (%s%s)", a->name, libc,
				 sandbox_arch_emulated(a->name) ? " through qemu" : ", natively");
		if (fd >= 0) {
			close(fd);
			ret = run(c, c->s->root, argv, NULL, 60, what);
		} else {
			log_debug("no %s libc in the tree: not probing it", a->name);
		}
		if (ret == -MKI_E_HOOK)
			ret = -MKI_E_SANDBOX;
		free(libc);
		free(what);
	}
	return ret;
}

/* --- guards: no service may start during the build ---------------------------------------- */

static int write_script(int rootfd, const char *rel, const char *text)
{
	char *tmp = xasprintf("%s.mkimage-tmp", rel);
	int fd = beneath_open(rootfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0755);
	size_t len = strlen(text);
	int ret = 0;

	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ret = fsutil_write_all(fd, text, len);
	if (!ret && (fchmod(fd, 0755) < 0 || fchown(fd, sandbox_tree_uid(0), sandbox_tree_gid(0)) < 0))
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret)
		ret = beneath_rename(rootfd, tmp, rel);
	if (ret)
		beneath_unlink(rootfd, tmp, 0);
out:
	free(tmp);
	return ret;
}

static int guards_install(struct ctx *c, int rootfd)
{
	struct stat sb;
	int ret = 0;

	ret = beneath_mkdir(rootfd, "usr/sbin", 0755);
	if (ret)
		return ret;
	if (beneath_lstat(rootfd, POLICY_RC_D, &sb) == 0) {
		ret = beneath_rename(rootfd, POLICY_RC_D, POLICY_RC_D SAVED_SUFFIX);
		if (ret)
			return ret;
		c->policy_saved = 1;
	}
	ret = write_script(rootfd, POLICY_RC_D,
			   "#!/bin/sh\n# mkimage: no service starts while the image is built\nexit 101\n");
	if (ret)
		return ret;
	c->policy_installed = 1;
	if (beneath_lstat(rootfd, SSD, &sb) < 0)
		return 0;
	ret = beneath_rename(rootfd, SSD, SSD_REAL);
	if (ret)
		return ret;
	c->ssd_diverted = 1;
	return write_script(rootfd, SSD,
			    "#!/bin/sh\necho 'start-stop-daemon: not started while the image is built'"
			    " >&2\nexit 0\n");
}

static int guards_remove(struct ctx *c, int rootfd)
{
	int ret = 0, r;

	if (c->ssd_diverted && (r = beneath_rename(rootfd, SSD_REAL, SSD)))
		ret = r;
	c->ssd_diverted = 0;
	if (c->policy_installed && (r = beneath_unlink(rootfd, POLICY_RC_D, 0)) && r != -ENOENT)
		ret = r;
	c->policy_installed = 0;
	if (c->policy_saved && (r = beneath_rename(rootfd, POLICY_RC_D SAVED_SUFFIX, POLICY_RC_D)))
		ret = r;
	c->policy_saved = 0;
	if (ret)
		log_error("cannot remove the build guards (policy-rc.d, start-stop-daemon) from "
			  "'%s': %s", c->s->root, strerror(-ret));
	return ret;
}

/* --- configuration ----------------------------------------------------------------------- */

static int run_preinst(const struct ctx *c, const struct plan_entry *e)
{
	char *dn = plan_entry_dpkg_name(e), *script, *what, *ev[6];
	const char *argv[3];
	double t0;
	struct stat sb;
	int ret = 0;

	script = xasprintf("/var/lib/dpkg/info/%s.preinst", dn);
	if (beneath_lstat(c->rootfd, script, &sb) < 0)
		goto out;
	argv[0] = script;
	argv[1] = "install";
	argv[2] = NULL;
	ev[0] = xasprintf("DPKG_MAINTSCRIPT_PACKAGE=%s", e->name);
	ev[1] = xasprintf("DPKG_MAINTSCRIPT_ARCH=%s", e->arch);
	ev[2] = xstrdup("DPKG_MAINTSCRIPT_NAME=preinst");
	ev[3] = xstrdup("DPKG_ROOT=");
	ev[4] = xstrdup("DPKG_ADMINDIR=/var/lib/dpkg");
	ev[5] = NULL;
	what = xasprintf("the preinst of '%s' (%s)", dn, e->version);
	t0 = log_now();
	ret = run(c, c->s->root, argv, (const char *const *)ev, c->r->hook_timeout, what);
	log_debug("%s: %.2f s", what, log_now() - t0);
	for (int i = 0; ev[i]; i++)
		free(ev[i]);
	free(what);
out:
	free(dn);
	free(script);
	return ret;
}

/* dpkg runs `preinst install` at unpack; our unpack does not run scripts, so it happens here. */
static int run_preinsts(const struct ctx *c)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < c->p->n; i++)
		if (!strcmp(c->p->v[i].name, "base-passwd"))
			ret = run_preinst(c, &c->p->v[i]);
	for (i = 0; !ret && i < c->p->n; i++)
		if (strcmp(c->p->v[i].name, "base-passwd"))
			ret = run_preinst(c, &c->p->v[i]);
	return ret;
}

/* Every stanza of the status file must say "install ok installed". */
static int check_status(const struct ctx *c)
{
	char line[4096], pkg[256] = "";
	int fd = beneath_open(c->rootfd, STATUS_FILE, O_RDONLY, 0);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "re");
	struct strv bad = { 0 };
	int ret = 0;

	if (!f) {
		log_error("cannot read '/%s' in the tree '%s': %s", STATUS_FILE, c->s->root,
			  strerror(fd < 0 ? -fd : errno));
		if (fd >= 0)
			close(fd);
		return -MKI_E_HOOK;
	}
	while (fgets(line, sizeof(line), f)) {
		if (str_starts_with(line, "Package: "))
			snprintf(pkg, sizeof(pkg), "%.*s", (int)strcspn(line + 9, "\n"), line + 9);
		else if (str_starts_with(line, "Status: ") &&
			 strcmp(line, "Status: install ok installed\n"))
			strv_push_take(&bad, xasprintf("%s (%.*s)", pkg, (int)strcspn(line + 8, "\n"),
						       line + 8));
	}
	fclose(f);
	if (bad.n) {
		char *list = strv_join(&bad, ", ");

		log_error("%zu package(s) are not fully configured: %s", bad.n, list);
		free(list);
		ret = -MKI_E_HOOK;
	}
	strv_release(&bad);
	return ret;
}

static int audit(const struct ctx *c)
{
	static const char *const argv[] = { "dpkg", "--audit", NULL };
	struct strv env = { 0 };
	struct buf out = { 0 };
	struct sandbox_cmd cmd = { .root = c->s->root, .argv = argv, .timeout = 120, .out = &out };
	int status = 0, ret;

	env_with(c, NULL, &env);
	cmd.env = (const char *const *)env.v;
	ret = sandbox_run(&cmd, &status);
	if (!ret && (status || out.len)) {
		log_error("'dpkg --audit' in the configured tree is not clean (exit status %d):\n%s",
			  status, sandbox_tail(out.p, TAIL_LINES));
		ret = -MKI_E_HOOK;
	}
	strv_release(&env);
	buf_release(&out);
	return ret;
}

/* A hang guard for the whole configuration: never shorter than half an hour under emulation. */
static unsigned configure_timeout(const struct recipe *r)
{
	return r->hook_timeout > CONFIGURE_TIMEOUT_MIN ? r->hook_timeout : CONFIGURE_TIMEOUT_MIN;
}

static int configure_scripts(struct ctx *c)
{
	static const char *const argv[] = { "dpkg", "--configure", "-a", NULL };
	double t0 = log_now();
	int ret = 0, ret2;

	if (!c->st->no_native_tools)
		ret = accel_prepare(&c->accel, c->p, c->twins, c->s->root,
				    c->st->work_dir);
	if (!ret)
		ret = run_preinsts(c);
	if (!ret)
		log_info("preinst scripts: %.1f s", log_now() - t0);
	t0 = log_now();
	if (!ret)
		ret = run(c, c->s->root, argv, NULL, configure_timeout(c->r), "'dpkg --configure -a'");
	if (!ret)
		log_info("dpkg --configure -a: %.1f s", log_now() - t0);
	ret2 = accel_release(&c->accel);
	return ret ? ret : ret2;
}

static int configure(struct ctx *c)
{
	struct stat sb;
	int ret;

	if (beneath_lstat(c->rootfd, "usr/bin/dpkg", &sb) < 0) {
		log_error("the package set has no dpkg: configuring a tree without the target's dpkg "
			  "is not yet supported (add 'dpkg' to the packages)");
		return -MKI_E_NOTYET;
	}
	ret = configure_scripts(c);
	if (!ret)
		ret = check_status(c);
	if (!ret)
		ret = audit(c);
	return ret;
}

/* --- recipe hooks -------------------------------------------------------------------------- */

/* Copy the hook into the tree, run it there, remove it. */
static int hook_inside(const struct ctx *c, const struct recipe_hook *h, const char *what)
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
	fd = beneath_mkstemp(c->rootfd, ".", ".mkimage-hook-", &rel);
	/* A short write on a full disk leaves errno alone: take the error write_all returns. */
	ret = fd < 0 ? fd : fsutil_write_all(fd, script.p, script.len);
	if (!ret && (fchmod(fd, 0755) || fchown(fd, sandbox_tree_uid(0), sandbox_tree_gid(0))))
		ret = -errno;
	if (fd >= 0 && close(fd) < 0 && !ret)
		ret = -errno;
	if (ret) {
		log_error("cannot copy hook '%s' into '%s': %s", h->name, c->s->root,
			  strerror(-ret));
		if (fd >= 0)
			beneath_unlink(c->rootfd, rel, 0);
		ret = -MKI_E_HOOK;
		goto out;
	}
	inside = xasprintf("/%s", rel);
	argv[0] = inside;
	ret = run(c, c->s->root, argv, (const char *const *)c->hook_env.v, h->timeout, what);
	if ((r = beneath_unlink(c->rootfd, rel, 0)) && r != -ENOENT && !ret) {
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

static int hook_outside(const struct ctx *c, const struct recipe_hook *h, const char *what)
{
	const char *argv[] = { h->script, NULL };
	struct strv ev = { 0 };
	size_t i;
	int ret;

	for (i = 0; i < c->hook_env.n; i++)
		strv_push(&ev, c->hook_env.v[i]);
	strv_push_take(&ev, xasprintf("MKIMAGE_ROOT=%s", c->s->root));
	ret = run(c, NULL, argv, (const char *const *)ev.v, h->timeout, what);
	strv_release(&ev);
	return ret;
}

static int run_hooks(const struct ctx *c)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < c->r->n_hooks; i++) {
		const struct recipe_hook *h = &c->r->hooks[i];
		char *what = xasprintf("hook '%s' (%s, %s:%d)", h->name,
				       h->where == HOOK_INSIDE ? "inside" : "outside", c->r->file,
				       h->line);
		double t0 = log_now();

		ret = h->where == HOOK_INSIDE ? hook_inside(c, h, what) : hook_outside(c, h, what);
		if (!ret)
			log_info("hook '%s': %.1f s", h->name, log_now() - t0);
		free(what);
	}
	return ret;
}

/*
 * Logs and caches that record the wall clock of this build, not the system: without them two
 * builds of one lock are byte-identical. dpkg, update-alternatives and ldconfig recreate them on
 * the device (mmdebstrap drops the same files).
 */
static void scrub_build_traces(int rootfd)
{
	int r;

	static const char *const traces[] = { "var/log/dpkg.log", "var/log/alternatives.log",
		"var/log/apt/history.log", "var/log/apt/term.log", "var/log/apt/eipp.log.xz",
		"var/cache/ldconfig/aux-cache", NULL };
	const char *const *t;

	/* A script may have made /var/log a link (to /srv/x, say): it is followed in the tree. */
	for (t = traces; *t; t++)
		if ((r = beneath_unlink(rootfd, *t, 0)) && r != -ENOENT && r != -ENOTDIR)
			log_warn("cannot remove build trace '/%s': %s", *t, strerror(-r));
}

int hooks_run(struct stage *s, const struct plan *p, const struct plan *twins,
	      const struct recipe *r, const struct settings *st)
{
	struct sandbox_opts so = { .allow_single_id = st->single_id };
	struct ctx c = { .s = s, .p = p, .twins = twins, .r = r, .st = st,
			 .watch = { .script_timeout = r->script_timeout,
				    .max_procs = limits_get(&st->limits, LIMIT_PROCESSES),
				    .max_tree_bytes = limits_get(&st->limits, LIMIT_STAGING_SIZE) } };
	struct hooks_changes ch = { 0 };
	int rootfd = -1, ret, ret2;

	ret = sandbox_enter(&so);
	if (ret)
		return ret;
	rootfd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		log_error("cannot open the staging tree '%s': %s", s->root, strerror(errno));
		return -MKI_E_HOOK;
	}
	if (beneath_supported(rootfd)) {
		log_error("this kernel lacks openat2 (Linux >= 5.6), which mkimage needs to touch the "
			  "tree after its scripts ran without following their symlinks out of it");
		close(rootfd);
		return -MKI_E_SANDBOX;
	}
	c.rootfd = rootfd;
	env_init(&c);
	ret = overlay_precheck(r, s, rootfd);
	if (!ret)
		ret = setup_archs(&c);
	if (!ret && (ret = guards_install(&c, rootfd))) {
		log_error("cannot install the build guards in '%s': %s", s->root, strerror(-ret));
		ret = -MKI_E_SANDBOX;
	}
	if (!ret)
		ret = configure(&c);
	if (!ret)
		ret = identity_write(r, rootfd, st->source_date_epoch);
	if (!ret)
		ret = overlay_apply(r, s, rootfd, st->source_date_epoch);
	if (!ret)
		ret = run_hooks(&c);
	ret2 = guards_remove(&c, rootfd);
	if (!ret && ret2)
		ret = -MKI_E_HOOK;
	if (!ret)
		scrub_build_traces(rootfd);
	if (!ret)
		ret = identity_finish(r, rootfd, st->source_date_epoch);
	if (!ret)
		ret = hooks_reconcile(s, st->source_date_epoch, &ch);
	if (!ret)
		log_info("manifest reconciled: %zu new, %zu changed, %zu removed", ch.added,
			 ch.changed, ch.removed);
	close(rootfd);
	strv_release(&c.env);
	strv_release(&c.hook_env);
	return ret;
}

/* --- manifest reconciliation --------------------------------------------------------------- */

struct link_ref {
	dev_t dev;
	ino_t ino;
	struct manifest_entry *e;
};

struct scan {
	struct manifest *fresh;
	struct link_ref *links;
	size_t n_links, alloc_links;
	int64_t sde;
	char *root;
};

/*
 * `path` reaches the entry through the walk's own directory fd (/proc/self/fd/DIRFD/NAME) and
 * one name not followed (l*xattr): a tree path re-resolved from the host could cross a link.
 */
static int read_xattrs(const char *path, const char *rel, struct manifest_entry *e)
{
	char *names = xmalloc(XATTR_LIST_MAX_BYTES), *val = xmalloc(XATTR_LIST_MAX_BYTES), *n;
	ssize_t len = llistxattr(path, names, XATTR_LIST_MAX_BYTES), vlen;
	int ret = 0;

	if (len < 0 && errno != ENOTSUP)
		ret = -errno;
	for (n = names; len > 0 && n < names + len && !ret; n += strlen(n) + 1) {
		vlen = lgetxattr(path, n, val, XATTR_LIST_MAX_BYTES);
		if (vlen < 0 && errno != ENODATA)
			ret = -errno;
		else if (vlen >= 0 && !strcmp(n, "security.capability"))
			manifest_set_xattr(e, n, val,
					   sandbox_caps_to_inside(sandbox_get(), (unsigned char *)val,
								  (size_t)vlen));
		else if (vlen >= 0)
			manifest_set_xattr(e, n, val, (size_t)vlen);
	}
	if (ret)
		log_error("cannot read the extended attributes of '/%s' in the tree: %s", rel,
			  strerror(-ret));
	free(names);
	free(val);
	return ret;
}

/* The owner a command sees; refused when the tree holds one no command could have set. */
static int owner_inside(const struct stat *sb, const char *path, struct manifest_entry *e)
{
	long uid = sandbox_inside_uid(sb->st_uid), gid = sandbox_inside_gid(sb->st_gid);

	if (uid < 0 || gid < 0) {
		log_error("'%s' is owned by %lu:%lu on disk, outside the ids of the build's commands; "
			  "this is a bug in mkimage, please report it", path,
			  (unsigned long)sb->st_uid, (unsigned long)sb->st_gid);
		return -MKI_E_HOOK;
	}
	e->uid = (uid_t)uid;
	e->gid = (gid_t)gid;
	return 0;
}

static char entry_type(mode_t m)
{
	return S_ISREG(m) ? MF_REG : S_ISDIR(m) ? MF_DIR : S_ISLNK(m) ? MF_SYMLINK
		: S_ISCHR(m) ? MF_CHR : S_ISBLK(m) ? MF_BLK : S_ISFIFO(m) ? MF_FIFO : MF_SOCK;
}

static int record(struct scan *sc, int dirfd, const char *name, const char *rel,
		  const struct stat *sb)
{
	struct manifest_entry *e = manifest_add(sc->fresh, rel);
	char *full = xasprintf("/proc/self/fd/%d/%s", dirfd, name);
	int ret = 0;

	e->type = entry_type(sb->st_mode);
	e->mode = sb->st_mode & 07777;
	ret = owner_inside(sb, full, e);
	e->mtime = sc->sde >= 0 && sb->st_mtime > sc->sde ? sc->sde : sb->st_mtime;
	e->major = major(sb->st_rdev);
	e->minor = minor(sb->st_rdev);
	if (e->type == MF_REG)
		e->size = (uint64_t)sb->st_size;
	if (!ret && e->type == MF_SYMLINK) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

		if (n < 0)
			ret = -errno;
		else
			e->target = xstrndup(target, (size_t)n);
	}
	if (!ret && e->type == MF_REG && sb->st_nlink > 1) {
		ALLOC_GROW(sc->links, sc->n_links + 1, sc->alloc_links);
		sc->links[sc->n_links++] = (struct link_ref){ sb->st_dev, sb->st_ino, e };
	}
	if (!ret)
		ret = read_xattrs(full, rel, e);
	free(full);
	return ret;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of a directory (without . and ..); takes `fd`. */
static int list_dir(int fd, struct strv *names)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;

	if (!d) {
		close(fd);
		return -errno;
	}
	while ((errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			strv_push(names, de->d_name);
	closedir(d);
	if (names->n)
		qsort(names->v, names->n, sizeof(*names->v), cmp_name);
	return 0;
}

static int walk(struct scan *sc, int dirfd, const char *rel)
{
	struct strv names = { 0 };
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;
	size_t i;

	if (fd < 0)
		return -errno;
	ret = list_dir(fd, &names);
	for (i = 0; !ret && i < names.n; i++) {
		char *child = *rel ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
		struct stat sb;

		if (fstatat(dirfd, names.v[i], &sb, AT_SYMLINK_NOFOLLOW) < 0)
			ret = -errno;
		if (!ret)
			ret = record(sc, dirfd, names.v[i], child, &sb);
		if (!ret && S_ISDIR(sb.st_mode)) {
			int sub = openat(dirfd, names.v[i],
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			ret = sub < 0 ? -errno : walk(sc, sub, child);
			if (sub >= 0)
				close(sub);
		}
		if (ret && ret > -MKI_E_BASE)
			log_error("cannot scan '%s/%s': %s", sc->root, child, strerror(-ret));
		if (ret)
			ret = -MKI_E_HOOK;
		free(child);
	}
	strv_release(&names);
	return ret;
}

static int cmp_link(const void *a, const void *b)
{
	const struct link_ref *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->e->path, y->e->path);
}

/* In each hardlink group the bytewise first path holds the data; the others point at it. */
static void group_links(struct scan *sc)
{
	size_t i, first = 0;

	if (sc->n_links)
		qsort(sc->links, sc->n_links, sizeof(*sc->links), cmp_link);
	for (i = 1; i < sc->n_links; i++) {
		if (sc->links[i].dev != sc->links[first].dev ||
		    sc->links[i].ino != sc->links[first].ino) {
			first = i;
			continue;
		}
		sc->links[i].e->type = MF_HARDLINK;
		sc->links[i].e->target = xstrdup(sc->links[first].e->path);
		sc->links[i].e->size = 0;
	}
}

static int same_xattrs(const struct manifest_entry *a, const struct manifest_entry *b)
{
	size_t i;

	if (a->n_xattrs != b->n_xattrs)
		return 0;
	for (i = 0; i < a->n_xattrs; i++)
		if (strcmp(a->xattrs[i].name, b->xattrs[i].name) ||
		    a->xattrs[i].len != b->xattrs[i].len ||
		    memcmp(a->xattrs[i].value, b->xattrs[i].value, a->xattrs[i].len))
			return 0;
	return 1;
}

static int same_entry(const struct manifest_entry *a, const struct manifest_entry *b)
{
	return a->type == b->type && a->mode == b->mode && a->uid == b->uid && a->gid == b->gid &&
	       a->size == b->size && a->mtime == b->mtime &&
	       !strcmp(a->target ? a->target : "", b->target ? b->target : "") &&
	       same_xattrs(a, b);
}

static void copy_entry(struct manifest *m, const struct manifest_entry *src)
{
	struct manifest_entry *e = manifest_add(m, src->path);
	size_t i;

	e->type = src->type;
	e->mode = src->mode;
	e->uid = src->uid;
	e->gid = src->gid;
	e->mtime = src->mtime;
	e->major = src->major;
	e->minor = src->minor;
	e->size = src->size;
	e->target = src->target ? xstrdup(src->target) : NULL;
	for (i = 0; i < src->n_xattrs; i++)
		manifest_set_xattr(e, src->xattrs[i].name, src->xattrs[i].value, src->xattrs[i].len);
	for (i = 0; i < src->owners.n; i++)
		strv_push(&e->owners, src->owners.v[i]);
}

/* Carry owners (and, single-id, ownership) over; count what changed; keep device nodes. */
static void merge(struct manifest *old, struct manifest *fresh, struct hooks_changes *ch)
{
	int single = sandbox_get() && sandbox_get()->ids == SANDBOX_IDS_SINGLE;
	size_t i, j;

	for (i = 0; i < fresh->n; i++) {
		struct manifest_entry *e = fresh->v[i], *o = manifest_get(old, e->path);

		if (!o) {
			ch->added++;
			continue;
		}
		if (single) {
			e->uid = o->uid;
			e->gid = o->gid;
			e->mode = o->type == e->type ? o->mode : e->mode;
		}
		for (j = 0; j < o->owners.n; j++)
			strv_push(&e->owners, o->owners.v[j]);
		ch->changed += !same_entry(e, o);
	}
	for (i = 0; i < old->n; i++) {
		const struct manifest_entry *o = old->v[i];

		if (manifest_get(fresh, o->path))
			continue;
		if (o->type == MF_CHR || o->type == MF_BLK)
			copy_entry(fresh, o);
		else
			ch->removed++;
	}
}

int hooks_reconcile(struct stage *s, int64_t source_date_epoch, struct hooks_changes *ch)
{
	struct manifest fresh;
	struct hooks_changes local = { 0 };
	struct scan sc = { .fresh = &fresh, .sde = source_date_epoch, .root = s->root };
	struct stat sb;
	int rootfd, ret;

	manifest_init(&fresh);
	rootfd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || fstat(rootfd, &sb) < 0) {
		log_error("cannot open the staging tree '%s': %s", s->root, strerror(errno));
		ret = -MKI_E_HOOK;
		goto out;
	}
	ret = record(&sc, rootfd, ".", "", &sb);
	if (!ret)
		ret = walk(&sc, rootfd, "");
	if (ret)
		goto out;
	group_links(&sc);
	merge(&s->manifest, &fresh, &local);
	manifest_sort(&fresh);
	manifest_release(&s->manifest);
	s->manifest = fresh;
	manifest_init(&fresh);
	if (ch)
		*ch = local;
out:
	if (rootfd >= 0)
		close(rootfd);
	manifest_release(&fresh);
	free(sc.links);
	return ret;
}
