/*
 * Decoding a .deb for the unpacker. Worker threads run pkg_decode() on distinct packages at the
 * same time: everything here touches only its own struct pkg (and reads the shared limits).
 */
#include "pkg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"

#define META_OVER (16ull << 20) /* entries' headers held past this: count the rest first */

int pkg_fail(struct pkg *k, int code, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	free(k->errmsg);
	k->errmsg = xasprintf("package '%s' ('%s'): %s", k->dpkg_name, k->pe->path, msg);
	free(msg);
	k->refused |= code == -MKI_E_LIMIT_PKG;
	return code;
}

static int check_field(struct pkg *k, const char *field, const char *want)
{
	const char *have = deb_control_get(&k->ctl, field);

	if (!have)
		return pkg_fail(k, -MKI_E_PACKAGE, "control file lacks the '%s' field", field);
	if (want && strcmp(have, want))
		return pkg_fail(k, -MKI_E_PACKAGE, "control says %s '%s' but the plan expects '%s'",
				field, have, want);
	return 0;
}

/* Debian policy 5.6.1 (names) and dpkg's architecture syntax: these name files in info/. */
static int valid_name(const char *s, const char *extra)
{
	const char *p;

	if (!s || !s[0] || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
		return 0;
	for (p = s; *p; p++)
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) &&
		    !strchr(extra, *p))
			return 0;
	return 1;
}

static int parse_conffiles(struct pkg *k)
{
	const struct deb_member *cf = deb_member(k->deb, "conffiles");
	const char *line, *end;
	size_t len;

	if (!cf)
		return 0;
	for (line = cf->data; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		len = strcspn(line, " \t\n");
		if (!len)
			continue;
		/*
		 * deb-conffiles(5): "remove-on-upgrade /etc/x" names a conffile an older version
		 * shipped, which dpkg removes on upgrade. A fresh tree has no older version: nothing
		 * is shipped or recorded for it (pkgconf in bookworm).
		 */
		if (len == 17 && !strncmp(line, "remove-on-upgrade", len) && line[len] == ' ')
			continue;
		if (line[0] != '/')
			return pkg_fail(k, -MKI_E_PACKAGE,
					"conffile '%.*s' is not an absolute path", (int)len, line);
		strv_push_take(&k->conffiles, xstrndup(line, len));
		strv_push(&k->md5s, "newconffile");
	}
	return 0;
}

static int parse_control(struct pkg *k)
{
	const struct deb_member *c = deb_member(k->deb, "control");
	const char *why = NULL;
	int r = deb_control_parse(&k->ctl, c->data, k->lim, &why);

	if (r)
		return pkg_fail(k, r, "malformed control file: %s", why);
	r = check_field(k, "Package", k->pe->name);
	if (!r)
		r = check_field(k, "Version", k->pe->version);
	if (!r)
		r = check_field(k, "Architecture", k->pe->arch);
	if (!r && (!valid_name(deb_control_get(&k->ctl, "Package"), "+-.") ||
		   !valid_name(deb_control_get(&k->ctl, "Architecture"), "-")))
		r = pkg_fail(k, -MKI_E_PACKAGE, "invalid package name '%s' or architecture '%s'",
			     deb_control_get(&k->ctl, "Package"),
			     deb_control_get(&k->ctl, "Architecture"));
	return r ? r : parse_conffiles(k);
}

static int read_data(struct pkg *k, struct pfile *f)
{
	size_t done = 0;
	ssize_t n;

	if (f->e.type != MF_REG || !f->e.size)
		return 0;
	f->data = xmalloc((size_t)f->e.size);
	while (done < f->e.size) {
		n = deb_read(k->deb, f->data + done, (size_t)f->e.size - done);
		if (n < 0)
			return pkg_fail(k, (int)n, "%s", deb_error(k->deb));
		if (!n)
			return pkg_fail(k, -MKI_E_PACKAGE, "'%s': data ends early (truncated)",
					f->e.path);
		done += (size_t)n;
	}
	return 0;
}

/* MD5 of a regular file's contents (a lazy one must have been read to its end). */
int pkg_file_md5(const struct pfile *f, char *hex)
{
	struct hash h;

	if (f->lazy || f->spooled) {
		memcpy(hex, f->md5, sizeof(f->md5));
		return f->md5[0] ? 0 : -1;
	}
	if (hash_init(&h, HASH_MD5))
		return -1;
	hash_update(&h, f->data ? f->data : "", (size_t)f->e.size);
	hash_final_hex(&h, hex);
	return 0;
}

