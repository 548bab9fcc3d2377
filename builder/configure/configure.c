/*
 * Configure the unpacked packages as dpkg would: `preinst install` of every package (dpkg runs
 * it at unpack, which mkimage does without scripts), base-passwd first, then the target's own
 * dpkg under emulation (dpkg's ordering, trigger and conffile semantics exactly): the essential
 * set first, as apt and mmdebstrap do, then `dpkg --configure -a`; then check that every package
 * is "install ok installed" and `dpkg --audit` is clean.
 */
#include "configure.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpkgprogress.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "sandbox/sandbox.h"

#define CONFIGURE_TIMEOUT_MIN 1800
#define STATUS_FILE "var/lib/dpkg/status"
#define ESSENTIAL_WHAT "'dpkg --configure' of the essential set"

static int run_preinst(const struct target *t, const struct recipe *r, const struct plan_entry *e,
		       size_t n)
{
	char *dn = plan_entry_dpkg_name(e), *script, *what, *ev[6];
	const char *argv[3];
	double t0;
	struct stat sb;
	int ret = 0;

	script = xasprintf("/var/lib/dpkg/info/%s.preinst", dn);
	if (beneath_lstat(t->rootfd, script, &sb) < 0)
		goto out;
	log_progress_set(t->progress, n, e->name);
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
	ret = target_run(t, t->root, argv, (const char *const *)ev, r->hook_timeout, what);
	log_debug("%s: %.2f s", what, log_now() - t0);
	for (int i = 0; ev[i]; i++)
		free(ev[i]);
	free(what);
out:
	free(dn);
	free(script);
	return ret;
}

/*
 * dpkg runs `preinst install` at unpack; our unpack does not run scripts, so it happens here,
 * shown as the step "preinst" (package N of M, `*n` counting on across both runs): of the
 * packages `in` marks as `want` (all without `in`), base-passwd first.
 */
static int run_preinsts(const struct target *t, const struct plan *p, const struct recipe *r,
			const unsigned char *in, int want, size_t *n)
{
	struct target tp = *t;
	struct progress bar;
	size_t i;
	int ret = 0;

	log_progress_begin(&bar, "preinst", p->n, 0);
	tp.progress = &bar;
	for (i = 0; !ret && i < p->n; i++)
		if ((!in || in[i] == want) && !strcmp(p->v[i].name, "base-passwd"))
			ret = run_preinst(&tp, r, &p->v[i], ++*n);
	for (i = 0; !ret && i < p->n; i++)
		if ((!in || in[i] == want) && strcmp(p->v[i].name, "base-passwd"))
			ret = run_preinst(&tp, r, &p->v[i], ++*n);
	log_progress_clear(&bar);
	return ret;
}

/* A hang guard for the whole configuration: never shorter than half an hour under emulation. */
static unsigned configure_timeout(const struct recipe *r)
{
	return r->hook_timeout > CONFIGURE_TIMEOUT_MIN ? r->hook_timeout : CONFIGURE_TIMEOUT_MIN;
}

/*
 * One dpkg run of the step "configure": its --status-fd on the sandbox's status pipe feeds the
 * one progress `d` (package N of M and its name, a kernel's initramfs named: dpkgprogress.h),
 * so both runs make one bar that counts every package once.
 */
static int run_dpkg(const struct target *t, struct dpkgprogress *d, const char *const *argv,
		    const struct recipe *r, const char *what)
{
	struct target tc = *t;

	tc.progress = &d->bar;
	tc.on_status = dpkgprogress_status;
	tc.status_ctx = d;
	return target_run(&tc, t->root, argv, NULL, configure_timeout(r), what);
}

/*
 * `dpkg --configure` of the essential set (plan.h) before the rest, as mmdebstrap's essential
 * phase and apt's immediate configuration do: packages run what Essential and required packages
 * ship without declaring it (samba-common's postinst runs ucf, ucf runs awk, and /usr/bin/awk is
 * the alternative mawk's postinst makes), and dpkg orders by declared dependencies only. Named
 * in plan order, dependencies first, so dpkg needs to defer nothing but a cycle.
 */
static int run_essential(const struct target *t, struct dpkgprogress *d, const struct plan *p,
			 const struct recipe *r, const unsigned char *in, size_t n)
{
	static const char *const head[] = { "dpkg", "--status-fd", "3", "--configure", "--" };
	const size_t n_head = sizeof(head) / sizeof(head[0]);
	struct strv argv = { 0 };
	struct buf list = { 0 };
	double t0 = log_now();
	size_t i;
	int ret;

	for (i = 0; i < n_head; i++)
		strv_push(&argv, head[i]);
	for (i = 0; i < p->n; i++) {
		if (!in[i])
			continue;
		strv_push_take(&argv, plan_entry_dpkg_name(&p->v[i]));
		buf_addf(&list, "%s%s", list.len ? " " : "", argv.v[argv.n - 1]);
	}
	log_debug("configure: the essential set first (Essential and Priority: required of '%s', "
		  "with what they depend on), %zu of %zu packages, in this order: %s",
		  p->primary ? p->primary : "any", n, p->n, list.p);
	ret = run_dpkg(t, d, (const char *const *)argv.v, r, ESSENTIAL_WHAT);
	if (!ret)
		log_info("%s: %zu packages: %.1f s", ESSENTIAL_WHAT, n, log_now() - t0);
	buf_release(&list);
	strv_release(&argv);
	return ret;
}

