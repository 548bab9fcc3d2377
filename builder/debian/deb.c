#include "deb.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deb822.h"
#include "lib/err.h"
#include "lib/manifest.h"
#include "lib/str.h"
#include "lib/xz.h"

struct deb {
	const char *path;
	int fd;
	struct archive *ar;    /* the outer ar container */
	struct archive *inner; /* data.tar while it is being read */
	const char *member;    /* ar member being read, for messages */
	char member_name[64];
	struct deb_member *members;
	size_t n_members, alloc_members;
	int data_done;
	const struct limits *lim;
	uint64_t entries, data_bytes; /* of data.tar so far, as the headers declare them */
	struct xz *xz;         /* .xz/.lzma member: decoded here, under 'xz-memory' */
	uint8_t *xz_out;
	const uint8_t *xz_in;
	size_t xz_in_len;
	int xz_in_end, limit_err;
	char err[768];
};

static int fail(struct deb *d, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct deb *d, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
	return code;
}

/* libarchive's text for the outer or inner reader, made specific about truncation. */
static int fail_archive(struct deb *d, struct archive *a, const char *what)
{
	const char *s = archive_error_string(a);

	if (d->limit_err)
		return d->limit_err; /* described when it was hit, below libarchive */
	return fail(d, -MKI_E_PACKAGE, "%s in member '%s': %s (truncated or corrupt package?)",
		    what, d->member ? d->member : "?", s ? s : "unexpected end of file");
}

/* The next raw block of the current ar member: its size, 0 at its end, -1 (error set on `a`). */
static ssize_t member_block(struct deb *d, struct archive *a, const void **buf)
{
	size_t size = 0;
	la_int64_t off;
	int r = archive_read_data_block(d->ar, buf, &size, &off);

	if (r == ARCHIVE_EOF)
		return 0;
	if (r != ARCHIVE_OK) {
		archive_set_error(a, EIO, "%s",
				  archive_error_string(d->ar) ? archive_error_string(d->ar)
							      : "read error");
		return -1;
	}
	return (ssize_t)size;
}

#define XZ_OUT (128u << 10)

/* The member's next decoded bytes, for an .xz or .lzma member. */
static ssize_t member_read_xz(struct deb *d, struct archive *a, const void **buf)
{
	size_t out;
	ssize_t n;
	int r;

	for (;;) {
		if (!d->xz_in_len && !d->xz_in_end) {
			n = member_block(d, a, (const void **)&d->xz_in);
			if (n < 0)
				return -1;
			d->xz_in_len = (size_t)n;
			d->xz_in_end = !n;
		}
		out = XZ_OUT;
		r = xz_decode(d->xz, &d->xz_in, &d->xz_in_len, d->xz_out, &out, d->xz_in_end);
		if (r < 0)
			break;
		if (out || r == 1) {
			*buf = d->xz_out;
			return (ssize_t)out;
		}
	}
	if (r == -MKI_E_LIMIT)
		d->limit_err = fail(d, -MKI_E_LIMIT_PKG, "member '%s' needs %llu MiB of memory to "
				    "decompress (its xz dictionary), more than %s: refused before "
				    "decompressing (%s)", d->member,
				    (unsigned long long)(xz_memneed(d->xz) >> 20),
				    runlimits_format(LIMIT_XZ_MEMORY,
						  runlimits_get(d->lim, LIMIT_XZ_MEMORY)).s,
				    runlimits_hint(d->lim, LIMIT_XZ_MEMORY).s);
	archive_set_error(a, EIO, "%s", r == -MKI_E_LIMIT ? "xz memory limit" : xz_error(d->xz));
	return -1;
}

/* Feed an ar member's bytes to a nested reader (without copying unless it is decoded here). */
static ssize_t member_read(struct archive *a, void *opaque, const void **buf)
{
	struct deb *d = opaque;

	return d->xz ? member_read_xz(d, a, buf) : member_block(d, a, buf);
}

static void xz_drop(struct deb *d)
{
	xz_free(d->xz);
	free(d->xz_out);
	d->xz = NULL;
	d->xz_out = NULL;
	d->xz_in_len = 0;
	d->xz_in_end = 0;
}