/* dpkg computes md5sums for packages that ship none (dpkg --audit wants them). */
void pkg_add_md5sum(struct pkg *k, const struct pfile *f)
{
	const char *p = f->e.path;
	char hex[65], *abs;
	int left_out;

	if (f->e.type != MF_REG || deb_member(k->deb, "md5sums"))
		return;
	while (*p == '.' || *p == '/')
		p++;
	abs = xasprintf("/%s", p);
	left_out = pathfilter_skips(k->filter, abs, 0); /* dpkg sums only what it wrote */
	free(abs);
	if (!left_out && !pkg_file_md5(f, hex))
		buf_addf(&k->md5sums, "%s  %s\n", hex, p);
}

/* Read on in a lazy file's contents, straight from data.tar; 0 at its end. Errors are logged. */
ssize_t pkg_lazy_read(struct pkg *k, struct pfile *f, char *buf, size_t n)
{
	ssize_t got;

	if (n > f->e.size - f->consumed)
		n = (size_t)(f->e.size - f->consumed);
	if (!n)
		return 0;
	got = deb_read(k->deb, buf, n);
	if (got <= 0) {
		log_error("package '%s' ('%s'): %s", k->dpkg_name, k->pe->path,
			  got ? deb_error(k->deb) : "data ends early (truncated)");
		return -MKI_E_PACKAGE;
	}
	hash_update(&f->md5_ctx, buf, (size_t)got);
	f->consumed += (uint64_t)got;
	if (f->consumed == f->e.size) {
		hash_final_hex(&f->md5_ctx, f->md5);
		f->lazy = 2;
	}
	return got;
}

/* Read what is left of a lazy file (its MD5 is then known). */
int pkg_lazy_drain(struct pkg *k, struct pfile *f)
{
	char *buf;
	ssize_t n = 0;

	if (f->lazy != 1)
		return 0;
	buf = xmalloc(PKG_CHUNK);
	while ((n = pkg_lazy_read(k, f, buf, PKG_CHUNK)) > 0)
		;
	free(buf);
	return (int)n;
}

void pkg_spool_name(const struct pkg *k, const struct pfile *f, char name[PKG_SPOOL_NAME])
{
	snprintf(name, PKG_SPOOL_NAME, "%zu/%zu", k->id, (size_t)(f - k->files));
}

/* Does the database want the MD5 of `f`: a package without md5sums, or one of its conffiles? */
static int wants_md5(const struct pkg *k, const struct pfile *f)
{
	char *norm, *abs;
	int found;

	if (!deb_member(k->deb, "md5sums"))
		return 1;
	if (!k->conffiles.n || !(norm = manifest_normalize(f->e.path)))
		return 0;
	abs = xasprintf("/%s", norm);
	found = strv_contains(&k->conffiles, abs);
	free(abs);
	free(norm);
	return found;
}

/* A data.tar name as messages show it: "/usr/bin/x" for "./usr/bin/x". */
static const char *shown(const char *raw)
{
	while (!strncmp(raw, "./", 2))
		raw += 2;
	return raw + (*raw == '/');
}

/* Copy the entry's contents to `fd` straight from the decompressor's buffers, hashing them. */
static int copy_blocks(struct pkg *k, struct pfile *f, int fd, struct hash *md5)
{
	const void *p;
	size_t len;
	uint64_t off, done = 0;
	int r;

	while ((r = deb_read_block(k->deb, &p, &len, &off)) == 1) {
		if (off != done || len > f->e.size - done) /* a plain member's blocks follow on */
			return pkg_fail(k, -MKI_E_PACKAGE, "'%s': data out of order (corrupt package?)",
					f->e.path);
		r = fsutil_write_all(fd, p, len);
		if (r)
			return pkg_fail(k, r, "cannot create '/%s': %s", shown(f->e.path), strerror(-r));
		if (md5)
			hash_update(md5, p, len);
		done += len;
	}
	if (r < 0)
		return pkg_fail(k, r, "%s", deb_error(k->deb));
	if (done != f->e.size)
		return pkg_fail(k, -MKI_E_PACKAGE, "'%s': data ends early (truncated)", f->e.path);
	return 0;
}

