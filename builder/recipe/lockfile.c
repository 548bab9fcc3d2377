#include "lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/readfile.h"

#define LOCK_MAX_LINE 8192

static void pkgs_release(struct lock_pkg *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].arch);
		free(v[i].version);
		free(v[i].source);
	}
	free(v);
}

void lockfile_release(struct lockfile *lk)
{
	size_t i;

	for (i = 0; i < lk->n_sources; i++) {
		free(lk->sources[i].uri);
		free(lk->sources[i].suite);
		free(lk->sources[i].date);
		free(lk->sources[i].index);
		strv_release(&lk->sources[i].components);
		strv_release(&lk->sources[i].keys);
	}
	pkgs_release(lk->pkgs, lk->n_pkgs);
	pkgs_release(lk->twins, lk->n_twins);
	free(lk->sources);
	strv_release(&lk->archs);
	strv_release(&lk->fields);
	free(lk->twins_info.from);
	strv_release(&lk->twins_info.hosts);
	memset(lk, 0, sizeof(*lk));
}

static int pkg_cmp(const void *a, const void *b)
{
	const struct lock_pkg *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (!c)
		c = strcmp(x->arch, y->arch);
	return c ? c : strcmp(x->version, y->version);
}

int lockfile_field_ok(const char *s, int spaces)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++)
		if (*p > 0x7e || *p < 0x20 || (*p == ' ' && !spaces))
			return 0;
	return 1;
}

/* The first field of `lk` lockfile_field_ok() refuses, logged; 0 when there is none. */
static int check_fields(const struct lockfile *lk, const char *file)
{
	const char *what = NULL, *val = NULL, *owner = "";
	size_t i, k;

#define CHECK(v, sp, w, o)                                                                     \
	if (!what && (v) && !lockfile_field_ok((v), (sp))) {                                   \
		what = (w);                                                                    \
		val = (v);                                                                     \
		owner = (o);                                                                   \
	}
	for (i = 0; i < lk->archs.n; i++)
		CHECK(lk->archs.v[i], 0, "architecture", "");
	for (i = 0; i < lk->n_sources; i++) {
		const struct lock_source *s = &lk->sources[i];

		CHECK(s->uri, 0, "URI", "");
		CHECK(s->suite, 0, "suite", s->uri);
		CHECK(s->date, 1, "date", s->uri);
		CHECK(s->index, 0, "index", s->uri);
		for (k = 0; k < s->components.n; k++)
			CHECK(s->components.v[k], 0, "component", s->uri);
		for (k = 0; k < s->keys.n; k++)
			CHECK(s->keys.v[k], 0, "key", s->uri);
	}
	for (i = 0; i < lk->n_pkgs; i++) {
		const struct lock_pkg *p = &lk->pkgs[i];

		CHECK(p->name, 0, "name", p->name);
		CHECK(p->arch, 0, "architecture", p->name);
		CHECK(p->version, 0, "version", p->name);
		CHECK(p->source, 0, "source", p->name);
	}
	for (i = 0; i < lk->n_twins; i++) {
		const struct lock_pkg *p = &lk->twins[i];

		CHECK(p->name, 0, "name", p->name);
		CHECK(p->arch, 0, "architecture", p->name);
		CHECK(p->version, 0, "version", p->name);
		CHECK(p->source, 0, "source", p->name);
	}
	for (i = 0; i < lk->twins_info.hosts.n; i++)
		CHECK(lk->twins_info.hosts.v[i], 0, "host", "twins");
	for (i = 0; i < lk->fields.n; i++)
		CHECK(lk->fields.v[i], 1, "field", "recipe");
#undef CHECK
	if (!what)
		return 0;
	return log_errno(-MKI_E_PARSE,
			 "cannot write the lock file '%s': the %s of '%s' is '%s', which is not "
			 "printable ASCII without spaces: the index that names it is malformed",
			 file, what, owner, val);
}

static void add_list(struct buf *b, const char *key, const struct strv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		buf_addf(b, "%s%s", i ? "," : key, v->v[i]);
}

