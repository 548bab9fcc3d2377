#include "deb822.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"

#define READ_CHUNK (64 * 1024)

static void reader_init(struct deb822 *d, FILE *f, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->f = f;
	d->file = xstrdup(name);
	d->rbuf = xmalloc(READ_CHUNK);
	d->err_level = LOG_ERROR;
	deb822_set_limits(d, NULL, -MKI_E_LIMIT_REPO);
}

void deb822_set_quiet(struct deb822 *d)
{
	d->err_level = LOG_DEBUG;
}

void deb822_set_silent(struct deb822 *d)
{
	d->silent = 1;
}

void deb822_set_verbatim(struct deb822 *d)
{
	d->verbatim = 1;
}

void deb822_set_limits(struct deb822 *d, const struct limits *l, int code)
{
	d->lim = l;
	d->max_line = (size_t)runlimits_get(l, LIMIT_LINE);
	d->max_stanza = (size_t)runlimits_get(l, LIMIT_STANZA);
	d->max_fields = (size_t)runlimits_get(l, LIMIT_FIELDS);
	d->limit_err = code;
}

int deb822_open(struct deb822 *d, const char *path)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	reader_init(d, f, path);
	return 0;
}

int deb822_open_mem(struct deb822 *d, const char *name, const void *data, size_t len)
{
	FILE *f;

	if (!len) /* fmemopen refuses an empty buffer; an empty file has no stanzas */
		f = fopen("/dev/null", "re");
	else
		f = fmemopen((void *)(uintptr_t)data, len, "r");
	if (!f)
		return -errno;
	reader_init(d, f, name);
	return 0;
}

void deb822_set_name(struct deb822 *d, const char *name)
{
	free(d->file);
	d->file = xstrdup(name);
}

int deb822_seek(struct deb822 *d, off_t offset, unsigned long line)
{
	if (fseeko(d->f, offset, SEEK_SET))
		return -errno;
	d->rpos = d->rlen = 0;
	d->offset = offset;
	d->line = line ? line - 1 : 0;
	return 0;
}

void deb822_close(struct deb822 *d)
{
	if (d->f)
		fclose(d->f);
	free(d->file);
	free(d->fields);
	free(d->text);
	free(d->line_buf);
	free(d->offs);
	free(d->lines);
	free(d->error_msg);
	free(d->rbuf);
	memset(d, 0, sizeof(*d));
}

/* Record a failure on `line` (0: none) and log it unless silent; returns `code`. */
__attribute__((format(printf, 5, 6))) static int report(struct deb822 *d, int code,
						       enum deb822_error kind,
						       unsigned long line, const char *fmt, ...)
{
	char *what;
	va_list ap;

	va_start(ap, fmt);
	what = xvasprintf(fmt, ap);
	va_end(ap);
	free(d->error_msg);
	if (line)
		d->error_msg = xasprintf("%s:%lu: %s", d->file, line, what);
	else
		d->error_msg = xasprintf("%s: %s", d->file, what);
	free(what);
	d->error = kind;
	d->error_line = line;
	if (!d->silent)
		log_msg(d->err_level, "%s", d->error_msg);
	return code;
}

static int fail(struct deb822 *d, enum deb822_error kind, const char *what)
{
	return report(d, -MKI_E_PARSE, kind, d->line, "%s", what);
}

static int refill(struct deb822 *d)
{
	d->rpos = 0;
	d->rlen = fread(d->rbuf, 1, READ_CHUNK, d->f);
	if (!d->rlen && ferror(d->f))
		return report(d, -EIO, DEB822_E_READ, 0, "read error: %s", strerror(errno));
	return 0;
}

