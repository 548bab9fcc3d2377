/*
 * Sources: which repositories to read, and with which key. The host's apt configuration is parsed
 * as apt does (one-line .list and deb822 .sources), limited to what a builder needs.
 */
#include "sources.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debian/deb822.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/url.h"
#include "sources_internal.h"

#define MAX_SOURCES_FILE (1u << 20)

struct ctx {
	struct sources *out;
	const struct recipe *r;
	const struct settings *st;
	const struct recipe_source *rs; /* the recipe's host entry being expanded */
	struct strv archs;              /* all recipe architectures */
	char *apt_root;
	char *codename;                 /* the host's, or NULL */
	char *default_keyring;          /* trusted.gpg(.d) combined, made on first use */
	unsigned n_keys;
	int twins;                      /* sources_load_twins(): verified host entries only */
};

/* One parsed entry before filtering, whatever the file syntax. */
struct entry {
	struct strv types, uris, suites, components, archs;
	char *signed_by; /* a path or an inline armored key */
	int trusted, enabled;
	char *origin;
};

static void entry_release(struct entry *e)
{
	strv_release(&e->types);
	strv_release(&e->uris);
	strv_release(&e->suites);
	strv_release(&e->components);
	strv_release(&e->archs);
	free(e->signed_by);
	free(e->origin);
	memset(e, 0, sizeof(*e));
}

static void split_ws(const char *s, const char *seps, struct strv *out)
{
	while (*s) {
		size_t n;

		s += strspn(s, seps);
		n = strcspn(s, seps);
		if (n)
			strv_push_take(out, xstrndup(s, n));
		s += n;
	}
}

/* A sources file, keyring or os-release: a regular file within MAX_SOURCES_FILE. */
static const char *small_kind; /* what the last refused file was, for readfile_why() */

static int read_small_file(const char *path, struct buf *b)
{
	return readfile_read(path, MAX_SOURCES_FILE, b, &small_kind);
}

/* --- keyrings ------------------------------------------------------------------------------ */

static int b64_value(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decode one armored block's body (after the blank line) up to its '=' checksum or END line. */
static const char *decode_body(const char *p, struct buf *out)
{
	unsigned acc = 0, bits = 0;

	for (; *p; p++) {
		int v;

		if (*p == '\n' && (p[1] == '=' || p[1] == '-'))
			break;
		v = b64_value((unsigned char)*p);
		if (v < 0)
			continue; /* newlines, CR, padding */
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			char c = (char)((acc >> (bits - 8)) & 0xff);

			bits -= 8;
			buf_add(out, &c, 1);
		}
	}
	return p;
}

int sources_dearmor(const char *text, struct buf *out)
{
	static const char begin[] = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
	const char *p = text, *body;
	size_t before = out->len;

	while ((p = strstr(p, begin))) {
		/* Armor headers end at the first empty line. */
		body = strstr(p, "\n\n");
		if (!body || !strstr(body, "-----END PGP PUBLIC KEY BLOCK-----"))
			break;
		p = decode_body(body + 2, out);
	}
	return out->len > before ? 0 : -MKI_E_PARSE;
}

static int write_keyring(struct ctx *c, const struct buf *bin, char **path)
{
	int fd, ret = 0;

	*path = xasprintf("%s/keyring-%u.gpg", c->st->work_dir, c->n_keys++);
	fd = open(*path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, bin->p, bin->len) != (ssize_t)bin->len)
		ret = -errno;
	if (fd >= 0 && close(fd) && !ret)
		ret = -errno;
	if (ret) {
		log_error("cannot write '%s': %s", *path, strerror(-ret));
		free(*path);
		*path = NULL;
		return -MKI_E_SOURCE;
	}
	return 0;
}

static int is_armored(const char *s)
{
	return strstr(s, "-----BEGIN PGP PUBLIC KEY BLOCK-----") != NULL;
}

/* A keyring named by a source: binary files are used as they are, armored ones converted. */
static int keyring_from_text(struct ctx *c, const char *text, const char *origin, char **out)
{
	struct buf bin = { 0 };
	int ret = sources_dearmor(text, &bin);

	if (ret)
		log_error("%s: the armored key is malformed (no 'BEGIN PGP PUBLIC KEY BLOCK' with a "
			  "body)", origin);
	else
		ret = write_keyring(c, &bin, out);
	buf_release(&bin);
	return ret ? -MKI_E_SOURCE : 0;
}