/* Sorted "KIND: NAME:ARCH=VERSION ..." lines; KIND NULL: "local" or "package" by each entry. */
static void format_pkgs(struct buf *b, struct lock_pkg *v, size_t n, const char *kind)
{
	size_t i;

	if (n) /* qsort(NULL, 0, ...) is undefined */
		qsort(v, n, sizeof(*v), pkg_cmp);
	for (i = 0; i < n; i++) {
		const struct lock_pkg *p = &v[i];

		buf_addf(b, "%s: %s:%s=%s sha256=%s size=%" PRIu64,
			 kind ? kind : p->local ? "local" : "package", p->name, p->arch, p->version,
			 p->sha256, p->size);
		if (p->source)
			buf_addf(b, " source=%s", p->source);
		buf_adds(b, "\n");
	}
}

static void format_lock(struct lockfile *lk, struct buf *b)
{
	size_t i;

	buf_adds(b, "# mkimage lock file: the exact package set of a recipe (mkimage --lock).\n"
		    "# Build it again with 'mkimage --locked'. Generated; do not edit.\n");
	buf_addf(b, "format: %d\nrecipe: %s\narchitectures:", LOCKFILE_FORMAT, lk->recipe);
	for (i = 0; i < lk->archs.n; i++)
		buf_addf(b, " %s", lk->archs.v[i]);
	buf_adds(b, "\n");
	for (i = 0; i < lk->n_sources; i++) {
		const struct lock_source *s = &lk->sources[i];

		buf_addf(b, "source: %s %s sha256=%s", s->uri, s->suite, s->sha256[0] ? s->sha256 : "-");
		add_list(b, " components=", &s->components);
		add_list(b, " keys=", &s->keys);
		if (s->index)
			buf_addf(b, " index=%s", s->index);
		buf_addf(b, " date=%s\n", s->date ? s->date : "-");
	}
	format_pkgs(b, lk->pkgs, lk->n_pkgs, NULL);
	for (i = 0; i < lk->fields.n; i++)
		buf_addf(b, "field: %s\n", lk->fields.v[i]);
	if (lk->twins_info.from) {
		buf_addf(b, "twins: %s", lk->twins_info.from);
		buf_adds(b, " hosts=");
		add_list(b, "", &lk->twins_info.hosts);
		buf_addf(b, " packages=%" PRIu64 " bytes=%" PRIu64 "\n", lk->twins_info.packages,
			 lk->twins_info.bytes);
	}
	format_pkgs(b, lk->twins, lk->n_twins, "twin");
}

int lockfile_write(struct lockfile *lk, const char *file)
{
	struct buf b = { 0 };
	char *tmp = xasprintf("%s.tmp.XXXXXX", file);
	int fd, ret = check_fields(lk, file);

	if (ret)
		goto out;
	format_lock(lk, &b);
	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = -errno;
		log_error("cannot create the lock file '%s': %s", file, strerror(errno));
		goto out;
	}
	ret = fsutil_write_all(fd, b.p, b.len);
	if (!ret && fchmod(fd, 0644))
		ret = -errno;
	ret = fsutil_close_rename(fd, ret, tmp, file);
	if (ret)
		log_error("cannot write the lock file '%s': %s", file, strerror(-ret));
out:
	free(tmp);
	buf_release(&b);
	return ret;
}

/* "NAME:ARCH=VERSION" -> parts. */
static int parse_nav(char *s, struct lock_pkg *p)
{
	char *colon = strchr(s, ':'), *eq = strchr(s, '=');

	if (!colon || !eq || eq < colon || colon == s || eq == colon + 1 || !eq[1])
		return -1;
	p->name = xstrndup(s, (size_t)(colon - s));
	p->arch = xstrndup(colon + 1, (size_t)(eq - colon - 1));
	p->version = xstrdup(eq + 1);
	return 0;
}