/* Compression by member name suffix: only what dpkg itself accepts for that member. */
static int add_filter(struct archive *a, const char *suffix, int data)
{
	if (!*suffix)
		return archive_read_support_filter_none(a);
	if (!strcmp(suffix, ".gz"))
		return archive_read_support_filter_gzip(a);
	if (!strcmp(suffix, ".xz"))
		return archive_read_support_filter_xz(a);
	if (!strcmp(suffix, ".zst"))
		return archive_read_support_filter_zstd(a);
	if (data && !strcmp(suffix, ".bz2"))
		return archive_read_support_filter_bzip2(a);
	if (data && !strcmp(suffix, ".lzma"))
		return archive_read_support_filter_lzma(a);
	return 1;
}

/* .xz and .lzma are decoded by member_read_xz(), not by libarchive. */
static int add_decoder(struct deb *d, struct archive *a, const char *suffix, int data)
{
	int alone = data && !strcmp(suffix, ".lzma");

	xz_drop(d);
	if (strcmp(suffix, ".xz") && !alone)
		return add_filter(a, suffix, data);
	d->xz = xz_new(runlimits_get(d->lim, LIMIT_XZ_MEMORY), alone);
	d->xz_out = xmalloc(XZ_OUT);
	return d->xz ? archive_read_support_filter_none(a) : ARCHIVE_FATAL;
}

static int open_inner(struct deb *d, const char *prefix, struct archive **out)
{
	struct archive *a = archive_read_new();
	int r;

	*out = NULL;
	r = add_decoder(d, a, d->member + strlen(prefix), !strcmp(prefix, "data.tar"));
	if (r == 1) {
		archive_read_free(a);
		return fail(d, -MKI_E_PACKAGE, "member '%s' uses an unknown compression (dpkg "
			    "accepts %s)", d->member, !strcmp(prefix, "data.tar")
			    ? "none, .gz, .xz, .zst, .bz2, .lzma" : "none, .gz, .xz, .zst");
	}
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
		goto bad;
	if (archive_read_open(a, d, NULL, member_read, NULL) != ARCHIVE_OK)
		goto bad;
	*out = a;
	return 0;
bad:
	r = fail_archive(d, a, "cannot open");
	archive_read_free(a);
	return r;
}

/* Next ar member, skipping "_"-prefixed signature members as dpkg does. 0 at end. */
static int next_member(struct deb *d)
{
	struct archive_entry *ae;
	int r;

	for (;;) {
		r = archive_read_next_header(d->ar, &ae);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r != ARCHIVE_OK)
			return fail_archive(d, d->ar, "bad ar header after");
		snprintf(d->member_name, sizeof(d->member_name), "%s", archive_entry_pathname(ae));
		d->member = d->member_name;
		if (d->member_name[0] != '_')
			return 1;
	}
}

static int check_debian_binary(struct deb *d)
{
	char buf[64] = { 0 };
	ssize_t n;
	int r = next_member(d);

	if (r <= 0)
		return r < 0 ? r : fail(d, -MKI_E_PACKAGE, "empty ar archive, not a .deb");
	if (strcmp(d->member, "debian-binary"))
		return fail(d, -MKI_E_PACKAGE,
			    "first member is '%s', not 'debian-binary': not a .deb", d->member);
	n = archive_read_data(d->ar, buf, sizeof(buf) - 1);
	if (n < 0)
		return fail_archive(d, d->ar, "cannot read");
	if (n < 4 || strncmp(buf, "2.", 2) || !isdigit((unsigned char)buf[2]) || !strchr(buf, '\n'))
		return fail(d, -MKI_E_PACKAGE,
			    "unsupported debian-binary format '%.*s' (expected 2.x)",
			    (int)strcspn(buf, "\n"), buf);
	return 0;
}

static int read_member_data(struct deb *d, struct archive *a, struct archive_entry *ae,
			    size_t *total)
{
	struct deb_member *m;
	const char *name = archive_entry_pathname(ae);
	int64_t size = archive_entry_size(ae);
	ssize_t n;

	if (archive_entry_filetype(ae) != AE_IFREG)
		return 0;
	if (size < 0 || (uint64_t)size + *total > runlimits_get(d->lim, LIMIT_DEB_CONTROL))
		return fail(d, -MKI_E_LIMIT_PKG, "control.tar holds more than %s: refused (%s)",
			    runlimits_format(LIMIT_DEB_CONTROL,
					  runlimits_get(d->lim, LIMIT_DEB_CONTROL)).s,
			    runlimits_hint(d->lim, LIMIT_DEB_CONTROL).s);
	*total += (size_t)size;
	while (!strncmp(name, "./", 2))
		name += 2;
	if (!*name || strchr(name, '/'))
		return 0;
	ALLOC_GROW(d->members, d->n_members + 1, d->alloc_members);
	m = &d->members[d->n_members++];
	memset(m, 0, sizeof(*m));
	m->name = xstrdup(name);
	m->mode = archive_entry_perm(ae) & 07777;
	m->data = xmalloc((size_t)size + 1);
	n = archive_read_data(a, m->data, (size_t)size);
	if (n != size)
		return fail_archive(d, a, "cannot read control file");
	m->data[size] = 0;
	m->len = (size_t)size;
	return 0;
}

