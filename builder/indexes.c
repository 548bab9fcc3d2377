/*
 * Indexes: trust starts here. Nothing from a Release file is used before gpgv has accepted it
 * against the source's own keyring, and only the bytes inside the signed part are parsed.
 */
#include "indexes.h"

#include <archive.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "cache.h"
#include "cachegc.h"
#include "err.h"
#include "fetch.h"
#include "fsutil.h"
#include "hash.h"
#include "limits.h"
#include "log.h"
#include "readfile.h"
#include "proc.h"
#include "str.h"
#include "xz.h"

#define GPGV_TIMEOUT 120

struct rel_entry {
	char *path;
	uint64_t size;
	char sha256[65];
};

struct release_info {
	char *date, *valid_until, *suite, *codename;
	struct strv archs, comps;
	int by_hash, no_all;
	struct rel_entry *v;
	size_t n, alloc;
};

/* Per-source working state. */
struct rel {
	const struct source *src;
	char *base;             /* URI/dists/SUITE */
	char *cache_dir;        /* CACHE/releases/KEY */
	char *work;             /* WORK/release-N */
	int inrelease;          /* signed file is InRelease (else Release + Release.gpg) */
	int fresh;              /* downloaded now (store in the cache once verified) */
	time_t filetime;
	char *signed_path, *sig_path; /* the files gpgv checks */
	struct buf text;        /* the signed Release text */
	struct release_info info;
	char sha256[65];
};

struct ctx {
	const struct settings *st;
	const char *native_arch; /* the host's arch, fetched for native tools (accel.h); or NULL */
	struct rel *rels;
	size_t n;
	struct indexes *out;
};

static void info_release(struct release_info *ri)
{
	size_t i;

	free(ri->date);
	free(ri->valid_until);
	free(ri->suite);
	free(ri->codename);
	strv_release(&ri->archs);
	strv_release(&ri->comps);
	for (i = 0; i < ri->n; i++)
		free(ri->v[i].path);
	free(ri->v);
	memset(ri, 0, sizeof(*ri));
}

static void rel_release(struct rel *r)
{
	free(r->base);
	free(r->cache_dir);
	free(r->work);
	free(r->signed_path);
	free(r->sig_path);
	buf_release(&r->text);
	info_release(&r->info);
}

static int read_file(const char *path, size_t limit, struct buf *b)
{
	return readfile_read(path, limit, b, NULL);
}

/* --- clearsigned text ---------------------------------------------------------------------- */

static const char *next_line(const char *p, const char *end, size_t *len)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	*len = nl ? (size_t)(nl - p) : (size_t)(end - p);
	if (*len && p[*len - 1] == '\r')
		(*len)--;
	return nl ? nl + 1 : end;
}

static int line_is(const char *p, size_t len, const char *s)
{
	return len == strlen(s) && !memcmp(p, s, len);
}

static int only_space(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return 0;
	return 1;
}

int indexes_signed_text(const char *msg, size_t len, struct buf *out)
{
	const char *p = msg, *end = msg + len, *line;
	size_t n;
	int in_sig = 0;

	out->len = 0;
	p = next_line(p, end, &n);
	if (!line_is(msg, n, "-----BEGIN PGP SIGNED MESSAGE-----"))
		return -MKI_E_PARSE;
	/* Armor headers ("Hash: SHA256") up to the empty line. */
	do {
		if (p >= end)
			return -MKI_E_PARSE;
		line = p;
		p = next_line(p, end, &n);
	} while (n);
	while (p < end) {
		line = p;
		p = next_line(p, end, &n);
		if (!in_sig && line_is(line, n, "-----BEGIN PGP SIGNATURE-----")) {
			in_sig = 1;
		} else if (in_sig && line_is(line, n, "-----END PGP SIGNATURE-----")) {
			if (!only_space(p, end))
				return -MKI_E_PARSE;
			if (!out->p)
				buf_adds(out, "");
			return 0;
		} else if (!in_sig) {
			if (n && line[0] == '-') {
				if (n < 2 || line[1] != ' ')
					return -MKI_E_PARSE;
				line += 2;
				n -= 2;
			}
			buf_add(out, line, n);
			buf_add(out, "\n", 1);
		}
	}
	return -MKI_E_PARSE;
}

/* --- Release fields ------------------------------------------------------------------------ */

int indexes_parse_date(const char *s, int64_t *t)
{
	struct tm tm = { 0 };
	const char *rest = strptime(s, "%a, %d %b %Y %H:%M:%S", &tm);
	long off = 0;

	if (!rest)
		rest = strptime(s, "%d %b %Y %H:%M:%S", &tm);
	if (!rest)
		return -MKI_E_PARSE;
	rest += strspn(rest, " ");
	if ((rest[0] == '+' || rest[0] == '-') && strlen(rest) == 5 &&
	    strspn(rest + 1, "0123456789") == 4) {
		off = ((rest[1] - '0') * 10 + (rest[2] - '0')) * 3600 +
		      ((rest[3] - '0') * 10 + (rest[4] - '0')) * 60;
		off = rest[0] == '-' ? -off : off;
	} else if (*rest && strcmp(rest, "UTC") && strcmp(rest, "GMT") && strcmp(rest, "Z")) {
		return -MKI_E_PARSE;
	}
	*t = (int64_t)timegm(&tm) - off;
	return 0;
}