static int parse_pkg(struct lock_pkg **pv, size_t *n, size_t *alloc, char *v, int local)
{
	char *nav = strtok_r(v, " ", &v), *sha = strtok_r(NULL, " ", &v);
	char *size = strtok_r(NULL, " ", &v), *src = strtok_r(NULL, " ", &v), *end;
	struct lock_pkg p = { .local = local };

	/* source= is optional (locks written before it existed have none); nothing may follow it */
	if (src && (strncmp(src, "source=", 7) || !src[7] || strtok_r(NULL, " ", &v)))
		goto bad;
	if (!nav || !sha || !size || strncmp(sha, "sha256=", 7) || !hash_sha256_hex_valid(sha + 7) ||
	    strncmp(size, "size=", 5) || parse_nav(nav, &p))
		goto bad;
	errno = 0;
	p.size = strtoull(size + 5, &end, 10);
	if (errno || *end || end == size + 5)
		goto bad;
	memcpy(p.sha256, sha + 7, 65);
	p.source = src ? xstrdup(src + 7) : NULL;
	ALLOC_GROW(*pv, *n + 1, *alloc);
	(*pv)[(*n)++] = p;
	return 0;
bad:
	free(p.name);
	free(p.arch);
	free(p.version);
	return -1;
}

/* "a,b,c" -> strv; empty items are malformed. */
static int split_list(const char *s, struct strv *out)
{
	const char *p = s;

	do {
		size_t n = strcspn(p, ",");

		if (!n)
			return -1;
		strv_push_take(out, xstrndup(p, n));
		p += n;
	} while (*p++);
	return 0;
}

static int parse_source(struct lockfile *lk, char *v)
{
	char *uri = strtok_r(v, " ", &v), *suite = strtok_r(NULL, " ", &v);
	char *sha = strtok_r(NULL, " ", &v), *date = v;
	struct lock_source s = { 0 };

	if (!uri || !suite || !sha || !date || strncmp(sha, "sha256=", 7))
		return -1;
	/* optional components= and keys=, in this order, before date= (which holds spaces) */
	if (!strncmp(date, "components=", 11)) {
		char *list = strtok_r(NULL, " ", &v);

		if (split_list(list + 11, &s.components))
			goto bad;
		date = v;
	}
	if (date && !strncmp(date, "keys=", 5)) {
		char *list = strtok_r(NULL, " ", &v);

		if (split_list(list + 5, &s.keys))
			goto bad;
		date = v;
	}
	if (date && !strncmp(date, "index=", 6)) {
		char *use = strtok_r(NULL, " ", &v);

		if (strcmp(use + 6, "stale") && strcmp(use + 6, "omitted"))
			goto bad;
		s.index = xstrdup(use + 6);
		date = v;
	}
	if (!date || strncmp(date, "date=", 5))
		goto bad;
	if (strcmp(sha + 7, "-") && !hash_sha256_hex_valid(sha + 7))
		goto bad;
	if (strcmp(sha + 7, "-"))
		memcpy(s.sha256, sha + 7, 65);
	s.uri = xstrdup(uri);
	s.suite = xstrdup(suite);
	s.date = xstrdup(date + 5);
	ALLOC_GROW(lk->sources, lk->n_sources + 1, lk->alloc_sources);
	lk->sources[lk->n_sources++] = s;
	return 0;
bad:
	strv_release(&s.components);
	strv_release(&s.keys);
	free(s.index);
	return -1;
}

/* "KEY SHA256": one word, one digest. */
static int parse_field(struct lockfile *lk, char *v)
{
	char *sp = strchr(v, ' ');

	if (!sp || sp == v || strchr(sp + 1, ' ') || !hash_sha256_hex_valid(sp + 1))
		return -1;
	strv_push(&lk->fields, v);
	return 0;
}