static int read_control(struct deb *d)
{
	struct archive *a = NULL;
	struct archive_entry *ae;
	size_t total = 0;
	int r = next_member(d);

	if (r <= 0)
		return r < 0 ? r : fail(d, -MKI_E_PACKAGE, "no control.tar member (truncated?)");
	if (strncmp(d->member, "control.tar", 11))
		return fail(d, -MKI_E_PACKAGE, "expected 'control.tar' member, found '%s'",
			    d->member);
	r = open_inner(d, "control.tar", &a);
	while (!r) {
		int h = archive_read_next_header(a, &ae);

		if (h == ARCHIVE_EOF)
			break;
		if (h != ARCHIVE_OK && h != ARCHIVE_WARN)
			r = fail_archive(d, a, "bad tar header");
		else
			r = read_member_data(d, a, ae, &total);
	}
	if (a)
		archive_read_free(a);
	if (!r && !deb_member(d, "control"))
		r = fail(d, -MKI_E_PACKAGE, "control.tar has no 'control' file");
	return r;
}

int deb_open(struct deb **out, const char *path, const struct limits *lim)
{
	struct deb *d = xcalloc(1, sizeof(*d));
	int r;

	*out = d;
	d->path = path;
	d->lim = lim;
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		return fail(d, -errno, "cannot open: %s", strerror(errno));
	d->ar = archive_read_new();
	archive_read_support_format_ar(d->ar);
	if (archive_read_open_fd(d->ar, d->fd, 256 << 10) != ARCHIVE_OK)
		return fail(d, -MKI_E_PACKAGE, "cannot open as a .deb (ar archive): %s",
			    archive_error_string(d->ar));
	r = check_debian_binary(d);
	if (!r)
		r = read_control(d);
	return r;
}

const struct deb_member *deb_members(const struct deb *d, size_t *n)
{
	*n = d->n_members;
	return d->members;
}

const struct deb_member *deb_member(const struct deb *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n_members; i++)
		if (!strcmp(d->members[i].name, name))
			return &d->members[i];
	return NULL;
}

static int open_data(struct deb *d)
{
	int r = next_member(d);

	if (r <= 0)
		return r < 0 ? r : fail(d, -MKI_E_PACKAGE, "no data.tar member (truncated?)");
	if (strncmp(d->member, "data.tar", 8))
		return fail(d, -MKI_E_PACKAGE, "expected 'data.tar' member, found '%s'", d->member);
	return open_inner(d, "data.tar", &d->inner);
}

static char entry_type(mode_t t)
{
	switch (t) {
	case AE_IFREG: return MF_REG;
	case AE_IFDIR: return MF_DIR;
	case AE_IFLNK: return MF_SYMLINK;
	case AE_IFCHR: return MF_CHR;
	case AE_IFBLK: return MF_BLK;
	case AE_IFIFO: return MF_FIFO;
	case AE_IFSOCK: return MF_SOCK;
	default: return 0;
	}
}

static void copy_xattrs(struct deb_entry *e, struct archive_entry *ae)
{
	const char *name;
	const void *value;
	size_t len, n = (size_t)archive_entry_xattr_reset(ae);

	if (!n)
		return;
	e->xattrs = xcalloc(n, sizeof(*e->xattrs));
	while (e->n_xattrs < n && archive_entry_xattr_next(ae, &name, &value, &len) == ARCHIVE_OK) {
		struct manifest_xattr *x = &e->xattrs[e->n_xattrs++];

		x->name = xstrdup(name);
		x->value = xmalloc(len);
		memcpy(x->value, value, len);
		x->len = len;
	}
}

/* Names as bytes; a pax UTF-8 name the C locale cannot represent is taken as UTF-8 bytes. */
static const char *name_of(const char *(*raw)(struct archive_entry *),
			   const char *(*utf8)(struct archive_entry *), struct archive_entry *ae)
{
	const char *s = raw(ae);

	return s ? s : utf8(ae);
}