/*
 * Of a plan with an essential set and more besides: `dpkg --configure` of the essential set, then
 * the others' preinsts, as apt runs a package's preinst when it unpacks it, after the essential
 * set is configured: mariadb-server's preinst runs adduser, whose chfn needs the PAM
 * configuration libpam-runtime's postinst writes. Their time is added to `*pre`.
 */
static int run_essential_then_preinsts(const struct target *t, struct dpkgprogress *d,
				       const struct plan *p, const struct recipe *r,
				       const unsigned char *in, size_t n, double *pre)
{
	int ret = run_essential(t, d, p, r, in, n);
	double t0 = log_now();
	size_t done = n;

	if (ret)
		return ret;
	log_progress_clear(&d->bar);
	ret = run_preinsts(t, p, r, in, 0, &done);
	*pre += log_now() - t0;
	return ret;
}

/*
 * The essential set's preinsts, the essential set, the others' preinsts when the plan has an
 * essential set and more besides (run_essential_then_preinsts()), then `dpkg --configure -a`
 * for the rest and every pending trigger. A plan that is all essential set is every preinst and
 * one `dpkg --configure -a`, as it always was.
 */
static int run_configure(const struct target *t, const struct plan *p, const struct recipe *r)
{
	static const char *const argv[] = { "dpkg", "--status-fd", "3", "--configure", "-a", NULL };
	unsigned char *in = xcalloc(p->n ? p->n : 1, 1);
	size_t n = plan_essential_set(p, in);
	int split = n && n < p->n, ret;
	struct dpkgprogress d;
	double t0 = log_now(), pre;
	size_t done = 0;

	ret = run_preinsts(t, p, r, split ? in : NULL, 1, &done);
	pre = log_now() - t0;
	dpkgprogress_init(&d, p);
	if (!ret && split)
		ret = run_essential_then_preinsts(t, &d, p, r, in, n, &pre);
	else if (!ret && n)
		log_debug("configure: every package is in the essential set: one 'dpkg --configure -a'");
	else if (!ret)
		log_debug("configure: no package of '%s' or 'all' is Essential or Priority: required: "
			  "one 'dpkg --configure -a'", p->primary ? p->primary : "any");
	if (!ret)
		log_info("preinst scripts: %.1f s", pre);
	t0 = log_now();
	if (!ret)
		ret = run_dpkg(t, &d, argv, r, "'dpkg --configure -a'");
	log_progress_clear(&d.bar);
	if (!ret)
		log_info("dpkg --configure -a: %.1f s", log_now() - t0);
	if (!ret)
		log_debug("dpkg --configure: %zu of %zu packages reported configured", d.configured,
			  p->n);
	dpkgprogress_release(&d);
	free(in);
	return ret;
}

/* Every stanza of the status file must say "install ok installed". */
static int check_status(const struct target *t)
{
	char line[4096], pkg[256] = "";
	const char *kind = NULL;
	int fd = beneath_open_regular(t->rootfd, STATUS_FILE, 0, &kind);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "re");
	struct strv bad = { 0 };
	int ret = 0;

	if (!f) {
		log_error("cannot read '/%s' in the tree '%s': %s%s", STATUS_FILE, t->root,
			  fd < 0 ? readfile_why(fd, kind) : strerror(errno),
			  kind ? " (a maintainer script or a process it left replaced it)" : "");
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

/*
 * The tree's dpkg is the packages' to replace: it runs under the bounds of every step (processes,
 * staging size, memory, time), and what it leaves running is said.
 */
static int audit(const struct target *t)
{
	static const char *const argv[] = { "dpkg", "--audit", NULL };
	static const char what[] = "'dpkg --audit'";
	struct strv env = { 0 };
	struct buf out = { 0 };
	struct sandbox_report rep = { 0 };
	struct sandbox_cmd cmd = { .root = t->root, .argv = argv, .timeout = 120, .out = &out,
				   .report = &rep, .watch = &t->watch };
	int status = 0, ret;

	target_env(t, NULL, &env);
	cmd.env = (const char *const *)env.v;
	ret = sandbox_run(&cmd, &status);
	if (!ret && rep.watch.verdict) {
		watchdog_log(&rep.watch, what, t->limits);
		ret = -MKI_E_HOOK;
	}
	if (!ret && rep.leftover[0])
		log_warn("%s left %s running when it ended; killed", what, rep.leftover);
	if (!ret && status == 124) {
		log_error("%s did not finish within %u s and was killed", what, cmd.timeout);
		ret = -MKI_E_HOOK;
	}
	if (!ret && (status || out.len)) {
		const char *tail = sandbox_tail(out.p, TARGET_TAIL_LINES);

		log_block(LOG_ERROR, tail, strlen(tail),
			  "'dpkg --audit' in the configured tree is not clean (exit status %d):", status);
		ret = -MKI_E_HOOK;
	}
	strv_release(&env);
	buf_release(&out);
	return ret;
}

int configure_packages(const struct target *t, const struct plan *p, const struct recipe *r)
{
	return run_configure(t, p, r);
}

int configure_has_dpkg(const struct target *t)
{
	struct stat sb;

	if (beneath_lstat(t->rootfd, "usr/bin/dpkg", &sb) < 0) {
		log_error("the package set has no dpkg: configuring a tree without the target's dpkg "
			  "is not yet supported (add 'dpkg' to the packages)");
		return -MKI_E_NOTYET;
	}
	return 0;
}

int configure_verify(const struct target *t)
{
	int ret = check_status(t);

	return ret ? ret : audit(t);
}
