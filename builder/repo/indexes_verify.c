/*
 * Indexes, verification: a Release is used only once gpgv accepted it against its source's own
 * keyring, it is not past Valid-Until, it names the suite asked for, and it is not older than the
 * one verified from the same place before (a rollback). The accepted file is kept in the cache.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "indexes_ctx.h"
#include "lib/err.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/readfile.h"
#include "lib/runlimits.h"
#include "store/cache.h"

#define GPGV_TIMEOUT 120

static int read_file(const char *path, size_t limit, struct buf *b)
{
	return readfile_read(path, limit, b, NULL);
}

/* --- signature ----------------------------------------------------------------------------- */

static const char *status_arg(const char *status, const char *word)
{
	static char arg[64];
	const char *p = status;
	size_t n = strlen(word);

	while ((p = strstr(p, "[GNUPG:] "))) {
		p += 9;
		if (!strncmp(p, word, n) && (p[n] == ' ' || p[n] == '\n' || !p[n])) {
			p += n + (p[n] == ' ');
			snprintf(arg, sizeof(arg), "%.*s", (int)strcspn(p, " \n"), p);
			return arg;
		}
	}
	return NULL;
}

/* Decide on gpgv's status lines, not on its exit code alone. */
static int judge_status(const struct rel *r, const char *status, int code, const char *what)
{
	const struct source *s = r->src;
	const char *k;

	if ((k = status_arg(status, "NO_PUBKEY")))
		log_error("%s is signed by key %s, which is not in the source's keyring '%s' "
			  "(%s): give the right signed-by keyring", what, k, s->keyring, s->origin);
	else if ((k = status_arg(status, "BADSIG")))
		log_error("%s has a BAD signature (key %s): it was modified after signing (tampered "
			  "or corrupted); refusing it", what, k);
	else if ((k = status_arg(status, "EXPKEYSIG")))
		log_error("%s is signed with the expired key %s: update the keyring '%s'", what, k,
			  s->keyring);
	else if ((k = status_arg(status, "REVKEYSIG")))
		log_error("%s is signed with the revoked key %s; refusing it", what, k);
	else if ((k = status_arg(status, "EXPSIG")))
		log_error("%s carries an expired signature (key %s); refusing it", what, k);
	else if ((k = status_arg(status, "ERRSIG")))
		log_error("%s: gpgv cannot check the signature (key %s; unsupported algorithm or "
			  "unreadable keyring '%s')", what, k, s->keyring);
	else if (code || !status_arg(status, "VALIDSIG") || !status_arg(status, "GOODSIG"))
		log_error("%s has no valid signature from keyring '%s' (gpgv exit %d)", what,
			  s->keyring, code);
	else
		return 0;
	return -MKI_E_SIGNATURE;
}

static int run_gpgv(const struct indexes_ctx *c, const struct rel *r, const char *what)
{
	char *home = xasprintf("%s/gnupg", c->st->work_dir);
	const char *argv[10] = { "gpgv", "--homedir", home, "--status-fd", "1", "--keyring",
				 r->src->keyring, r->inrelease ? r->signed_path : r->sig_path,
				 r->inrelease ? NULL : r->signed_path, NULL };
	static const char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL };
	struct buf out = { 0 }, err = { 0 };
	struct proc_opts o = { .env = env, .out = &out, .err = &err, .stdin_fd = -1,
			       .timeout = GPGV_TIMEOUT };
	int code = 0, ret;

	mkdir(home, 0700);
	ret = proc_run(argv, &o, &code);
	if (ret == -MKI_E_INTERRUPTED) {
		/* nothing to say: main() reports the interruption */
	} else if (ret) {
		log_error("cannot run gpgv to check %s: %s (install the 'gpgv' package)", what,
			  strerror(-ret));
		ret = -MKI_E_SIGNATURE;
	} else {
		ret = judge_status(r, out.p ? out.p : "", code, what);
		if (ret && err.p)
			log_debug("gpgv said: %s", err.p);
	}
	buf_release(&out);
	buf_release(&err);
	free(home);
	return ret;
}

/* --- the Release -------------------------------------------------------------------------- */