static int fill_entry(struct deb *d, struct deb_entry *e, struct archive_entry *ae)
{
	const char *path = name_of(archive_entry_pathname, archive_entry_pathname_utf8, ae);
	const char *hard = name_of(archive_entry_hardlink, archive_entry_hardlink_utf8, ae);
	const char *sym = name_of(archive_entry_symlink, archive_entry_symlink_utf8, ae);

	if (!path || !*path || strlen(path) >= DEB_PATH_MAX)
		return fail(d, -MKI_E_PACKAGE, "data.tar entry with an empty or overlong name");
	e->path = xstrdup(path);
	e->type = hard ? MF_HARDLINK : entry_type(archive_entry_filetype(ae));
	if (!e->type)
		return fail(d, -MKI_E_PACKAGE, "'%s': unsupported tar entry type", path);
	if (hard || sym) {
		if (strlen(hard ? hard : sym) >= DEB_PATH_MAX)
			return fail(d, -MKI_E_PACKAGE, "'%s': link target too long", path);
		e->target = xstrdup(hard ? hard : sym);
	}
	e->mode = archive_entry_perm(ae) & 07777;
	e->uid = (uint32_t)archive_entry_uid(ae);
	e->gid = (uint32_t)archive_entry_gid(ae);
	e->mtime = archive_entry_mtime(ae);
	e->major = (uint32_t)archive_entry_rdevmajor(ae);
	e->minor = (uint32_t)archive_entry_rdevminor(ae);
	e->size = e->type == MF_REG ? (uint64_t)archive_entry_size(ae) : 0;
	e->sparse = e->type == MF_REG && archive_entry_sparse_count(ae) > 0;
	copy_xattrs(e, ae);
	return 0;
}

static void close_archives(struct deb *d)
{
	xz_drop(d);
	if (d->inner)
		archive_read_free(d->inner);
	if (d->ar)
		archive_read_free(d->ar);
	if (d->fd >= 0)
		close(d->fd);
	d->inner = d->ar = NULL;
	d->fd = -1;
}

/* Both limits are counted from the headers, so nothing past them is ever decompressed. */
static int check_limits(struct deb *d, const struct deb_entry *e)
{
	uint64_t max_entries = runlimits_get(d->lim, LIMIT_DEB_ENTRIES);
	uint64_t max_data = runlimits_get(d->lim, LIMIT_DEB_DATA);

	if (++d->entries > max_entries)
		return fail(d, -MKI_E_LIMIT_PKG, "data.tar has more than %llu entries: refused at "
			    "'%s' (%s)", (unsigned long long)max_entries, e->path,
			    runlimits_hint(d->lim, LIMIT_DEB_ENTRIES).s);
	if (e->size > max_data || d->data_bytes + e->size > max_data)
		return fail(d, -MKI_E_LIMIT_PKG, "data.tar unpacks to more than %s: refused at "
			    "'%s', which declares %llu bytes (%s)",
			    runlimits_format(LIMIT_DEB_DATA, max_data).s, e->path,
			    (unsigned long long)e->size, runlimits_hint(d->lim, LIMIT_DEB_DATA).s);
	d->data_bytes += e->size;
	return 0;
}

int deb_next(struct deb *d, struct deb_entry *e)
{
	struct archive_entry *ae;
	int r;

	deb_entry_release(e);
	if (d->data_done)
		return 0;
	if (!d->inner && (r = open_data(d)))
		return r;
	r = archive_read_next_header(d->inner, &ae);
	if (r == ARCHIVE_EOF) {
		d->data_done = 1;
		close_archives(d); /* decompressor state can be large; the members stay */
		return 0;
	}
	if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
		return fail_archive(d, d->inner, "bad tar header");
	r = fill_entry(d, e, ae);
	if (!r)
		r = check_limits(d, e);
	return r ? r : 1;
}

ssize_t deb_read(struct deb *d, void *buf, size_t n)
{
	ssize_t r = archive_read_data(d->inner, buf, n);

	if (r < 0)
		return fail_archive(d, d->inner, "cannot read file data");
	return r;
}

int deb_read_block(struct deb *d, const void **buf, size_t *len, uint64_t *offset)
{
	la_int64_t off = 0;
	int r = archive_read_data_block(d->inner, buf, len, &off);

	if (r == ARCHIVE_EOF)
		return 0;
	if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
		return fail_archive(d, d->inner, "cannot read file data");
	if (off < 0)
		return fail(d, -MKI_E_PACKAGE, "file data at a negative offset (corrupt package?)");
	*offset = (uint64_t)off;
	return 1;
}

const char *deb_error(const struct deb *d)
{
	return d->err;
}

