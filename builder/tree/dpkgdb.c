#include "dpkgdb.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/err.h"
#include "lib/log.h"

/* dpkg's field order (lib/dpkg/parse.c fieldinfos); other fields follow in control order. */
static const char *const field_order[] = {
	"Package", "Essential", "Protected", "Status", "Priority", "Section", "Installed-Size",
	"Origin", "Maintainer", "Bugs", "Architecture", "Multi-Arch", "Source", "Version",
	"Config-Version", "Replaces", "Provides", "Depends", "Pre-Depends", "Recommends",
	"Suggests", "Breaks", "Conflicts", "Enhances", "Conffiles", "Description",
	"Triggers-Pending", "Triggers-Awaited", NULL,
};

const char *const dpkgdb_info_members[] = {
	"md5sums", "conffiles", "preinst", "postinst", "prerm", "postrm", "config", "templates",
	"triggers", "shlibs", "symbols", NULL,
};

int dpkgdb_info_is_script(const char *name)
{
	return !strcmp(name, "preinst") || !strcmp(name, "postinst") || !strcmp(name, "prerm") ||
	       !strcmp(name, "postrm") || !strcmp(name, "config");
}

static int known_field(const char *name)
{
	size_t i;

	for (i = 0; field_order[i]; i++)
		if (!strcasecmp(field_order[i], name))
			return 1;
	return 0;
}

static void add_conffiles(struct buf *out, const struct dpkgdb_pkg *p)
{
	size_t i;

	if (!p->conffiles || !p->conffiles->n)
		return;
	buf_adds(out, "Conffiles:\n");
	for (i = 0; i < p->conffiles->n; i++)
		buf_addf(out, " %s %s\n", p->conffiles->v[i], p->conffile_md5s->v[i]);
}

static void add_field(struct buf *out, const struct dpkgdb_pkg *p, const char *name,
		      const char *status)
{
	const char *v;

	if (!strcmp(name, "Status")) {
		buf_addf(out, "Status: %s\n", status);
		return;
	}
	if (!strcmp(name, "Conffiles")) {
		add_conffiles(out, p);
		return;
	}
	v = deb_control_get(p->control, name);
	if (v)
		buf_addf(out, "%s: %s\n", name, v);
}

void dpkgdb_status_stanza(struct buf *out, const struct dpkgdb_pkg *p, const char *status)
{
	size_t i;

	for (i = 0; field_order[i]; i++)
		add_field(out, p, field_order[i], status);
	for (i = 0; i < p->control->n; i++)
		if (!known_field(p->control->v[i].name))
			buf_addf(out, "%s: %s\n", p->control->v[i].name, p->control->v[i].value);
	buf_adds(out, "\n");
}

int dpkgdb_pkg_cmp(const struct dpkgdb_pkg *a, const struct dpkgdb_pkg *b)
{
	const char *na = deb_control_get(a->control, "Package");
	const char *nb = deb_control_get(b->control, "Package");
	const char *aa = deb_control_get(a->control, "Architecture");
	const char *ab = deb_control_get(b->control, "Architecture");
	int r = strcmp(na ? na : "", nb ? nb : "");

	return r ? r : strcmp(aa ? aa : "", ab ? ab : "");
}

static int trigger_name_ok(const char *name, size_t len)
{
	size_t i;

	if (!len || (len == 1 && name[0] == '.') || (len == 2 && !strncmp(name, "..", 2)))
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)name[i] <= 0x20 || (unsigned char)name[i] >= 0x7f ||
		    (name[0] != '/' && name[i] == '/'))
			return 0;
	return 1;
}

static int add_interest(struct strv *file, struct strv *explicit_, const char *kw, size_t kwlen,
			const char *name, size_t len, const char *pkg, const char **why)
{
	int noawait = kwlen == 16 && !strncmp(kw, "interest-noawait", 16);

	if (!trigger_name_ok(name, len))
		return (*why = "trigger name unusable as a file name", -MKI_E_PACKAGE);
	strv_push_take(name[0] == '/' ? file : explicit_,
		       xasprintf("%.*s %s%s", (int)len, name, pkg, noawait ? "/noawait" : ""));
	return 0;
}

int dpkgdb_add_triggers(struct strv *file, struct strv *explicit_, const char *text,
			const char *dpkg_name, const char **why)
{
	const char *line, *end, *kw, *name;
	size_t kwlen, len;
	int r;

	for (line = text; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		for (kw = line; kw < end && (*kw == ' ' || *kw == '\t'); kw++)
			;
		if (kw == end || *kw == '#')
			continue;
		kwlen = strcspn(kw, " \t\n");
		for (name = kw + kwlen; name < end && (*name == ' ' || *name == '\t'); name++)
			;
		len = strcspn(name, " \t\n");
		if (!len)
			return (*why = "trigger directive without a name", -MKI_E_PACKAGE);
		if (kwlen >= 8 && !strncmp(kw, "interest", 8)) {
			r = add_interest(file, explicit_, kw, kwlen, name, len, dpkg_name, why);
			if (r)
				return r;
		}
	}
	return 0;
}

/* --- writing the database into the staging tree --- */