/* Keep the verified files so the next build can ask "changed since?" and work offline. */
static int store_release(const struct rel *r, const struct buf *raw, const struct limits *lim)
{
	struct buf sig = { 0 };
	char *final = xasprintf("%s/%s", r->cache_dir, r->inrelease ? "InRelease" : "Release");
	char *sig_final = xasprintf("%s/Release.gpg", r->cache_dir);
	int ret = 0;

	if (!r->inrelease && r->sig_path &&
	    !(ret = read_file(r->sig_path, (size_t)runlimits_get(lim, LIMIT_RELEASE_SIZE), &sig)))
		ret = cache_store(sig_final, sig.p, sig.len, r->filetime);
	if (!ret)
		ret = cache_store(final, raw->p, raw->len, r->filetime);
	if (ret)
		log_error("cannot store '%s' in the cache: %s", final, strerror(-ret));
	buf_release(&sig);
	free(final);
	free(sig_final);
	return ret;
}

static int check_dates(const struct indexes_ctx *c, const struct rel *r, const char *what)
{
	const struct release_info *ri = &r->info;
	int64_t t;

	if (ri->date && indexes_parse_date(ri->date, &t))
		return log_errno(-MKI_E_PARSE, "%s has a malformed Date '%s'", what, ri->date);
	if (!ri->valid_until)
		return 0;
	if (indexes_parse_date(ri->valid_until, &t))
		return log_errno(-MKI_E_PARSE, "%s has a malformed Valid-Until '%s'", what,
				 ri->valid_until);
	if (t >= (int64_t)time(NULL))
		return 0;
	if (c->st->ignore_valid_until) {
		log_warn("%s expired on %s (Valid-Until); accepted because of --ignore-valid-until",
			 what, ri->valid_until);
		return 0;
	}
	if (r->stale)
		log_error("%s expired on %s (Valid-Until): it can no longer stand in for the mirror "
			  "mid-sync; wait and build again, or use another mirror (--source, or the "
			  "recipe's sources)", what, ri->valid_until);
	else
		log_error("%s expired on %s (Valid-Until): the mirror is stale or replays old "
			  "metadata; to build from an old snapshot on purpose use "
			  "--ignore-valid-until", what, ri->valid_until);
	return -MKI_E_EXPIRED;
}

/*
 * The Release must be the suite we asked for, by its Suite (stable) or its Codename (bookworm):
 * a validly signed Release of another suite served at this URL (buster as bookworm) is a
 * downgrade attack or a misconfigured mirror, never what the recipe means.
 */
static int check_identity(const struct rel *r, const char *what)
{
	const struct release_info *ri = &r->info;
	const char *asked = r->src->suite;

	if ((!ri->suite && !ri->codename) || (ri->suite && !strcmp(ri->suite, asked)) ||
	    (ri->codename && !strcmp(ri->codename, asked)))
		return 0;
	log_error("%s says Suite '%s' and Codename '%s', neither of which is the suite '%s' asked "
		  "for: the server sends another suite's Release (a replay or a misconfigured "
		  "mirror); if the repository really names it differently, use its Suite or "
		  "Codename in the source", what, ri->suite ? ri->suite : "(none)",
		  ri->codename ? ri->codename : "(none)", asked);
	return -MKI_E_SIGNATURE;
}

/* The Date of the Release this source last verified and kept in the cache; 0: none kept. */
static int cached_date(const struct rel *r, int64_t *t)
{
	char *path = xasprintf("%s/InRelease", r->cache_dir);
	struct buf raw = { 0 }, text = { 0 };
	struct release_info ri = { 0 };
	int inrelease = 1, line, ret;

	ret = readfile_read(path, 64u << 20, &raw, NULL);
	if (ret == -ENOENT) {
		free(path);
		path = xasprintf("%s/Release", r->cache_dir);
		inrelease = 0;
		ret = readfile_read(path, 64u << 20, &raw, NULL);
	}
	*t = 0;
	if (!ret && inrelease)
		ret = indexes_signed_text(raw.p, raw.len, &text) ? -MKI_E_PARSE : 0;
	else if (!ret)
		buf_add(&text, raw.p, raw.len);
	if (!ret)
		ret = indexes_parse_release(text.p, &ri, &line);
	if (!ret && ri.date && indexes_parse_date(ri.date, t))
		*t = 0;
	indexes_info_release(&ri);
	buf_release(&raw);
	buf_release(&text);
	free(path);
	return ret == -ENOENT ? 0 : ret;
}