/* Read one line (without '\n') into d->line_buf; *len is its length. 1 = line, 0 = EOF. */
static int read_line(struct deb822 *d, size_t *len)
{
	size_t n = 0, chunk;
	char *nl;
	int ret;

	for (;;) {
		if (d->rpos == d->rlen) {
			if ((ret = refill(d)))
				return ret;
			if (!d->rlen)
				break;
		}
		nl = memchr(d->rbuf + d->rpos, '\n', d->rlen - d->rpos);
		chunk = nl ? (size_t)(nl - (d->rbuf + d->rpos)) : d->rlen - d->rpos;
		if (n + chunk >= d->max_line) {
			d->line++;
			return report(d, d->limit_err, DEB822_E_LIMIT, d->line,
				      "line longer than %zu bytes: refused (%s)", d->max_line,
				      runlimits_hint(d->lim, LIMIT_LINE).s);
		}
		ALLOC_GROW(d->line_buf, n + chunk + 1, d->line_alloc);
		memcpy(d->line_buf + n, d->rbuf + d->rpos, chunk);
		n += chunk;
		d->rpos += chunk + (nl ? 1 : 0);
		d->offset += (off_t)(chunk + (nl ? 1 : 0));
		if (nl)
			break;
	}
	if (!n && !d->rlen)
		return 0;
	ALLOC_GROW(d->line_buf, n + 1, d->line_alloc);
	d->line_buf[n] = 0;
	d->line++;
	*len = n;
	return 1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Strip blanks on both sides of [*s, *s + *len). */
static void strip(const char **s, size_t *len)
{
	while (*len && is_blank(**s))
		(*s)++, (*len)--;
	while (*len && is_blank((*s)[*len - 1]))
		(*len)--;
}

static int text_add(struct deb822 *d, const char *s, size_t n)
{
	if (d->text_len + n + 1 > d->max_stanza)
		return report(d, d->limit_err, DEB822_E_LIMIT, d->stanza_line,
			      "stanza larger than %zu bytes: refused (%s)", d->max_stanza,
			      runlimits_hint(d->lim, LIMIT_STANZA).s);
	ALLOC_GROW(d->text, d->text_len + n + 1, d->text_alloc);
	memcpy(d->text + d->text_len, s, n);
	d->text_len += n;
	d->text[d->text_len] = 0;
	return 0;
}

static int valid_name(const char *s, size_t n)
{
	size_t i;

	if (!n || s[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return 0;
	return 1;
}

static int find_field(const struct deb822 *d, const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < d->n_fields; i++) {
		const char *f = d->text + d->offs[2 * i];

		/* name lengths from the layout: value offset - name offset - 1 */
		if (d->offs[2 * i + 1] - d->offs[2 * i] - 1 == n && (f[0] | 0x20) == (name[0] | 0x20) &&
		    !strncasecmp(f, name, n))
			return 1;
	}
	return 0;
}

static int add_field(struct deb822 *d, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len), *v;
	size_t vlen, nlen;
	int ret;

	if (!colon)
		return fail(d, DEB822_E_LINE, "malformed line: expected 'Field: value'");
	nlen = (size_t)(colon - line);
	if (!valid_name(line, nlen))
		return fail(d, DEB822_E_NAME, "malformed field name");
	if (find_field(d, line, nlen))
		return fail(d, DEB822_E_DUPLICATE, "duplicate field in one stanza");
	if (d->n_fields >= d->max_fields)
		return report(d, d->limit_err, DEB822_E_LIMIT, d->line,
			      "more than %zu fields in one stanza: refused (%s)", d->max_fields,
			      runlimits_hint(d->lim, LIMIT_FIELDS).s);
	v = colon + 1;
	vlen = len - nlen - 1;
	if (d->verbatim) /* dpkg: the blanks after the colon only */
		while (vlen && (*v == ' ' || *v == '\t'))
			v++, vlen--;
	else
		strip(&v, &vlen);
	/* Layout: name NUL value NUL name NUL value...; a value's continuations append to it. */
	if (d->text_len && (ret = text_add(d, "", 1)))
		return ret;
	ALLOC_GROW(d->offs, 2 * (d->n_fields + 1), d->alloc_fields);
	ALLOC_GROW(d->lines, d->n_fields + 1, d->alloc_lines);
	d->lines[d->n_fields] = d->line;
	d->offs[2 * d->n_fields] = d->text_len;
	if ((ret = text_add(d, line, nlen)) || (ret = text_add(d, "", 1)))
		return ret;
	d->offs[2 * d->n_fields + 1] = d->text_len;
	d->n_fields++;
	return text_add(d, v, vlen);
}

static void finish_stanza(struct deb822 *d)
{
	size_t i;

	d->fields = xrealloc(d->fields, (d->n_fields + 1) * sizeof(*d->fields));
	for (i = 0; i < d->n_fields; i++) {
		struct deb822_field *f = &d->fields[i];
		size_t end = i + 1 < d->n_fields ? d->offs[2 * (i + 1)] - 1 : d->text_len;

		f->name = d->text + d->offs[2 * i];
		f->value = d->text + d->offs[2 * i + 1];
		f->value_len = end - d->offs[2 * i + 1];
		f->line = d->lines[i];
	}
}

static int add_line(struct deb822 *d, const char *line, size_t len)
{
	const char *s = line;
	size_t n = len;
	int ret;

	if (memchr(line, 0, len))
		return fail(d, DEB822_E_NUL, "NUL byte in text");
	if (line[0] == '#')
		return 0; /* comment */
	if (!is_blank(line[0]) || (d->verbatim && line[0] == '\r'))
		return add_field(d, line, len);
	if (!d->n_fields)
		return fail(d, DEB822_E_CONTINUATION,
			    "continuation line without a field before it");
	if (!d->verbatim)
		strip(&s, &n);
	if ((ret = text_add(d, "\n", 1)))
		return ret;
	return text_add(d, s, n);
}

static int blank_line(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_blank(s[i]))
			return 0;
	return 1;
}

int deb822_next(struct deb822 *d)
{
	off_t start;
	size_t len = 0;
	int ret;

	d->n_fields = 0;
	d->text_len = 0;
	d->error = DEB822_OK;
	for (;;) {
		start = d->offset;
		ret = read_line(d, &len);
		if (ret <= 0)
			break;
		if (d->verbatim ? !len : blank_line(d->line_buf, len)) {
			if (d->n_fields)
				break;
			continue;
		}
		if (!d->n_fields && d->line_buf[0] != '#') {
			d->stanza_line = d->line;
			d->stanza_offset = start;
		}
		if ((ret = add_line(d, d->line_buf, len)))
			return ret;
	}
	if (ret < 0)
		return ret;
	if (!d->n_fields)
		return 0;
	finish_stanza(d);
	return 1;
}

const char *deb822_get(const struct deb822 *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n_fields; i++)
		if (!strcasecmp(d->fields[i].name, name))
			return d->fields[i].value;
	return NULL;
}
