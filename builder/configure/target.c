/*
 * Running commands in the staging tree through the sandbox (or on the host, for outside hooks):
 * one clean environment, the watchdog's bounds, and a failure told in the caller's words with
 * the last lines of the command's output.
 */
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel.h"
#include "debian/arch.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/log.h"
#include "sandbox/sandbox.h"

#define TARGET_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

void target_init(struct target *t, const char *root, int rootfd, const struct plan *p,
		 const struct recipe *r, const struct settings *st)
{
	char *archs = strv_join(&p->archs, " ");

	memset(t, 0, sizeof(*t));
	t->root = root;
	t->rootfd = rootfd;
	t->limits = &st->limits;
	t->watch = (struct watchdog_opts){ .script_timeout = r->script_timeout,
					   .stall_timeout = r->script_timeout,
					   .max_procs = runlimits_get(&st->limits, LIMIT_PROCESSES),
					   .max_tree_bytes = runlimits_get(&st->limits, LIMIT_STAGING_SIZE),
					   .max_memory = runlimits_get(&st->limits, LIMIT_MEMORY) };

	strv_push(&t->env, TARGET_PATH);
	strv_push(&t->env, "HOME=/root");
	strv_push(&t->env, "LC_ALL=C.UTF-8");
	strv_push(&t->env, "DEBIAN_FRONTEND=noninteractive");
	strv_push(&t->env, "DEBCONF_NONINTERACTIVE_SEEN=true");
	if (st->source_date_epoch >= 0)
		strv_push_take(&t->env, xasprintf("SOURCE_DATE_EPOCH=%lld",
						  (long long)st->source_date_epoch));
	strv_push_take(&t->hook_env, xasprintf("MKIMAGE_NAME=%s", r->name));
	strv_push_take(&t->hook_env, xasprintf("MKIMAGE_ARCH=%s",
					       p->primary ? p->primary : r->arch));
	strv_push_take(&t->hook_env, xasprintf("MKIMAGE_ARCHS=%s", archs));
	free(archs);
}

void target_env(const struct target *t, const char *const *extra, struct strv *out)
{
	size_t i;

	for (i = 0; i < t->env.n; i++)
		strv_push(out, t->env.v[i]);
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
		log_block(LOG_ERROR, from, (size_t)(to - from), "dpkg reported:");
		hit = to;
	}
}

/* Whether an output line looks like the cause of a failure (case-insensitive words). */
static int looks_like_error(const char *line, size_t len)
{
	static const char *const words[] = { "error", "unrecognized", "invalid", "denied",
					     "not found", "cannot", "failed" };
	char low[LOG_LINE_MAX];
	size_t i, n = len < sizeof(low) - 1 ? len : sizeof(low) - 1;

	for (i = 0; i < n; i++)
		low[i] = (char)(line[i] >= 'A' && line[i] <= 'Z' ? line[i] - 'A' + 'a' : line[i]);
	low[n] = 0;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return 1;
	return 0;
}

/*
 * The first lines before the tail that look like errors: a usage text printed after the cause
 * (useradd's) would otherwise push the cause out of the last lines.
 */
static void log_cause(const char *out, const char *tail)
{
	struct buf hits = { 0 };
	const char *p, *nl;
	unsigned n = 0;

	for (p = out; p && p < tail && n < TARGET_CAUSE_LINES; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(tail - p));
		nl = nl ? nl : tail;
		if (looks_like_error(p, (size_t)(nl - p))) {
			buf_add(&hits, p, (size_t)(nl - p + (nl < tail)));
			n++;
		}
		if (nl >= tail)
			break;
	}
	if (n)
		log_block(LOG_ERROR, hits.p, hits.len, "the first lines of its output that look "
			  "like errors (the whole output is in the build log):");
	buf_release(&hits);
}

