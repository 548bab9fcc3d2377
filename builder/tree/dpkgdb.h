/* The dpkg database as dpkg writes it after unpacking: status stanzas, info files, triggers. */
#ifndef MKI_DPKGDB_H
#define MKI_DPKGDB_H

#include "debian/deb.h"
#include "lib/str.h"
#include "staging.h"

/** What the database needs to know about one unpacked package. All pointers borrowed. */
struct dpkgdb_pkg {
	const struct deb_control *control;
	const char *dpkg_name;         /* "name" or "name:arch" (M-A same) */
	const struct strv *conffiles;  /* "/etc/x" */
	const struct strv *conffile_md5s; /* parallel to conffiles: md5 hex of the unpacked file */
	const struct deb *deb;         /* control.tar members for info/ and triggers */
	const struct buf *list;        /* info/PKG.list: the paths it owns, one a line */
	const struct buf *md5sums;     /* generated md5sums (p NULL: the package ships its own) */
};

/**
 * Append the status stanza of `p` with `Status: <status>` (e.g. "install ok unpacked"), fields
 * in dpkg's order, then unknown fields in control order, then a blank line.
 */
void dpkgdb_status_stanza(struct buf *out, const struct dpkgdb_pkg *p, const char *status);

/** Sort order of status stanzas (dpkg: by name, then architecture): <0, 0, >0. */
int dpkgdb_pkg_cmp(const struct dpkgdb_pkg *a, const struct dpkgdb_pkg *b);

/** The control.tar members dpkg keeps in info/ (and their modes); NULL-terminated. */
extern const char *const dpkgdb_info_members[];
/** 1 if info member `name` is a maintainer script (mode 0755), else 0 (0644). */
int dpkgdb_info_is_script(const char *name);

/**
 * Add the trigger interests declared in a package's `triggers` control file to `file`
 * (lines "PATH PKG[/noawait]") and `explicit` (lines "TRIGGER PKG[/noawait]"). Returns 0, or
 * -MKI_E_PACKAGE with a reason in `*why` for a malformed line or a trigger name unusable as a
 * file name.
 */
int dpkgdb_add_triggers(struct strv *file, struct strv *explicit_, const char *text,
			const char *dpkg_name, const char **why);

/**
 * Write the dpkg database of `pkgs` (plan order; `n` of them) into the tree as dpkg leaves it
 * after unpacking: status and status-old (sorted, "install ok unpacked"), info/ files, triggers/
 * (File, Unincorp, one file per explicit trigger), the empty available/diversions/statoverride,
 * info/format and arch (`archs` in order). Returns 0, -MKI_E_PACKAGE (a bad triggers file) or a
 * negative errno; every error is logged.
 */
int dpkgdb_write(struct staging_writer *w, const struct dpkgdb_pkg *pkgs, size_t n,
		 const struct strv *archs);

#endif