static int keyring_from_file(struct ctx *c, const char *path, const char *origin, char **out)
{
	struct buf text = { 0 };
	int ret;

	if (path[0] != '/') {
		log_error("%s: keyring '%s' must be an absolute path", origin, path);
		return -MKI_E_SOURCE;
	}
	ret = read_small_file(path, &text);
	if (ret) {
		log_error("%s: cannot read keyring '%s': %s", origin, path,
			  readfile_why(ret, small_kind));
		buf_release(&text);
		return -MKI_E_SOURCE;
	}
	if (text.len && memchr(text.p, 0, text.len) == NULL && is_armored(text.p))
		ret = keyring_from_text(c, text.p, origin, out);
	else
		*out = xstrdup(path);
	buf_release(&text);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in `dir` ending with one of the suffixes (as apt reads them: in order). */
static void list_dir(const char *dir, const char *const *suffixes, struct strv *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t i;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		for (i = 0; suffixes[i]; i++)
			if (str_ends_with(de->d_name, suffixes[i]))
				strv_push_take(out, xasprintf("%s/%s", dir, de->d_name));
	}
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

/* No Signed-By: apt trusts trusted.gpg and trusted.gpg.d; combine them into one keyring. */
static int default_keyring(struct ctx *c, const char *origin, char **out)
{
	static const char *const sfx[] = { ".gpg", ".asc", NULL };
	struct strv files = { 0 };
	struct buf all = { 0 };
	char *dir = xasprintf("%s/trusted.gpg.d", c->apt_root), *one = xasprintf("%s/trusted.gpg",
										  c->apt_root);
	size_t i;
	int ret = 0;

	if (c->default_keyring)
		goto done;
	if (!access(one, R_OK))
		strv_push(&files, one);
	list_dir(dir, sfx, &files);
	for (i = 0; i < files.n && !ret; i++) {
		struct buf text = { 0 };

		ret = read_small_file(files.v[i], &text);
		if (!ret && str_ends_with(files.v[i], ".asc") && sources_dearmor(text.p, &all))
			log_warn("ignoring malformed armored key '%s'", files.v[i]);
		else if (!ret && !str_ends_with(files.v[i], ".asc"))
			buf_add(&all, text.p, text.len);
		buf_release(&text);
	}
	if (!ret && !all.len) {
		log_error("%s: no Signed-By and no keys in '%s' or '%s': name the repository's key with "
			  "signed-by", origin, one, dir);
		ret = -MKI_E_SOURCE;
	}
	if (!ret)
		ret = write_keyring(c, &all, &c->default_keyring);
done:
	if (!ret)
		*out = xstrdup(c->default_keyring);
	strv_release(&files);
	buf_release(&all);
	free(dir);
	free(one);
	return ret;
}

/* --- the output list --------------------------------------------------------------------- */

static char *normalize_uri(const char *uri, const char *origin)
{
	size_t n = strlen(uri);

	while (n > 1 && uri[n - 1] == '/')
		n--;
	if (str_starts_with(uri, "http://") || str_starts_with(uri, "https://") ||
	    str_starts_with(uri, "file:///"))
		return xstrndup(uri, n);
	if (str_starts_with(uri, "file:/") && uri[6] != '/')
		return xasprintf("file://%.*s", (int)(n - 5), uri + 5);
	log_error("%s: unsupported uri '%s': use http://, https:// or file://", origin, uri);
	return NULL;
}

static int find_source(const struct sources *s, const char *uri, const char *suite)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].uri, uri) && !strcmp(s->v[i].suite, suite))
			return 1;
	return 0;
}