static int parse_sha_line(struct release_info *ri, const char *line)
{
	char sha[80], path[1024];
	unsigned long long size;
	struct rel_entry *e;

	if (sscanf(line, " %79s %llu %1023s", sha, &size, path) != 3 || !sha256_hex_valid(sha))
		return -MKI_E_PARSE;
	ALLOC_GROW(ri->v, ri->n + 1, ri->alloc);
	e = &ri->v[ri->n++];
	e->path = xstrdup(path);
	e->size = size;
	memcpy(e->sha256, sha, 65);
	return 0;
}

static void set_field(struct release_info *ri, const char *key, const char *v)
{
	if (!strcasecmp(key, "Date"))
		ri->date = xstrdup(v);
	else if (!strcasecmp(key, "Valid-Until"))
		ri->valid_until = xstrdup(v);
	else if (!strcasecmp(key, "Suite"))
		ri->suite = xstrdup(v);
	else if (!strcasecmp(key, "Codename"))
		ri->codename = xstrdup(v);
	else if (!strcasecmp(key, "Architectures"))
		strv_push(&ri->archs, v); /* split below */
	else if (!strcasecmp(key, "Components"))
		strv_push(&ri->comps, v);
	else if (!strcasecmp(key, "Acquire-By-Hash"))
		ri->by_hash = !strcasecmp(v, "yes");
	else if (!strcasecmp(key, "No-Support-for-Architecture-all"))
		ri->no_all = !strcasecmp(v, "Packages");
}

static void split_words(struct strv *v)
{
	struct strv out = { 0 };
	const char *s = v->n ? v->v[0] : "";

	while (*s) {
		size_t n;

		s += strspn(s, " \t");
		n = strcspn(s, " \t");
		if (n)
			strv_push_take(&out, xstrndup(s, n));
		s += n;
	}
	strv_release(v);
	*v = out;
}

/* One deb822 stanza; only SHA256's continuation lines are of interest. */
static int parse_release(const char *text, struct release_info *ri, int *bad_line)
{
	const char *p = text;
	int in_sha = 0, lineno = 0, ret = 0;

	while (*p && !ret) {
		size_t n = strcspn(p, "\n");
		char *line = xstrndup(p, n), *colon;

		p += n + (p[n] == '\n');
		*bad_line = ++lineno;
		if (line[0] == ' ' || line[0] == '\t') {
			if (in_sha && line[strspn(line, " \t")])
				ret = parse_sha_line(ri, line);
		} else if (!line[0]) {
			ret = *p ? -MKI_E_PARSE : 0; /* a second stanza */
		} else if ((colon = strchr(line, ':'))) {
			*colon = 0;
			in_sha = !strcmp(line, "SHA256");
			set_field(ri, line, colon + 1 + strspn(colon + 1, " \t"));
		} else {
			ret = -MKI_E_PARSE;
		}
		free(line);
	}
	split_words(&ri->archs);
	split_words(&ri->comps);
	return ret;
}