/* Why the command failed, in the caller's words, with the last lines of its output. */
static void log_failure(const char *what, int status, unsigned timeout,
			const struct sandbox_report *rep, const struct buf *out)
{
	const char *tail = sandbox_tail(out->p, TARGET_TAIL_LINES);
	const char *intro = out->len ? "last lines of its output:" : "it printed nothing";
	size_t len = strlen(tail);

	/* the output is the command's, hostile: log_block prints it escaped, a line each */
	if (status == 124)
		log_block(LOG_ERROR, tail, len, "%s did not finish within %u s and was killed; %s",
			  what, timeout, intro);
	else if (rep->signal)
		log_block(LOG_ERROR, tail, len, "%s was killed by signal %d (%s); %s", what,
			  rep->signal, strsignal(rep->signal), intro);
	else
		log_block(LOG_ERROR, tail, len, "%s failed with exit status %d; %s", what, status,
			  intro);
	log_cause(out->p, tail);
}

/* target_run() with the bounds `watch` (NULL: none); `step`: show progress as this step. */
static int run_watched(const struct target *t, const char *root, const char *const *argv,
		       const char *const *extra_env, unsigned timeout, const char *what,
		       const struct watchdog_opts *watch, const char *step)
{
	struct strv env = { 0 };
	struct buf out = { 0 };
	struct sandbox_report rep = { 0 };
	struct progress own;
	struct sandbox_cmd cmd = { .root = root, .argv = argv, .timeout = timeout, .out = &out,
				   .network = !root, .report = &rep,
				   .watch = watch, .log_as = what, .progress = t->progress,
				   .on_status = t->on_status, .status_ctx = t->status_ctx };
	int status = 0, ret;

	if (step && !cmd.progress) {
		log_progress_begin(&own, step, 0, 0);
		log_progress_set(&own, 0, what);
		cmd.progress = &own;
	}

	target_env(t, extra_env, &env);
	cmd.env = (const char *const *)env.v;
	if (root && t->bind_src) {
		cmd.bind_src = t->bind_src;
		cmd.bind_dir = ACCEL_MOUNT;
		cmd.bind_file_src = t->bind_profile;
		cmd.bind_file_dst = t->bind_profile ? ACCEL_PROFILE : NULL;
	}
	ret = sandbox_run(&cmd, &status);
	if (cmd.progress == &own)
		log_progress_clear(&own);
	if (!ret && out.len) /* the log has it whole already */
		log_block_terminal(LOG_DEBUG, out.p, out.len, "%s:", what);
	if (!ret && rep.watch.verdict) {
		watchdog_log(&rep.watch, what, t->limits);
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

int target_run(const struct target *t, const char *root, const char *const *argv,
	       const char *const *extra_env, unsigned timeout, const char *what)
{
	return run_watched(t, root, argv, extra_env, timeout, what, root ? &t->watch : NULL, NULL);
}

int target_run_hook(const struct target *t, const char *root, const char *const *argv,
		    const char *const *extra_env, unsigned timeout, const char *what)
{
	struct watchdog_opts w = t->watch;

	/*
	 * An outside hook is the user's code on the host: only the stall bound, not the tree's or
	 * the memory limits that bound what a package runs.
	 */
	if (!root)
		w = (struct watchdog_opts){ .stall_timeout = t->watch.stall_timeout };
	w.stall_any = 1;
	return run_watched(t, root, argv, extra_env, timeout, what, &w, "run");
}

int target_setup_archs(const struct target *t, const struct strv *archs)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < archs->n; i++)
		ret = sandbox_add_arch(archs->v[i]);
	for (i = 0; !ret && i < archs->n; i++) {
		const struct arch *a = arch_find(archs->v[i]);
		char *libc = xasprintf("/usr/lib/%s/libc.so.6", a->triplet), *what;
		const char *argv[] = { libc, NULL };
		int fd = beneath_open(t->rootfd, libc, O_PATH, 0);

		what = xasprintf("running %s binaries (%s%s)", a->name, libc,
				 sandbox_arch_emulated(a->name) ? " through qemu" : ", natively");
		if (fd >= 0) {
			close(fd);
			ret = target_run(t, t->root, argv, NULL, 60, what);
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

void target_release(struct target *t)
{
	strv_release(&t->env);
	strv_release(&t->hook_env);
}