/* Append a source; takes `keyring`. Duplicates (same uri and suite) are dropped, as apt does. */
static int add_source(struct ctx *c, const char *uri, const char *suite, const struct strv *comps,
		      const struct strv *archs, char *keyring, int trusted, const char *origin)
{
	struct source *src;
	char *u = normalize_uri(uri, origin);
	size_t i;

	if (!u) {
		free(keyring);
		return -MKI_E_SOURCE;
	}
	if (find_source(c->out, u, suite)) {
		log_debug("%s: '%s' '%s' is listed twice; using the first", origin, u, suite);
		free(u);
		free(keyring);
		return 0;
	}
	c->out->v = xrealloc(c->out->v, (c->out->n + 1) * sizeof(*c->out->v));
	src = &c->out->v[c->out->n++];
	memset(src, 0, sizeof(*src));
	src->uri = u;
	src->suite = xstrdup(suite);
	for (i = 0; i < comps->n; i++)
		strv_push(&src->components, comps->v[i]);
	for (i = 0; i < archs->n; i++)
		strv_push(&src->archs, archs->v[i]);
	src->keyring = keyring;
	src->trusted = trusted;
	src->from_host = c->rs != NULL;
	src->origin = xstrdup(origin);
	return 0;
}

/* The recipe architectures a source serves: `want` (empty: all) and `offered` (empty: all). */
static void pick_archs(const struct ctx *c, const struct strv *want, const struct strv *offered,
		       struct strv *out)
{
	size_t i;

	for (i = 0; i < c->archs.n; i++) {
		const char *a = c->archs.v[i];

		if ((!want->n || strv_contains(want, a)) && (!offered->n || strv_contains(offered, a)))
			strv_push(out, a);
	}
}

/* --- host entries --------------------------------------------------------------------------- */

/* "bookworm-updates" -> "trixie-updates" when the recipe asks for trixie on a bookworm host. */
static char *rewrite_suite(const struct ctx *c, const char *suite)
{
	const char *want = c->rs->suite;
	size_t n = c->codename ? strlen(c->codename) : 0;

	if (!n || !want || strncmp(suite, c->codename, n) || (suite[n] && suite[n] != '-'))
		return xstrdup(suite);
	return xasprintf("%s%s", want, suite + n);
}

static int entry_keyring(struct ctx *c, const struct entry *e, char **out)
{
	*out = NULL;
	if (e->trusted || c->rs->trusted)
		return 0;
	if (!e->signed_by)
		return default_keyring(c, e->origin, out);
	if (is_armored(e->signed_by))
		return keyring_from_text(c, e->signed_by, e->origin, out);
	if (strchr(e->signed_by, '/'))
		return keyring_from_file(c, e->signed_by, e->origin, out);
	log_error("%s: Signed-By '%s' is a key fingerprint; mkimage needs a keyring file (or an "
		  "inline key)", e->origin, e->signed_by);
	return -MKI_E_SOURCE;
}

/*
 * The components fetched from a host entry: its own when the group names none; else, when it
 * names any of the group's, all of the group's: the archive serving "main" serves its other
 * components (non-free-firmware) whatever the host's sources name, and one its Release lacks
 * is skipped (indexes_select.c). An entry naming none of them is another archive's: skipped.
 */
static void pick_components(const struct ctx *c, const struct entry *e, struct strv *out)
{
	const struct strv *from = &e->components;
	size_t i;

	for (i = 0; c->rs->components.n && i < e->components.n; i++)
		if (strv_contains(&c->rs->components, e->components.v[i]))
			from = &c->rs->components;
	if (c->rs->components.n && from == &e->components)
		return;
	for (i = 0; i < from->n; i++)
		strv_push(out, from->v[i]);
}

static int add_entry(struct ctx *c, const struct entry *e)
{
	struct strv archs = { 0 }, comps = { 0 };
	size_t i, j;
	int ret = 0;

	if (!e->enabled || !strv_contains(&e->types, "deb"))
		return 0;
	if (c->twins && e->trusted) {
		log_info("%s: trusted=yes (not verified): not used for native tools", e->origin);
		return 0;
	}
	for (i = 0; i < e->suites.n; i++)
		if (str_ends_with(e->suites.v[i], "/")) {
			log_warn("%s: flat repository '%s' is not supported yet; skipped", e->origin,
				 e->suites.v[i]);
			return 0;
		}
	pick_archs(c, &c->rs->archs, &e->archs, &archs);
	pick_components(c, e, &comps);
	if (!archs.n || !comps.n) {
		log_debug("%s: skipped (%s)", e->origin, !archs.n ? "none of the recipe's "
			  "architectures" : "none of the wanted components");
		goto out;
	}
	for (i = 0; i < e->uris.n && !ret; i++)
		for (j = 0; j < e->suites.n && !ret; j++) {
			char *suite = rewrite_suite(c, e->suites.v[j]), *key = NULL;

			if (!(ret = entry_keyring(c, e, &key)))
				ret = add_source(c, e->uris.v[i], suite, &comps, &archs, key,
						 e->trusted || c->rs->trusted, e->origin);
			free(suite);
		}
out:
	strv_release(&archs);
	strv_release(&comps);
	return ret;
}