static int db_cmp(const void *a, const void *b)
{
	return dpkgdb_pkg_cmp(*(const struct dpkgdb_pkg *const *)a,
			      *(const struct dpkgdb_pkg *const *)b);
}

static int write_status(struct staging_writer *w, const struct dpkgdb_pkg *pkgs, size_t n)
{
	const struct dpkgdb_pkg **sorted = xcalloc(n ? n : 1, sizeof(*sorted));
	struct buf b = { 0 };
	size_t i;
	int r;

	for (i = 0; i < n; i++)
		sorted[i] = &pkgs[i];
	qsort(sorted, n, sizeof(*sorted), db_cmp);
	buf_adds(&b, "");
	for (i = 0; i < n; i++)
		dpkgdb_status_stanza(&b, sorted[i], "install ok unpacked");
	r = staging_write_file(w, "var/lib/dpkg/status", b.p, b.len, 0644);
	if (!r) /* dpkg's status-old: the same on a fresh install */
		r = staging_write_file(w, "var/lib/dpkg/status-old", b.p, b.len, 0644);
	buf_release(&b);
	free(sorted);
	return r;
}

static int write_info(struct staging_writer *w, const struct dpkgdb_pkg *k)
{
	char *path;
	size_t i;
	int r;

	path = xasprintf("var/lib/dpkg/info/%s.list", k->dpkg_name);
	r = staging_write_file(w, path, k->list->p ? k->list->p : "", k->list->len, 0644);
	free(path);
	if (!r && k->md5sums->p) {
		path = xasprintf("var/lib/dpkg/info/%s.md5sums", k->dpkg_name);
		r = staging_write_file(w, path, k->md5sums->p, k->md5sums->len, 0644);
		free(path);
	}
	for (i = 0; !r && dpkgdb_info_members[i]; i++) {
		const struct deb_member *m = deb_member(k->deb, dpkgdb_info_members[i]);

		if (!m)
			continue;
		path = xasprintf("var/lib/dpkg/info/%s.%s", k->dpkg_name, m->name);
		r = staging_write_file(w, path, m->data, m->len,
			     dpkgdb_info_is_script(m->name) ? 0755 : 0644);
		free(path);
	}
	return r;
}

static int write_triggers(struct staging_writer *w, const struct dpkgdb_pkg *pkgs, size_t n)
{
	struct strv file = { 0 }, expl = { 0 };
	struct buf b = { 0 };
	size_t i;
	int r = 0;

	for (i = 0; i < n && !r; i++) {
		const struct deb_member *t = deb_member(pkgs[i].deb, "triggers");
		const char *why = NULL;

		if (t &&
		    (r = dpkgdb_add_triggers(&file, &expl, t->data, pkgs[i].dpkg_name, &why)))
			log_error("package '%s': bad triggers control file: %s",
				  pkgs[i].dpkg_name, why);
	}
	buf_adds(&b, "");
	for (i = 0; i < file.n; i++)
		buf_addf(&b, "%s\n", file.v[i]);
	if (!r)
		r = staging_write_file(w, "var/lib/dpkg/triggers/File", b.p, b.len, 0644);
	if (!r)
		r = staging_write_file(w, "var/lib/dpkg/triggers/Unincorp", "", 0, 0644);
	for (i = 0; i < expl.n && !r; i++) {
		char *sp = strchr(expl.v[i], ' '), *path, *line;

		*sp = 0;
		path = xasprintf("var/lib/dpkg/triggers/%s", expl.v[i]);
		line = xasprintf("%s\n", sp + 1);
		r = staging_write_file(w, path, line, strlen(line), 0644); /* one interested package each */
		free(path);
		free(line);
	}
	buf_release(&b);
	strv_release(&file);
	strv_release(&expl);
	return r;
}

int dpkgdb_write(struct staging_writer *w, const struct dpkgdb_pkg *pkgs, size_t n,
		 const struct strv *archs)
{
	static const char *const empty[] = { "available", "diversions", "statoverride", NULL };
	struct buf arch = { 0 };
	size_t i;
	int r = staging_mkdirs(w, "var/lib/dpkg/info");

	if (!r)
		r = staging_mkdirs(w, "var/lib/dpkg/updates");
	if (!r)
		r = staging_mkdirs(w, "var/lib/dpkg/triggers");
	if (!r)
		r = write_status(w, pkgs, n);
	for (i = 0; i < n && !r; i++)
		r = write_info(w, &pkgs[i]);
	for (i = 0; empty[i] && !r; i++) {
		char *path = xasprintf("var/lib/dpkg/%s", empty[i]);

		r = staging_write_file(w, path, "", 0, 0644);
		free(path);
	}
	if (!r)
		r = staging_write_file(w, "var/lib/dpkg/info/format", "1\n", 2, 0644);
	buf_adds(&arch, "");
	for (i = 0; i < archs->n; i++)
		buf_addf(&arch, "%s\n", archs->v[i]);
	if (!r)
		r = staging_write_file(w, "var/lib/dpkg/arch", arch.p, arch.len, 0644);
	buf_release(&arch);
	return r ? r : write_triggers(w, pkgs, n);
}