static const struct rel_entry *rel_find(const struct release_info *ri, const char *path)
{
	size_t i;

	for (i = 0; i < ri->n; i++)
		if (!strcmp(ri->v[i].path, path))
			return &ri->v[i];
	return NULL;
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

static int run_gpgv(const struct ctx *c, const struct rel *r, const char *what)
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
	if (ret) {
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

/* --- InRelease / Release ------------------------------------------------------------------- */

static char *rel_name(const struct rel *r)
{
	return xasprintf("'%s' suite '%s'", r->src->uri, r->src->suite);
}

static time_t file_mtime(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_mtime;
}

static int rel_init(struct ctx *c, struct rel *r, const struct source *src, size_t i)
{
	char key[65], *id = xasprintf("%s\n%s", src->uri, src->suite);

	sha256_hex(id, strlen(id), key);
	free(id);
	r->src = src;
	r->base = xasprintf("%s/dists/%s", src->uri, src->suite);
	r->cache_dir = xasprintf("%s/releases/%s", c->st->cache_dir, key);
	r->work = xasprintf("%s/release-%zu", c->st->work_dir, i);
	if (mkdir(r->work, 0755) && errno != EEXIST) {
		log_error("cannot create '%s': %s", r->work, strerror(errno));
		return -errno;
	}
	return 0;
}

/* --offline: the last verified files of this source, checked again below. */
static int use_cached(struct rel *r)
{
	char *in = xasprintf("%s/InRelease", r->cache_dir), *rel = xasprintf("%s/Release",
									     r->cache_dir);
	char *gpg = xasprintf("%s/Release.gpg", r->cache_dir), *name;

	if (!access(in, R_OK)) {
		r->inrelease = 1;
		r->signed_path = in;
		in = NULL;
	} else if (!access(rel, R_OK) && (r->src->trusted || !access(gpg, R_OK))) {
		r->signed_path = rel;
		r->sig_path = gpg;
		rel = gpg = NULL;
	}
	free(in);
	free(rel);
	free(gpg);
	if (r->signed_path)
		return 0;
	name = rel_name(r);
	log_error("the indexes of %s are not in the cache and --offline forbids downloading them "
		  "(run once without --offline)", name);
	free(name);
	return -MKI_E_OFFLINE;
}

static void inrelease_item(struct rel *r, struct fetch_item *it, struct strv *names)
{
	char *cached = xasprintf("%s/InRelease", r->cache_dir);

	strv_push_take(names, xasprintf("%s/InRelease", r->base));
	strv_push_take(names, xasprintf("%s/InRelease", r->work));
	*it = (struct fetch_item){ .url = names->v[names->n - 2], .dest = names->v[names->n - 1],
				   .what = "InRelease", .missing_ok = 1,
				   .if_modified = file_mtime(cached) };
	free(cached);
}

static void take_inrelease(struct rel *r, const struct fetch_item *it)
{
	r->inrelease = 1;
	if (it->not_modified) {
		r->signed_path = xasprintf("%s/InRelease", r->cache_dir);
		log_debug("InRelease of '%s' unchanged (HTTP 304)", r->base);
		return;
	}
	r->signed_path = xstrdup(it->dest);
	r->fresh = 1;
	r->filetime = it->filetime;
}

static void release_items(struct rel *r, struct fetch_item *it, struct strv *names)
{
	static const char *const files[] = { "Release", "Release.gpg" };
	int k;

	for (k = 0; k < 2; k++) {
		strv_push_take(names, xasprintf("%s/%s", r->base, files[k]));
		strv_push_take(names, xasprintf("%s/%s", r->work, files[k]));
		it[k] = (struct fetch_item){ .url = names->v[names->n - 2], .what = files[k],
					     .dest = names->v[names->n - 1], .missing_ok = 1 };
	}
}

static int take_release(struct rel *r, const struct fetch_item *it)
{
	char *name = rel_name(r);
	int ret = 0;

	if (it[0].result == -MKI_E_NOTFOUND) {
		log_error("%s has neither InRelease nor Release at '%s/': check the suite name and the "
			  "uri", name, r->base);
		ret = -MKI_E_SOURCE;
	} else if (it[1].result == -MKI_E_NOTFOUND && !r->src->trusted) {
		log_error("%s is not signed: '%s/' has a Release but neither InRelease nor "
			  "Release.gpg; refusing it (mark the source trusted only if you must)", name,
			  r->base);
		ret = -MKI_E_SIGNATURE;
	}
	free(name);
	if (ret)
		return ret;
	r->signed_path = xstrdup(it[0].dest);
	r->sig_path = it[1].result ? NULL : xstrdup(it[1].dest);
	r->fresh = 1;
	r->filetime = it[0].filetime;
	return 0;
}

/* Release + Release.gpg for the sources without an InRelease. */
static int fetch_fallback(struct ctx *c, const struct fetch_item *in)
{
	struct fetch_item *items = xcalloc(2 * c->n, sizeof(*items));
	struct strv names = { 0 };
	size_t i, n = 0, *which = xcalloc(c->n, sizeof(*which));
	int ret;

	for (i = 0; i < c->n; i++)
		if (in[i].result == -MKI_E_NOTFOUND) {
			release_items(&c->rels[i], &items[2 * n], &names);
			which[n++] = i;
		}
	ret = n ? fetch_items(items, 2 * n, c->st, "release", NULL) : 0;
	for (i = 0; i < n && !ret; i++)
		ret = take_release(&c->rels[which[i]], &items[2 * i]);
	strv_release(&names);
	free(items);
	free(which);
	return ret;
}

static int fetch_signed_files(struct ctx *c)
{
	struct fetch_item *items = xcalloc(c->n + 1, sizeof(*items));
	struct strv names = { 0 };
	size_t i;
	int ret = 0;

	for (i = 0; i < c->n && c->st->offline && !ret; i++)
		ret = use_cached(&c->rels[i]);
	if (c->st->offline)
		goto out;
	for (i = 0; i < c->n; i++)
		inrelease_item(&c->rels[i], &items[i], &names);
	ret = fetch_items(items, c->n, c->st, "release", NULL);
	for (i = 0; i < c->n && !ret; i++)
		if (!items[i].result)
			take_inrelease(&c->rels[i], &items[i]);
	if (!ret)
		ret = fetch_fallback(c, items);
out:
	strv_release(&names);
	free(items);
	return ret;
}

/* --- verification -------------------------------------------------------------------------- */

static int store_file(const struct buf *data, const char *final, time_t mtime)
{
	char *tmp = NULL;
	int fd = cache_tmp_open(final, &tmp), ret = 0;
	size_t off = 0;

	if (fd < 0)
		return fd;
	while (off < data->len && !ret) {
		ssize_t w = write(fd, data->p + off, data->len - off);

		if (w < 0 && errno != EINTR)
			ret = -errno;
		off += w > 0 ? (size_t)w : 0;
	}
	if (!ret && mtime > 0) {
		struct timespec ts[2] = { { mtime, 0 }, { mtime, 0 } };

		futimens(fd, ts);
	}
	if (ret)
		cache_discard(fd, tmp);
	else
		ret = cache_commit(fd, tmp, final);
	free(tmp);
	return ret;
}

/* Keep the verified files so the next build can ask "changed since?" and work offline. */
static int store_release(const struct rel *r, const struct buf *raw, const struct limits *lim)
{
	struct buf sig = { 0 };
	char *final = xasprintf("%s/%s", r->cache_dir, r->inrelease ? "InRelease" : "Release");
	char *sig_final = xasprintf("%s/Release.gpg", r->cache_dir);
	int ret = 0;

	if (!r->inrelease && r->sig_path &&
	    !(ret = read_file(r->sig_path, (size_t)limits_get(lim, LIMIT_RELEASE_SIZE), &sig)))
		ret = store_file(&sig, sig_final, r->filetime);
	if (!ret)
		ret = store_file(raw, final, r->filetime);
	if (ret)
		log_error("cannot store '%s' in the cache: %s", final, strerror(-ret));
	buf_release(&sig);
	free(final);
	free(sig_final);
	return ret;
}

static int check_dates(const struct ctx *c, const struct rel *r, const char *what)
{
	const struct release_info *ri = &r->info;
	int64_t t;

	if (ri->date && indexes_parse_date(ri->date, &t)) {
		log_error("%s has a malformed Date '%s'", what, ri->date);
		return -MKI_E_PARSE;
	}
	if (!ri->valid_until)
		return 0;
	if (indexes_parse_date(ri->valid_until, &t)) {
		log_error("%s has a malformed Valid-Until '%s'", what, ri->valid_until);
		return -MKI_E_PARSE;
	}
	if (t >= (int64_t)time(NULL))
		return 0;
	if (c->st->ignore_valid_until) {
		log_warn("%s expired on %s (Valid-Until); accepted because of --ignore-valid-until",
			 what, ri->valid_until);
		return 0;
	}
	log_error("%s expired on %s (Valid-Until): the mirror is stale or replays old metadata; "
		  "to build from an old snapshot on purpose use --ignore-valid-until", what,
		  ri->valid_until);
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
		ret = parse_release(text.p, &ri, &line);
	if (!ret && ri.date && indexes_parse_date(ri.date, t))
		*t = 0;
	info_release(&ri);
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
static int check_rollback(const struct ctx *c, const struct rel *r, const char *what)
{
	int64_t before = 0, now = 0;

	if (!r->fresh || cached_date(r, &before) || !before)
		return 0;
	if (!r->info.date || indexes_parse_date(r->info.date, &now)) {
		log_error("%s has no Date, but the one verified before was dated: refused as a "
			  "possible rollback (--allow-release-rollback to accept it)", what);
		return -MKI_E_EXPIRED;
	}
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

static int read_release_file(const struct ctx *c, const char *path, struct buf *raw)
{
	const struct limits *lim = &c->st->limits;
	int ret = read_file(path, (size_t)limits_get(lim, LIMIT_RELEASE_SIZE), raw);

	if (ret == -EFBIG) {
		log_error("'%s' is larger than %s: refused (%s)", path,
			  limits_format(LIMIT_RELEASE_SIZE, limits_get(lim, LIMIT_RELEASE_SIZE)).s,
			  limits_hint(lim, LIMIT_RELEASE_SIZE).s);
		return -MKI_E_LIMIT_REPO;
	}
	if (ret)
		log_error("cannot read '%s': %s", path, strerror(-ret));
	return ret;
}

static int verify_release(struct ctx *c, struct rel *r)
{
	struct buf raw = { 0 };
	char *name = rel_name(r), *what;
	int ret, line = 0;

	what = xasprintf("the %s of %s", r->inrelease ? "InRelease" : "Release", name);
	ret = read_release_file(c, r->signed_path, &raw);
	if (!ret && !r->src->trusted)
		ret = run_gpgv(c, r, what);
	if (!ret)
		ret = parse_signed(r, &raw, &r->text, what);
	if (!ret && (ret = parse_release(r->text.p, &r->info, &line)))
		log_error("%s: line %d of the signed text is malformed", what, line);
	if (!ret)
		ret = check_dates(c, r, what);
	if (!ret)
		ret = check_identity(r, what);
	if (!ret)
		ret = check_rollback(c, r, what);
	if (!ret)
		sha256_hex(raw.p, raw.len, r->sha256);
	if (!ret && r->fresh)
		ret = store_release(r, &raw, &c->st->limits);
	buf_release(&raw);
	free(name);
	free(what);
	return ret;
}

/* --- Packages ------------------------------------------------------------------------------ */

struct want {
	size_t rel;
	char *comp, *arch, *url, *derived;
	const struct rel_entry *file, *plain;
	int reuse;
	int native_tools;
	struct fetch_item item;
};

struct wants {
	struct want *v;
	size_t n, alloc;
};

static void want_release(struct want *x)
{
	free(x->comp);
	free(x->arch);
	free(x->url);
	free(x->derived);
	free(x->item.path);
}

static void wants_release(struct wants *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		want_release(&w->v[i]);
	free(w->v);
}

/* "updates/main" in a Components field names the component "main" (Debian's security archive). */
static int offers_component(const struct strv *comps, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < comps->n; i++) {
		size_t len = strlen(comps->v[i]);

		if (!strcmp(comps->v[i], name) ||
		    (len > n && comps->v[i][len - n - 1] == '/' && !strcmp(comps->v[i] + len - n, name)))
			return 1;
	}
	return 0;
}

static int check_offered(const struct rel *r, const struct strv *offered, const char *kind,
			 const char *name)
{
	char *list, *rn;

	if (!offered->n || offers_component(offered, name))
		return 0;
	list = strv_join(offered, " ");
	rn = rel_name(r);
	log_error("%s has no %s '%s' (its Release lists: %s); fix the source's %ss (%s)", rn, kind,
		  name, list, kind, r->src->origin);
	free(list);
	free(rn);
	return -MKI_E_SOURCE;
}

static const struct rel_entry *pick_file(const struct rel *r, const char *comp, const char *arch)
{
	static const char *const ext[] = { ".xz", ".zst", ".gz", "", NULL };
	const struct rel_entry *e = NULL;
	int i;

	for (i = 0; ext[i] && !e; i++) {
		char *path = xasprintf("%s/binary-%s/Packages%s", comp, arch, ext[i]);

		e = rel_find(&r->info, path);
		free(path);
	}
	return e;
}

/*
 * What the signed Release declares is refused before anything is downloaded: a Packages file of
 * "several GiB" costs us nothing but this check.
 */
static int check_declared(const struct ctx *c, const struct rel *r, const struct rel_entry *f,
			  const struct rel_entry *plain)
{
	const struct limits *lim = &c->st->limits;
	const struct rel_entry *e = f;
	enum limit_id id = LIMIT_INDEX_SIZE;
	char *rn;

	if (f->size <= limits_get(lim, LIMIT_INDEX_SIZE)) {
		if (!plain || plain->size <= limits_get(lim, LIMIT_INDEX_UNPACKED))
			return 0;
		e = plain;
		id = LIMIT_INDEX_UNPACKED;
	}
	rn = rel_name(r);
	log_error("the Release of %s declares '%s' as %llu bytes, more than %s: refused before "
		  "downloading it (%s)", rn, e->path, (unsigned long long)e->size,
		  limits_format(id, limits_get(lim, id)).s, limits_hint(lim, id).s);
	free(rn);
	return -MKI_E_LIMIT_REPO;
}

static int add_want(struct ctx *c, struct wants *w, size_t ri, const char *comp, const char *arch)
{
	const struct rel *r = &c->rels[ri];
	const struct rel_entry *f = pick_file(r, comp, arch);
	char *plain = xasprintf("%s/binary-%s/Packages", comp, arch), *rn;
	struct want *x;
	struct stat st;
	int ret;

	if (!f && !strcmp(arch, "all")) {
		free(plain);
		return 0;
	}
	if (!f) {
		rn = rel_name(r);
		log_error("%s lists no '%s' (.xz, .zst, .gz or plain) although it names component "
			  "'%s' and architecture '%s'", rn, plain, comp, arch);
		free(rn);
		free(plain);
		return -MKI_E_SOURCE;
	}
	if (check_declared(c, r, f, rel_find(&r->info, plain))) {
		free(plain);
		return -MKI_E_LIMIT_REPO;
	}
	ALLOC_GROW(w->v, w->n + 1, w->alloc);
	x = &w->v[w->n++];
	memset(x, 0, sizeof(*x));
	x->rel = ri;
	x->comp = xstrdup(comp);
	x->arch = xstrdup(arch);
	x->file = f;
	x->plain = rel_find(&r->info, plain);
	x->url = r->info.by_hash ? xasprintf("%s/%s/binary-%s/by-hash/SHA256/%s", r->base, comp,
					     arch, f->sha256)
				 : xasprintf("%s/%s", r->base, f->path);
	x->derived = xasprintf("%s/indexes/%s", c->st->cache_dir, f->sha256);
	free(plain);
	ret = cache_user_claim(c->st->cache_user, f->sha256);
	x->reuse = !ret && !stat(x->derived, &st) && S_ISREG(st.st_mode);
	return ret;
}

/* A host source whose Release lacks an architecture: skipped, as apt does, with a warning. */
static int skip_arch(const struct rel *r, const char *arch, int warn)
{
	char *rn;

	if (!r->src->from_host || !r->info.archs.n || strv_contains(&r->info.archs, arch))
		return 0;
	if (warn) {
		rn = rel_name(r);
		log_warn("%s does not provide architecture '%s'; skipped (%s)", rn, arch,
			 r->src->origin);
		free(rn);
	}
	return 1;
}

/*
 * The host-arch index only speeds configuring up (accel.h): offline, one not yet in the cache is
 * left out rather than failing a build that needs nothing from it.
 */
static void native_want(struct ctx *c, struct wants *w)
{
	struct want *x = &w->v[w->n - 1];

	x->native_tools = 1;
	if (c->st->offline && !x->reuse) {
		log_info("offline: no host-architecture index in the cache for native tools (%s)",
			 x->url);
		want_release(x);
		w->n--;
	}
}

static int want_release_files(struct ctx *c, struct wants *w, size_t ri)
{
	const struct rel *r = &c->rels[ri];
	const struct release_info *ri_ = &r->info;
	size_t i, j;
	int ret = 0, all;

	for (i = 0; i < r->src->components.n && !ret; i++)
		ret = check_offered(r, &ri_->comps, "component", r->src->components.v[i]);
	for (i = 0; i < r->src->archs.n && !ret && !r->src->from_host; i++)
		ret = check_offered(r, &ri_->archs, "architecture", r->src->archs.v[i]);
	all = strv_contains(&ri_->archs, "all") && !ri_->no_all;
	for (i = 0; i < r->src->components.n && !ret; i++) {
		for (j = 0; j < r->src->archs.n && !ret; j++)
			if (skip_arch(r, r->src->archs.v[j], !i))
				continue;
			else
				ret = add_want(c, w, ri, r->src->components.v[i],
					       r->src->archs.v[j]);
		if (!ret && all)
			ret = add_want(c, w, ri, r->src->components.v[i], "all");
		if (!ret && c->native_arch && strv_contains(&ri_->archs, c->native_arch) &&
		    pick_file(r, r->src->components.v[i], c->native_arch) &&
		    !(ret = add_want(c, w, ri, r->src->components.v[i], c->native_arch)))
			native_want(c, w);
	}
	return ret;
}

/* Download the indexes not yet decompressed in the cache; by-hash falls back to the plain name. */
static int fetch_wants(struct ctx *c, struct wants *w, int by_hash_retry)
{
	struct fetch_item *items = xcalloc(w->n + 1, sizeof(*items));
	size_t i, n = 0, *idx = xcalloc(w->n + 1, sizeof(*idx));
	int ret, again = 0;

	for (i = 0; i < w->n; i++) {
		struct want *x = &w->v[i];

		if (x->reuse || x->item.path || (by_hash_retry && x->item.result != -MKI_E_NOTFOUND))
			continue;
		if (by_hash_retry) {
			free(x->url);
			x->url = xasprintf("%s/%s", c->rels[x->rel].base, x->file->path);
		}
		items[n] = (struct fetch_item){ .url = x->url, .what = x->file->path,
						.size = x->file->size, .sha256 = x->file->sha256,
						.missing_ok = c->rels[x->rel].info.by_hash &&
							      !by_hash_retry };
		idx[n++] = i;
	}
	ret = n ? fetch_items(items, n, c->st, "indexes", NULL) : 0;
	for (i = 0; i < n; i++) {
		w->v[idx[i]].item = items[i];
		again |= items[i].result == -MKI_E_NOTFOUND;
	}
	free(items);
	free(idx);
	if (!ret && again && !by_hash_retry)
		return fetch_wants(c, w, 1);
	return ret;
}

/* Where decompressed bytes go: hashed, bounded by `max`, written to `fd`. */
struct sink {
	int fd;
	struct hash *h;
	uint64_t total, max;
};

/* -MKI_E_LIMIT as soon as more than `max` bytes came out. */
static int sink_add(struct sink *k, const void *p, size_t n)
{
	k->total += n;
	if (k->total > k->max)
		return -MKI_E_LIMIT;
	hash_update(k->h, p, n);
	return fsutil_write_all(k->fd, p, n);
}

static int copy_out(struct archive *a, struct sink *k)
{
	char chunk[65536];
	la_ssize_t n;
	int ret = 0;

	while (!ret && (n = archive_read_data(a, chunk, sizeof(chunk))) > 0)
		ret = sink_add(k, chunk, (size_t)n);
	return ret ? ret : n < 0 ? -MKI_E_PARSE : 0;
}

static int archive_into(const char *src, struct sink *k)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int ret = 0;

	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	archive_read_support_format_empty(a);
	if (archive_read_open_filename(a, src, 65536) != ARCHIVE_OK) {
		log_error("cannot open '%s': %s", src, archive_error_string(a));
		ret = -MKI_E_PARSE;
	} else if (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		ret = copy_out(a, k);
		if (ret == -MKI_E_PARSE)
			log_error("cannot decompress '%s': %s", src, archive_error_string(a));
	}
	archive_read_free(a);
	return ret;
}

/* .xz through liblzma under 'xz-memory' (see xz.h); -MKI_E_LIMIT for the output bound. */
static int xz_into(const char *src, int in, struct sink *k, uint64_t memlimit, uint64_t *memneed)
{
	struct xz *x = xz_new(memlimit, 0);
	uint8_t *ibuf = xmalloc(65536), *obuf = xmalloc(65536);
	const uint8_t *p = ibuf;
	size_t avail = 0, out;
	ssize_t got = 1;
	int ret = x ? 0 : -ENOMEM;

	while (!ret) {
		if (!avail && got > 0 && (got = read(in, ibuf, 65536)) >= 0) {
			avail = (size_t)got;
			p = ibuf;
		}
		out = 65536;
		ret = got < 0 ? -errno : xz_decode(x, &p, &avail, obuf, &out, got == 0);
		if (ret >= 0 && out) {
			int r = sink_add(k, obuf, out);

			ret = r ? r : ret;
		}
	}
	if (ret == -MKI_E_LIMIT && k->total <= k->max)
		*memneed = xz_memneed(x);
	if (ret == -MKI_E_PARSE)
		log_error("cannot decompress '%s': %s", src, xz_error(x));
	xz_free(x);
	free(ibuf);
	free(obuf);
	return ret == 1 ? 0 : ret;
}

static int decompress_into(const char *src, struct sink *k, uint64_t memlimit, uint64_t *memneed)
{
	unsigned char magic[6];
	int in = open(src, O_RDONLY | O_CLOEXEC), ret;

	if (in < 0) {
		log_error("cannot open '%s': %s", src, strerror(errno));
		return -errno;
	}
	if (read(in, magic, sizeof(magic)) == sizeof(magic) && xz_is_xz(magic, sizeof(magic)) &&
	    lseek(in, 0, SEEK_SET) == 0)
		ret = xz_into(src, in, k, memlimit, memneed);
	else
		ret = archive_into(src, k);
	close(in);
	return ret;
}

static int check_plain(const struct want *x, const char *hex, uint64_t total)
{
	if (!x->plain || (x->plain->size == total && !strcmp(x->plain->sha256, hex)))
		return 0;
	log_error("'%s' decompresses to %llu bytes with SHA-256 %s, but the Release says %llu "
		  "bytes, %s for '%s': the mirror is inconsistent; nothing was cached", x->url,
		  (unsigned long long)total, hex, (unsigned long long)x->plain->size,
		  x->plain->sha256, x->plain->path);
	return -MKI_E_INTEGRITY;
}

/*
 * Decompression went past `max` (the Release's own size for the plain file, or the limit), or
 * its xz headers asked for `memneed` bytes of memory.
 */
static int too_big(const struct ctx *c, const struct want *x, uint64_t max, uint64_t memneed)
{
	const struct limits *lim = &c->st->limits;

	if (memneed) {
		log_error("'%s' needs %llu MiB of memory to decompress (its xz dictionary), more than "
			  "%s: refused before decompressing (%s)", x->url,
			  (unsigned long long)(memneed >> 20),
			  limits_format(LIMIT_XZ_MEMORY, limits_get(lim, LIMIT_XZ_MEMORY)).s,
			  limits_hint(lim, LIMIT_XZ_MEMORY).s);
		return -MKI_E_LIMIT_REPO;
	}
	if (x->plain && x->plain->size == max) {
		log_error("'%s' decompresses to more than the %llu bytes the Release declares for "
			  "'%s': the mirror is inconsistent or hostile; stopped there, nothing was "
			  "cached", x->url, (unsigned long long)max, x->plain->path);
		return -MKI_E_INTEGRITY;
	}
	log_error("'%s' decompresses to more than %s (a decompression bomb?): stopped there, "
		  "nothing was cached (%s)", x->url, limits_format(LIMIT_INDEX_UNPACKED, max).s,
		  limits_hint(lim, LIMIT_INDEX_UNPACKED).s);
	return -MKI_E_LIMIT_REPO;
}

/* A refused download leaves the cache too: the next build fetches it again, if it must. */
static void evict(const struct want *x, int ret)
{
	if ((ret == -MKI_E_LIMIT_REPO || ret == -MKI_E_INTEGRITY || ret == -MKI_E_PARSE) &&
	    x->item.path && !unlink(x->item.path))
		log_debug("removed the refused '%s' from the cache", x->item.path);
}

/*
 * Stream the download through the decompressor into the cache. Memory stays bounded whatever the
 * file claims; the output stops at the plain file's declared size or the limit, whichever is less.
 */
static int decompress_want(const struct ctx *c, struct want *x)
{
	const struct limits *lim = &c->st->limits;
	uint64_t memneed = 0;
	struct hash h = { 0 };
	struct sink k = { .h = &h, .max = limits_get(lim, LIMIT_INDEX_UNPACKED) };
	char *tmp = NULL, hex[65];
	int ret;

	k.fd = cache_tmp_open(x->derived, &tmp);
	if (k.fd < 0) {
		log_error("cannot create a temp file for '%s': %s", x->derived, strerror(-k.fd));
		return k.fd;
	}
	if (x->plain && x->plain->size < k.max)
		k.max = x->plain->size;
	ret = hash_init(&h, HASH_SHA256);
	if (!ret)
		ret = decompress_into(x->item.path, &k, limits_get(lim, LIMIT_XZ_MEMORY), &memneed);
	if (ret == -MKI_E_LIMIT)
		ret = too_big(c, x, k.max, memneed);
	if (!ret) {
		hash_final_hex(&h, hex);
		ret = check_plain(x, hex, k.total);
	} else if (h.ctx) {
		hash_release(&h);
	}
	if (!ret)
		ret = cache_commit(k.fd, tmp, x->derived);
	else
		cache_discard(k.fd, tmp);
	if (ret < 0 && ret > -MKI_E_BASE)
		log_error("cannot store '%s': %s", x->derived, strerror(-ret));
	evict(x, ret);
	free(tmp);
	return ret;
}

/* --- the stage ----------------------------------------------------------------------------- */

static void emit(struct ctx *c, const struct wants *w)
{
	struct indexes *ix = c->out;
	size_t i;

	ix->n_releases = c->n;
	ix->releases = xcalloc(c->n + 1, sizeof(*ix->releases));
	for (i = 0; i < c->n; i++) {
		struct index_release *o = &ix->releases[i];
		struct rel *r = &c->rels[i];

		o->src = r->src;
		memcpy(o->inrelease_sha256, r->sha256, 65);
		o->date = r->info.date ? xstrdup(r->info.date) : NULL;
		o->valid_until = r->info.valid_until ? xstrdup(r->info.valid_until) : NULL;
	}
	ix->n_files = w->n;
	ix->files = xcalloc(w->n + 1, sizeof(*ix->files));
	for (i = 0; i < w->n; i++) {
		struct index_file *f = &ix->files[i];
		struct stat st;

		f->release = w->v[i].rel;
		f->component = xstrdup(w->v[i].comp);
		f->arch = xstrdup(w->v[i].arch);
		f->path = xstrdup(w->v[i].derived);
		f->url = xstrdup(w->v[i].url);
		f->size = stat(f->path, &st) ? 0 : (uint64_t)st.st_size;
		f->native_tools = w->v[i].native_tools;
	}
}

static void log_summary(const struct ctx *c, const struct wants *w)
{
	size_t i, j;

	for (i = 0; i < c->n; i++) {
		const struct rel *r = &c->rels[i];
		struct buf files = { 0 };

		for (j = 0; j < w->n; j++)
			if (w->v[j].rel == i)
				buf_addf(&files, " %s/%s %llu KiB%s;", w->v[j].comp, w->v[j].arch,
					 (unsigned long long)(c->out->files[j].size + 1023) / 1024,
					 w->v[j].reuse ? " (cached)" : "");
		log_info("indexes: %s %s: %s, dated %s%s%s;%s", r->src->uri, r->src->suite,
			 r->src->trusted ? "NOT verified (trusted)" : "signature good",
			 r->info.date ? r->info.date : "(no date)",
			 r->info.valid_until ? ", valid until " : "",
			 r->info.valid_until ? r->info.valid_until : "", files.p ? files.p : "");
		buf_release(&files);
	}
}

static int process(struct ctx *c, struct wants *w)
{
	size_t i;
	int ret = fetch_signed_files(c);

	for (i = 0; i < c->n && !ret; i++)
		ret = verify_release(c, &c->rels[i]);
	for (i = 0; i < c->n && !ret; i++)
		ret = want_release_files(c, w, i);
	if (!ret)
		ret = fetch_wants(c, w, 0);
	for (i = 0; i < w->n && !ret; i++)
		if (!w->v[i].reuse)
			ret = decompress_want(c, &w->v[i]);
	return ret;
}

/*
 * The host's arch when some recipe arch is emulated and the host's is not a recipe arch: its
 * index names the host builds of the plan's programs (accel.h). Never given to the resolver.
 */
static const char *native_tools_arch(const struct recipe *r, const struct settings *st)
{
	struct strv archs = { 0 };
	const char *host = arch_host();
	int emulated = 0;
	size_t i;

	recipe_all_archs(r, &archs);
	for (i = 0; i < archs.n; i++) {
		const struct arch *a = arch_find(archs.v[i]);

		emulated |= a && !arch_runs_natively(a);
	}
	if (strv_contains(&archs, host) || st->no_native_tools)
		emulated = 0;
	strv_release(&archs);
	return emulated ? host : NULL;
}

int indexes_fetch(struct indexes *out, const struct sources *s, const struct recipe *r,
		  const struct settings *st)
{
	struct ctx c = { .st = st, .out = out, .n = s->n };
	struct wants w = { 0 };
	size_t i;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	c.native_arch = native_tools_arch(r, st);
	c.rels = xcalloc(s->n + 1, sizeof(*c.rels));
	for (i = 0; i < s->n && !ret; i++)
		ret = rel_init(&c, &c.rels[i], &s->v[i], i);
	if (!ret)
		ret = process(&c, &w);
	if (!ret) {
		emit(&c, &w);
		log_summary(&c, &w);
	}
	for (i = 0; i < s->n; i++)
		rel_release(&c.rels[i]);
	free(c.rels);
	wants_release(&w);
	return ret;
}

void indexes_release(struct indexes *ix)
{
	size_t i;

	for (i = 0; i < ix->n_releases; i++) {
		free(ix->releases[i].date);
		free(ix->releases[i].valid_until);
	}
	for (i = 0; i < ix->n_files; i++) {
		free(ix->files[i].component);
		free(ix->files[i].arch);
		free(ix->files[i].path);
		free(ix->files[i].url);
	}
	free(ix->releases);
	free(ix->files);
	memset(ix, 0, sizeof(*ix));
}