/* "[ arch=armhf,arm64 signed-by=/k.gpg ]" of a one-line entry. */
static int parse_options(const char *opts, struct entry *e)
{
	struct strv v = { 0 };
	size_t i;
	int ret = 0;

	split_ws(opts, " \t", &v);
	for (i = 0; i < v.n && !ret; i++) {
		char *eq = strchr(v.v[i], '=');

		if (!eq) {
			log_error("%s: option '%s' lacks '=value'", e->origin, v.v[i]);
			ret = -MKI_E_SOURCE;
			continue;
		}
		*eq++ = 0;
		if (!strcmp(v.v[i], "arch"))
			split_ws(eq, ",", &e->archs);
		else if (!strcmp(v.v[i], "signed-by") && e->signed_by) {
			/* Which key would count is not obvious: refuse rather than guess. */
			log_error("%s: option 'signed-by' given twice; keep one", e->origin);
			ret = -MKI_E_SOURCE;
		} else if (!strcmp(v.v[i], "signed-by"))
			e->signed_by = xstrdup(eq);
		else if (!strcmp(v.v[i], "trusted"))
			e->trusted = !strcmp(eq, "yes");
		else if (!strcmp(v.v[i], "enabled"))
			e->enabled = strcmp(eq, "no") != 0;
		else
			log_debug("%s: ignoring option '%s'", e->origin, v.v[i]);
	}
	strv_release(&v);
	return ret;
}

/* parse_list_line()'s result for a line without an entry, beside 0 and -MKI_E_SOURCE. */
enum { LIST_LINE_BLANK = 1 };

/* One line of sources.list; returns 0 (filled), LIST_LINE_BLANK or -MKI_E_SOURCE. */
static int parse_list_line(char *line, struct entry *e)
{
	struct strv w = { 0 };
	char *p, *close;
	size_t n, i;
	int ret = 0;

	line[strcspn(line, "#\r")] = 0;
	p = line + strspn(line, " \t");
	n = strcspn(p, " \t");
	if (!*p || !n)
		return LIST_LINE_BLANK;
	strv_push_take(&e->types, xstrndup(p, n));
	if (strcmp(e->types.v[0], "deb") && strcmp(e->types.v[0], "deb-src")) {
		log_error("%s: unknown type '%s' (expected 'deb' or 'deb-src')", e->origin,
			  e->types.v[0]);
		return -MKI_E_SOURCE;
	}
	p += n;
	p += strspn(p, " \t");
	if (*p == '[') {
		close = strchr(p, ']');
		if (!close) {
			log_error("%s: '[' of the options is never closed", e->origin);
			return -MKI_E_SOURCE;
		}
		*close = 0;
		ret = parse_options(p + 1, e);
		p = close + 1;
	}
	split_ws(p, " \t", &w);
	if (!ret && w.n < 2) {
		log_error("%s: expected 'deb [options] URI SUITE [COMPONENT...]'", e->origin);
		ret = -MKI_E_SOURCE;
	}
	if (!ret) {
		strv_push(&e->uris, w.v[0]);
		strv_push(&e->suites, w.v[1]);
		for (i = 2; i < w.n; i++)
			strv_push(&e->components, w.v[i]);
	}
	strv_release(&w);
	return ret;
}

static int read_list(struct ctx *c, const char *path)
{
	struct buf text = { 0 };
	char *line, *next;
	int ret = read_small_file(path, &text), lineno = 0;

	if (ret == -ENOENT)
		ret = 0;
	else if (ret)
		log_error("cannot read '%s': %s", path, readfile_why(ret, small_kind));
	for (line = text.p; !ret && line && *line; line = next) {
		struct entry e = { .enabled = 1 };

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		e.origin = xasprintf("%s:%d", path, ++lineno);
		ret = parse_list_line(line, &e);
		ret = ret == LIST_LINE_BLANK ? 0 : ret ? ret : add_entry(c, &e);
		entry_release(&e);
	}
	buf_release(&text);
	return ret ? -MKI_E_SOURCE : 0;
}