/*
 * A Release older than the one verified last time from the same URL and suite is a rollback
 * (a mirror replaying validly signed old metadata to keep a fixed package out): refused unless
 * the user builds from an old snapshot on purpose.
 */
static int check_rollback(const struct indexes_ctx *c, const struct rel *r, const char *what)
{
	int64_t before = 0, now = 0;

	if (!r->fresh || cached_date(r, &before) || !before)
		return 0;
	if (!r->info.date || indexes_parse_date(r->info.date, &now))
		return log_errno(-MKI_E_EXPIRED, "%s has no Date, but the one verified before was "
				 "dated: refused as a possible rollback (--allow-release-rollback "
				 "to accept it)", what);
	if (now >= before)
		return 0;
	if (c->st->allow_rollback) {
		log_warn("%s is dated %s, older than the one verified before (%lld s older); "
			 "accepted because of --allow-release-rollback", what, r->info.date,
			 (long long)(before - now));
		return 0;
	}
	log_error("%s is dated %s, older than the Release verified from it before (%lld s "
		  "older): the mirror went back in time (a rollback replaying old signed metadata, "
		  "or a stale mirror); to build from an older snapshot on purpose use "
		  "--allow-release-rollback", what, r->info.date, (long long)(before - now));
	return -MKI_E_EXPIRED;
}

static int parse_signed(const struct rel *r, const struct buf *raw, struct buf *text,
			const char *what)
{
	if (!r->inrelease) {
		buf_add(text, raw->p, raw->len);
		return 0;
	}
	if (!indexes_signed_text(raw->p, raw->len, text))
		return 0;
	log_error("%s is not one well-formed clearsigned message (data outside the signed part?); "
		  "refusing it", what);
	return -MKI_E_SIGNATURE;
}

static int read_release_file(const struct indexes_ctx *c, const char *path, struct buf *raw)
{
	const struct limits *lim = &c->st->limits;
	int ret = read_file(path, (size_t)runlimits_get(lim, LIMIT_RELEASE_SIZE), raw);

	if (ret == -EFBIG)
		return log_errno(-MKI_E_LIMIT_REPO, "'%s' is larger than %s: refused (%s)", path,
				 runlimits_format(LIMIT_RELEASE_SIZE,
					       runlimits_get(lim, LIMIT_RELEASE_SIZE)).s,
				 runlimits_hint(lim, LIMIT_RELEASE_SIZE).s);
	if (ret)
		log_error("cannot read '%s': %s", path, strerror(-ret));
	return ret;
}

int indexes_verify_release(struct indexes_ctx *c, struct rel *r)
{
	struct buf raw = { 0 };
	char *name = rel_name(r), *what;
	int ret, line = 0;

	what = xasprintf("the %s%s of %s", r->stale ? "last verified " : "",
			 r->inrelease ? "InRelease" : "Release", name);
	ret = read_release_file(c, r->signed_path, &raw);
	if (!ret && !r->src->trusted)
		ret = run_gpgv(c, r, what);
	if (!ret)
		ret = parse_signed(r, &raw, &r->text, what);
	if (!ret && (ret = indexes_parse_release(r->text.p, &r->info, &line)))
		log_error("%s: line %d of the signed text is malformed", what, line);
	if (!ret)
		ret = check_dates(c, r, what);
	if (!ret)
		ret = check_identity(r, what);
	if (!ret)
		ret = check_rollback(c, r, what);
	if (!ret)
		hash_sha256_hex(raw.p, raw.len, r->sha256);
	if (!ret && r->fresh)
		ret = store_release(r, &raw, &c->st->limits);
	buf_release(&raw);
	free(name);
	free(what);
	return ret;
}