/* Worker: write the contents of regular file `f` into the spool (spool.h). */
static int spool_file(struct pkg *k, struct pfile *f)
{
	char name[PKG_SPOOL_NAME];
	struct hash h, *md5 = NULL;
	int fd, r = 0;

	if (!k->spool_dir) {
		snprintf(name, sizeof(name), "%zu", k->id);
		if (mkdirat(k->spool_fd, name, 0700) && errno != EEXIST)
			return pkg_fail(k, -errno, "cannot create the spool directory '%s': %s", name,
					strerror(errno));
		k->spool_dir = 1;
	}
	if (wants_md5(k, f)) {
		if (hash_init(&h, HASH_MD5))
			return pkg_fail(k, -ENOMEM, "out of memory");
		md5 = &h;
	}
	pkg_spool_name(k, f, name);
	fd = openat(k->spool_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		r = pkg_fail(k, -errno, "cannot create '/%s': %s", shown(f->e.path), strerror(errno));
	f->spooled = fd >= 0;
	if (!r)
		r = copy_blocks(k, f, fd, md5);
	if (fd >= 0 && close(fd) && !r)
		r = pkg_fail(k, -errno, "cannot create '/%s': %s", shown(f->e.path), strerror(errno));
	if (md5 && !r)
		hash_final_hex(md5, f->md5);
	else if (md5)
		hash_release(md5);
	return r;
}

/*
 * Append the next data.tar entry to k->files with its contents, or, for a regular file larger
 * than `lazy_over`, lazily (read later, while written): 1, 0 at the end, or an error.
 */
int pkg_next_file(struct pkg *k, uint64_t lazy_over, int spool)
{
	struct deb_entry e = { 0 };
	struct pfile *f;
	int r = deb_next(k->deb, &e);

	if (r <= 0) {
		deb_entry_release(&e);
		return r < 0 ? pkg_fail(k, r, "%s", deb_error(k->deb)) : 0;
	}
	ALLOC_GROW(k->files, k->n_files + 1, k->alloc_files);
	f = &k->files[k->n_files++];
	memset(f, 0, sizeof(*f));
	f->e = e;
	k->meta += sizeof(*f) + strlen(e.path) + (e.target ? strlen(e.target) : 0) + 32;
	/* A sparse member may declare gigabytes of holes: never held in memory, written sparse. */
	if (f->e.type == MF_REG && (f->e.size > lazy_over || f->e.sparse)) {
		f->lazy = 1;
		return hash_init(&f->md5_ctx, HASH_MD5) ? -ENOMEM : 1;
	}
	r = spool && f->e.type == MF_REG ? spool_file(k, f) : read_data(k, f);
	if (!r) {
		k->mem += f->e.size;
		pkg_add_md5sum(k, f);
	}
	return r ? r : 1;
}

int pkg_open(struct pkg *k)
{
	int r;

	deb_free(k->deb);
	k->deb = NULL;
	r = deb_open(&k->deb, k->pe->path, k->lim);
	if (r)
		return pkg_fail(k, r == -MKI_E_LIMIT_PKG ? r : -MKI_E_PACKAGE, "%s",
				deb_error(k->deb));
	buf_release(&k->md5sums);
	buf_adds(&k->md5sums, "");
	return 0;
}

/*
 * A package of very many entries (a real one has at most some tens of thousands): read on through
 * its headers only, which deb_next() checks against the limits, so that one beyond 'deb-entries'
 * or 'deb-data' is refused before any of it is written, holding nothing meanwhile.
 */
static int count_rest(struct pkg *k)
{
	struct deb_entry e = { 0 };
	int r;

	while ((r = deb_next(k->deb, &e)) == 1)
		;
	deb_entry_release(&e);
	return r < 0 ? pkg_fail(k, r, "%s", deb_error(k->deb)) : 0;
}

/*
 * Worker: the whole package into memory, or, past `stream_max` bytes (or META_OVER bytes of
 * headers), nothing: k->stream then tells the applying thread to stream it itself, one file at
 * a time.
 */
int pkg_decode(struct pkg *k, uint64_t stream_max)
{
	int r = pkg_open(k), many;

	if (!r)
		r = parse_control(k);
	if (r)
		return r;
	while ((r = pkg_next_file(k, stream_max, 1)) == 1) {
		many = k->meta > META_OVER;
		if (many || k->mem > stream_max || k->files[k->n_files - 1].lazy) {
			pkg_drop_files(k);
			k->mem = k->meta = 0;
			k->stream = 1;
			return many ? count_rest(k) : 0;
		}
	}
	return r < 0 ? r : 0;
}

void pkg_drop_files(struct pkg *k)
{
	char name[PKG_SPOOL_NAME];
	size_t i;

	for (i = 0; i < k->n_files; i++) {
		if (k->files[i].spooled == 1) {
			pkg_spool_name(k, &k->files[i], name);
			unlinkat(k->spool_fd, name, 0);
		}
		deb_entry_release(&k->files[i].e);
		free(k->files[i].data);
		if (k->files[i].lazy == 1)
			hash_release(&k->files[i].md5_ctx);
	}
	free(k->files);
	k->files = NULL;
	k->n_files = k->alloc_files = 0;
	if (k->spool_dir) {
		snprintf(name, sizeof(name), "%zu", k->id);
		unlinkat(k->spool_fd, name, AT_REMOVEDIR);
		k->spool_dir = 0;
	}
}

void pkg_release(struct pkg *k)
{
	size_t i;

	pkg_drop_files(k);
	deb_free(k->deb);
	deb_control_release(&k->ctl);
	for (i = 0; i < k->n_list; i++) {
		free(k->list[i].pkgpath);
		free(k->list[i].treepath);
	}
	free(k->list);
	strv_release(&k->conffiles);
	strv_release(&k->md5s);
	buf_release(&k->md5sums);
	free(k->dpkg_name);
	free(k->errmsg);
}