/* --- deb822 .sources ----------------------------------------------------------------------- */

/*
 * A field of the current stanza, NULL if absent. A continuation line of a lone "." stands for an
 * empty line (an inline key's blank line), as in any deb822 file.
 */
static char *field_value(const struct deb822 *d, const char *key)
{
	const char *v = deb822_get(d, key), *line, *nl;
	struct buf b = { 0 };
	size_t len;

	if (!v)
		return NULL;
	buf_adds(&b, "");
	for (line = v; line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
		if (line != v)
			buf_adds(&b, "\n");
		if (line == v || len != 1 || *line != '.')
			buf_add(&b, line, len);
	}
	return buf_detach(&b);
}

static int is_yes(const char *v)
{
	return v && (!strcasecmp(v, "yes") || !strcasecmp(v, "true"));
}

static void split_field(const struct deb822 *d, const char *key, struct strv *out)
{
	char *v = field_value(d, key);

	split_ws(v ? v : "", " \t\n", out);
	free(v);
}

static int stanza_to_entry(const struct deb822 *d, const char *path, struct entry *e)
{
	char *v;

	e->origin = xasprintf("%s:%lu", path, d->stanza_line);
	split_field(d, "Types", &e->types);
	split_field(d, "URIs", &e->uris);
	split_field(d, "Suites", &e->suites);
	split_field(d, "Components", &e->components);
	split_field(d, "Architectures", &e->archs);
	v = field_value(d, "Signed-By");
	e->signed_by = v && *v ? v : NULL;
	if (!e->signed_by)
		free(v);
	e->trusted = is_yes(deb822_get(d, "Trusted"));
	v = field_value(d, "Enabled");
	e->enabled = !v || is_yes(v);
	free(v);
	if (!e->types.n || !e->uris.n || !e->suites.n) {
		log_error("%s: a deb822 source needs Types, URIs and Suites", e->origin);
		return -MKI_E_SOURCE;
	}
	return 0;
}

/* The reader's refusal, in the words this file's errors have always had. */
static void log_refusal(const struct deb822 *d, const char *path)
{
	switch (d->error) {
	case DEB822_E_LINE:
	case DEB822_E_NAME:
		log_error("%s:%lu: expected 'Field: value', got '%s'", path, d->error_line,
			  d->line_buf);
		break;
	case DEB822_E_CONTINUATION:
		log_error("%s:%lu: continuation line before any field", path, d->error_line);
		break;
	default:
		log_error("%s", d->error_msg);
	}
}

static int read_deb822(struct ctx *c, const char *path)
{
	struct buf text = { 0 };
	struct entry e;
	struct deb822 d;
	int ret = read_small_file(path, &text), r = 0;

	if (ret) {
		log_error("cannot read '%s': %s", path, readfile_why(ret, small_kind));
		goto out;
	}
	if ((ret = deb822_open_mem(&d, path, text.p, text.len)))
		goto out;
	deb822_set_silent(&d);
	while (!ret && (r = deb822_next(&d)) > 0) {
		memset(&e, 0, sizeof(e));
		ret = stanza_to_entry(&d, path, &e);
		if (!ret)
			ret = add_entry(c, &e);
		entry_release(&e);
	}
	if (!ret && r < 0) {
		log_refusal(&d, path);
		ret = r;
	}
	deb822_close(&d);
out:
	buf_release(&text);
	return ret ? -MKI_E_SOURCE : 0;
}

/* --- putting it together ------------------------------------------------------------------- */

/* VERSION_CODENAME from the os-release beside the apt root (/etc/apt -> /etc/os-release). */
static char *host_codename(const char *apt_root)
{
	const char *slash = strrchr(apt_root, '/');
	char *path = xasprintf("%.*s/os-release", slash ? (int)(slash - apt_root) : 0, apt_root);
	struct buf text = { 0 };
	char *found = NULL, *p;

	if (!read_small_file(path, &text) && text.p && (p = strstr(text.p, "VERSION_CODENAME="))) {
		p += strlen("VERSION_CODENAME=");
		p += *p == '"';
		found = xstrndup(p, strcspn(p, "\"\n"));
		if (!*found) {
			free(found);
			found = NULL;
		}
	}
	buf_release(&text);
	free(path);
	return found;
}