/* "FROM hosts=H,H packages=N bytes=B" */
static int parse_twins(struct lockfile *lk, char *v)
{
	struct lock_twins *t = &lk->twins_info;
	char *from = strtok_r(v, " ", &v), *hosts = strtok_r(NULL, " ", &v);
	char *pk = strtok_r(NULL, " ", &v), *by = strtok_r(NULL, " ", &v), *e1, *e2;

	if (t->from || !from || !hosts || !pk || !by || strtok_r(NULL, " ", &v) ||
	    (strcmp(from, "recipe") && strcmp(from, "host")) || strncmp(hosts, "hosts=", 6) ||
	    strncmp(pk, "packages=", 9) || strncmp(by, "bytes=", 6))
		return -1;
	errno = 0;
	t->packages = strtoull(pk + 9, &e1, 10);
	t->bytes = strtoull(by + 6, &e2, 10);
	if (errno || *e1 || *e2 || e1 == pk + 9 || e2 == by + 6 ||
	    (hosts[6] && split_list(hosts + 6, &t->hosts))) {
		strv_release(&t->hosts);
		return -1;
	}
	t->from = xstrdup(from);
	return 0;
}

static int parse_line(struct lockfile *lk, char *line, int *format)
{
	char *colon = strstr(line, ": "), *v, *a;

	if (!colon)
		return -1;
	*colon = 0;
	v = colon + 2;
	if (!strcmp(line, "format"))
		return (*format = atoi(v)) == LOCKFILE_FORMAT ? 0 : -2;
	if (!strcmp(line, "recipe")) {
		if (!hash_sha256_hex_valid(v))
			return -1;
		memcpy(lk->recipe, v, 65);
		return 0;
	}
	if (!strcmp(line, "architectures")) {
		while ((a = strtok_r(v, " ", &v)))
			strv_push(&lk->archs, a);
		return lk->archs.n ? 0 : -1;
	}
	if (!strcmp(line, "source"))
		return parse_source(lk, v);
	if (!strcmp(line, "package") || !strcmp(line, "local"))
		return parse_pkg(&lk->pkgs, &lk->n_pkgs, &lk->alloc_pkgs, v,
				 !strcmp(line, "local"));
	if (!strcmp(line, "twin"))
		return parse_pkg(&lk->twins, &lk->n_twins, &lk->alloc_twins, v, 0);
	if (!strcmp(line, "field"))
		return parse_field(lk, v);
	if (!strcmp(line, "twins"))
		return parse_twins(lk, v);
	return -1;
}

int lockfile_read(struct lockfile *lk, const char *file)
{
	const char *kind = NULL;
	int fd = readfile_open(file, &kind);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "re");
	char line[LOCK_MAX_LINE];
	int ret = 0, format = 0, r;
	unsigned long n = 0;
	size_t len;

	memset(lk, 0, sizeof(*lk));
	if (!f) {
		ret = fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
		log_error("cannot read the lock file '%s': %s (write it with 'mkimage --lock')", file,
			  readfile_why(ret, kind));
		return ret;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		if (err_interrupted()) {
			ret = -MKI_E_INTERRUPTED;
			break;
		}
		n++;
		len = strlen(line);
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(f)) {
			log_error("%s:%lu: line too long", file, n);
			ret = -MKI_E_LOCK;
			break;
		}
		if (!len || line[0] == '#')
			continue;
		r = lockfile_field_ok(line, 1) ? parse_line(lk, line, &format) : -3;
		if (r == -2)
			log_error("%s:%lu: unsupported lock format (this mkimage reads format %d)",
				  file, n, LOCKFILE_FORMAT);
		else if (r == -3)
			log_error("%s:%lu: malformed lock line: it holds a control character or a "
				  "byte outside ASCII (write the lock again with 'mkimage --lock')",
				  file, n);
		else if (r)
			log_error("%s:%lu: malformed lock line", file, n);
		if (r)
			ret = -MKI_E_LOCK;
	}
	fclose(f);
	if (lk->n_pkgs)
		qsort(lk->pkgs, lk->n_pkgs, sizeof(*lk->pkgs), pkg_cmp);
	if (lk->n_twins)
		qsort(lk->twins, lk->n_twins, sizeof(*lk->twins), pkg_cmp);
	if (!ret && (!format || !lk->recipe[0] || !lk->archs.n)) {
		log_error("'%s' is not a complete lock file (format, recipe or architectures missing)",
			  file);
		ret = -MKI_E_LOCK;
	}
	if (ret)
		lockfile_release(lk);
	return ret;
}