void deb_entry_release(struct deb_entry *e)
{
	manifest_xattrs_free(e->xattrs, e->n_xattrs);
	free(e->path);
	free(e->target);
	memset(e, 0, sizeof(*e));
}

void deb_free(struct deb *d)
{
	size_t i;

	if (!d)
		return;
	close_archives(d);
	for (i = 0; i < d->n_members; i++) {
		free(d->members[i].name);
		free(d->members[i].data);
	}
	free(d->members);
	free(d);
}

/* --- control files ------------------------------------------------------------------------ */

/* The reasons control files were refused with before they were read as deb822. */
static const char *control_why(const struct deb822 *d)
{
	switch (d->error) {
	case DEB822_E_LINE:
	case DEB822_E_NAME:
		return "line is neither 'Field: value' nor a continuation";
	case DEB822_E_CONTINUATION:
		return "continuation line before any field";
	default:
		return d->error_msg;
	}
}

static void control_take(struct deb_control *c, const struct deb822 *d)
{
	size_t i;

	c->v = xcalloc(d->n_fields ? d->n_fields : 1, sizeof(*c->v));
	c->n = c->alloc = d->n_fields;
	for (i = 0; i < d->n_fields; i++) {
		c->v[i].name = xstrdup(d->fields[i].name);
		c->v[i].value = xstrndup(d->fields[i].value, d->fields[i].value_len);
	}
}

int deb_control_parse(struct deb_control *c, const char *text, const struct limits *lim,
		      const char **why)
{
	struct deb822 d;
	int ret;

	if ((ret = deb822_open_mem(&d, "control", text, strlen(text))))
		return ret;
	deb822_set_limits(&d, lim, -MKI_E_LIMIT_PKG);
	deb822_set_silent(&d); /* worker threads parse control files: the caller logs */
	deb822_set_verbatim(&d);
	ret = deb822_next(&d);
	if (ret > 0)
		control_take(c, &d);
	if (ret < 0) {
		snprintf(c->why, sizeof(c->why), "%s", control_why(&d));
		*why = c->why;
		ret = ret == -MKI_E_PARSE ? -MKI_E_PACKAGE : ret;
	}
	deb822_close(&d);
	return ret < 0 ? ret : 0;
}

const char *deb_control_get(const struct deb_control *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcasecmp(c->v[i].name, name))
			return c->v[i].value;
	return NULL;
}

void deb_control_release(struct deb_control *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->v[i].name);
		free(c->v[i].value);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* --- versions (dpkg's verrevcmp) ------------------------------------------------------------- */

static int order(int c)
{
	if (isdigit(c))
		return 0;
	if (isalpha(c))
		return c;
	if (c == '~')
		return -1;
	if (c)
		return c + 256;
	return 0;
}

static int verrevcmp(const char *a, const char *b)
{
	while (*a || *b) {
		int first_diff = 0;

		while ((*a && !isdigit((unsigned char)*a)) || (*b && !isdigit((unsigned char)*b))) {
			int ac = order((unsigned char)*a), bc = order((unsigned char)*b);

			if (ac != bc)
				return ac - bc;
			a++;
			b++;
		}
		while (*a == '0')
			a++;
		while (*b == '0')
			b++;
		while (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			if (!first_diff)
				first_diff = *a - *b;
			a++;
			b++;
		}
		if (isdigit((unsigned char)*a))
			return 1;
		if (isdigit((unsigned char)*b))
			return -1;
		if (first_diff)
			return first_diff;
	}
	return 0;
}

/* Split "epoch:upstream-revision" into its parts (copies in `buf`). */
static void split_version(const char *v, char *buf, size_t size, long *epoch, const char **up,
			  const char **rev)
{
	const char *colon = strchr(v, ':');
	char *dash;

	*epoch = colon ? strtol(v, NULL, 10) : 0;
	snprintf(buf, size, "%s", colon ? colon + 1 : v);
	dash = strrchr(buf, '-');
	if (dash)
		*dash = 0;
	*up = buf;
	*rev = dash ? dash + 1 : "";
}

int deb_version_cmp(const char *a, const char *b)
{
	char ba[256], bb[256];
	const char *ua, *ra, *ub, *rb;
	long ea, eb;
	int r;

	split_version(a, ba, sizeof(ba), &ea, &ua, &ra);
	split_version(b, bb, sizeof(bb), &eb, &ub, &rb);
	if (ea != eb)
		return ea < eb ? -1 : 1;
	r = verrevcmp(ua, ub);
	return r ? r : verrevcmp(ra, rb);
}