static int expand_host(struct ctx *c, const struct recipe_source *rs)
{
	static const char *const list_sfx[] = { ".list", NULL }, *const deb822_sfx[] = { ".sources",
										     NULL };
	struct strv lists = { 0 }, deb822 = { 0 };
	char *main_list = xasprintf("%s/sources.list", c->apt_root);
	char *dir = xasprintf("%s/sources.list.d", c->apt_root);
	size_t i, before = c->out->n;
	int ret;

	c->rs = rs;
	list_dir(dir, list_sfx, &lists);
	list_dir(dir, deb822_sfx, &deb822);
	ret = read_list(c, main_list);
	for (i = 0; i < lists.n && !ret; i++)
		ret = read_list(c, lists.v[i]);
	for (i = 0; i < deb822.n && !ret; i++)
		ret = read_deb822(c, deb822.v[i]);
	if (!ret && c->out->n == before && !c->twins) {
		log_error("%s:%d: the host's apt sources ('%s' and '%s') offer no repository for "
			  "suite '%s', components '%s' and the recipe's architectures; add a source "
			  "with a uri, or use --source", c->r->file, rs->line, main_list, dir,
			  rs->suite, rs->components.n ? rs->components.v[0] : "any");
		ret = -MKI_E_SOURCE;
	}
	c->rs = NULL;
	strv_release(&lists);
	strv_release(&deb822);
	free(main_list);
	free(dir);
	return ret;
}

static int add_recipe_source(struct ctx *c, const struct recipe_source *rs)
{
	struct strv archs = { 0 }, none = { 0 };
	char *origin = xasprintf("%s:%d", c->r->file, rs->line), *key = NULL;
	int ret = 0;

	if (rs->host) {
		ret = expand_host(c, rs);
		goto out;
	}
	pick_archs(c, &rs->archs, &none, &archs);
	if (!rs->trusted)
		ret = keyring_from_file(c, rs->keyring, origin, &key);
	if (!ret)
		ret = add_source(c, rs->uri, rs->suite, &rs->components, &archs, key, rs->trusted,
				 origin);
out:
	strv_release(&archs);
	free(origin);
	return ret;
}

/* --source 'URI SUITE COMPONENT... [signed-by=KEYRING] [arch=A,B] [trusted=yes]' */
static int add_override(struct ctx *c, const char *spec)
{
	struct entry e = { .enabled = 1 };
	struct strv w = { 0 }, archs = { 0 }, none = { 0 };
	char *key = NULL, *abs = NULL;
	size_t i;
	int ret = 0;

	e.origin = xasprintf("--source '%s'", spec);
	split_ws(spec, " \t[]", &w);
	for (i = 0; i < w.n && !ret; i++) {
		if (strchr(w.v[i], '=') && e.uris.n)
			ret = parse_options(w.v[i], &e);
		else
			strv_push(!e.uris.n ? &e.uris : !e.suites.n ? &e.suites : &e.components,
				  w.v[i]);
	}
	if (!ret && (!e.suites.n || !e.components.n)) {
		log_error("%s: expected 'URI SUITE COMPONENT... [signed-by=KEYRING]'", e.origin);
		ret = -MKI_E_SOURCE;
	}
	if (!ret && !e.trusted && !e.signed_by) {
		log_error("%s: name the repository's key with signed-by=KEYRING (or trusted=yes to "
			  "skip verification, not recommended)", e.origin);
		ret = -MKI_E_SOURCE;
	}
	if (!ret)
		pick_archs(c, &e.archs, &none, &archs);
	if (!ret && e.signed_by && !(abs = realpath(e.signed_by, NULL))) {
		log_error("%s: keyring '%s': %s", e.origin, e.signed_by, strerror(errno));
		ret = -MKI_E_SOURCE;
	}
	if (!ret && abs)
		ret = keyring_from_file(c, abs, e.origin, &key);
	if (!ret && !archs.n) {
		log_error("%s: none of its architectures is one of the recipe's", e.origin);
		ret = -MKI_E_SOURCE;
	}
	if (!ret && e.trusted)
		log_warn("%s: trusted=yes: the indexes of '%s' are NOT verified", e.origin, e.uris.v[0]);
	if (!ret) {
		ret = add_source(c, e.uris.v[0], e.suites.v[0], &e.components, &archs, key,
				 e.trusted, "--source");
		key = NULL;
	}
	free(key);
	free(abs);
	strv_release(&w);
	strv_release(&archs);
	entry_release(&e);
	return ret;
}

static void log_summary(const struct sources *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct source *src = &s->v[i];
		char *comps = strv_join(&src->components, " "), *archs = strv_join(&src->archs, " ");
		char *uri = url_redact(src->uri); /* a password in the URI stays out of the log */

		log_info("source: %s %s [%s] for %s, %s (%s)", uri, src->suite, comps, archs,
			 src->trusted ? "NOT verified (trusted)" : "signed", src->origin);
		free(uri);
		free(comps);
		free(archs);
	}
}

/* Begin with an empty list; the architectures are the caller's to add to c->archs. */
static void ctx_init(struct ctx *c, struct sources *out)
{
	memset(out, 0, sizeof(*out));
	c->apt_root = xstrdup(c->st->apt_root);
	c->codename = host_codename(c->apt_root);
}

/* Say what was loaded, or leave nothing behind; passes `ret` through. */
static int ctx_finish(struct ctx *c, int ret)
{
	if (!ret)
		log_summary(c->out);
	else
		sources_release(c->out);
	strv_release(&c->archs);
	free(c->apt_root);
	free(c->codename);
	free(c->default_keyring);
	return ret;
}

/* The Debian release a suite belongs to ("bookworm" for "bookworm-security"), or NULL for a
 * suite named otherwise (a vendor's "stable", "nodistro"): only codenames can be told apart. */
static const char *debian_release(const char *suite, char *buf, size_t size)
{
	static const char *const codenames[] = { "buster", "bullseye", "bookworm", "trixie",
						  "forky", "duke", "sid", NULL };
	size_t i, len = strcspn(suite, "-");

	for (i = 0; codenames[i]; i++)
		if (strlen(codenames[i]) == len && !strncmp(suite, codenames[i], len)) {
			snprintf(buf, size, "%s", codenames[i]);
			return buf;
		}
	return NULL;
}

/* One system, one Debian release: sources naming two (bookworm and trixie) are refused. */
static int check_one_release(const struct sources *s)
{
	char first[16], other[16];
	const struct source *at = NULL;
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (!debian_release(s->v[i].suite, at ? other : first, sizeof(first)))
			continue;
		if (!at) {
			at = &s->v[i];
		} else if (strcmp(first, other)) {
			log_error("%s: suite '%s' is Debian's %s, but %s names '%s' (%s): an image holds "
				  "one release's packages; build each release from its own recipe, or "
				  "give every source the same suite", s->v[i].origin, s->v[i].suite,
				  other, at->origin, at->suite, first);
			return -MKI_E_SOURCE;
		}
	}
	return 0;
}

int sources_load(struct sources *out, const struct recipe *r, const struct settings *st)
{
	struct ctx c = { .out = out, .r = r, .st = st };
	size_t i;
	int ret = 0;

	ctx_init(&c, out);
	recipe_all_archs(r, &c.archs);
	for (i = 0; i < st->sources.n && !ret; i++)
		ret = add_override(&c, st->sources.v[i]);
	for (i = 0; !st->sources.n && i < r->n_sources && !ret; i++)
		ret = add_recipe_source(&c, &r->sources[i]);
	if (!ret)
		ret = check_one_release(out);
	return ctx_finish(&c, ret);
}

int sources_load_twins(struct sources *out, const struct recipe *r, const struct settings *st,
		       const char *arch)
{
	struct recipe_source host = { .host = 1, .suite = r->suite };
	struct ctx c = { .out = out, .r = r, .st = st, .twins = 1 };

	ctx_init(&c, out);
	strv_push(&c.archs, arch);
	return ctx_finish(&c, expand_host(&c, &host));
}

void sources_release(struct sources *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].uri);
		free(s->v[i].suite);
		strv_release(&s->v[i].components);
		strv_release(&s->v[i].archs);
		free(s->v[i].keyring);
		free(s->v[i].origin);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}
