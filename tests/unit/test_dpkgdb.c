/*
 * The dpkg database as dpkg leaves it after unpacking, written into a temp staging tree from a
 * real .deb made by dpkg-deb at test time (the stanza's field order and trigger parsing are in
 * test_deb.c).
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debian/deb.h"
#include "lib/err.h"
#include "lib/readfile.h"
#include "lib/str.h"
#include "tree/dpkgdb.h"

#define MD5 "d41d8cd98f00b204e9800998ecf8427e"

struct fixture {
	char dir[64];
	struct staging s;
	struct staging_writer w;
	struct deb *deb, *base;
	struct deb_control control[2];
	struct strv conffiles, md5s, archs;
	struct buf list, md5sums, none;
	struct dpkgdb_pkg pkgs[2];
};

/*
 * hello (M-A same) with a postinst, a conffile and trigger interests (`triggers` its file), and
 * base-files with nothing but its control file.
 */
static const char deb_sh[] =
	"set -e; cd %s; mkdir -p pkg/DEBIAN pkg/etc;"
	"printf 'Package: hello\\nVersion: 2.10-3\\nArchitecture: armhf\\nMulti-Arch: same\\n"
	"Maintainer: M <m@example.org>\\nDescription: greets\\n' >pkg/DEBIAN/control;"
	"printf '#!/bin/sh\\nexit 0\\n' >pkg/DEBIAN/postinst; chmod 755 pkg/DEBIAN/postinst;"
	"echo /etc/hello.conf >pkg/DEBIAN/conffiles; : >pkg/etc/hello.conf;"
	"printf '%s' >pkg/DEBIAN/triggers;"
	"dpkg-deb --root-owner-group -Zgzip --build pkg hello.deb >/dev/null;"
	"mkdir -p base/DEBIAN; printf 'Package: base-files\\nVersion: 12.4\\nArchitecture: armhf\\n"
	"Maintainer: M <m@example.org>\\nDescription: base\\n' >base/DEBIAN/control;"
	"dpkg-deb --root-owner-group -Zgzip --build base base.deb >/dev/null";

static void control(struct deb_control *c, const char *text)
{
	const char *why = NULL;

	ck_assert_int_eq(deb_control_parse(c, text, NULL, &why), 0);
}

static void setup(struct fixture *f, const char *triggers)
{
	char *cmd, *deb;
	int fd = open("/dev/null", O_WRONLY);

	memset(f, 0, sizeof(*f));
	dup2(fd, 2);
	close(fd);
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-dpkgdb.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	cmd = xasprintf(deb_sh, f->dir, triggers);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	deb = xasprintf("%s/hello.deb", f->dir);
	ck_assert_int_eq(deb_open(&f->deb, deb, NULL), 0);
	free(deb);
	deb = xasprintf("%s/base.deb", f->dir);
	ck_assert_int_eq(deb_open(&f->base, deb, NULL), 0);
	free(deb);
	manifest_init(&f->s.manifest);
	f->w.rootfd = staging_init(&f->s, f->dir);
	ck_assert_int_ge(f->w.rootfd, 0);
	f->w.m = &f->s.manifest;
	f->w.mtime = 1700000000;
	control(&f->control[0], "Package: hello\nVersion: 2.10-3\nArchitecture: armhf\n"
				"Multi-Arch: same\nDescription: greets\n");
	control(&f->control[1], "Package: base-files\nVersion: 12.4\nArchitecture: armhf\n"
				"Essential: yes\n");
	strv_push(&f->conffiles, "/etc/hello.conf");
	strv_push(&f->md5s, MD5);
	strv_push(&f->archs, "armhf");
	strv_push(&f->archs, "armel");
	buf_adds(&f->list, "/.\n/etc\n/etc/hello.conf\n");
	buf_adds(&f->md5sums, MD5 "  etc/hello.conf\n");
	/* Plan order: hello first; the status file sorts by name. */
	f->pkgs[0] = (struct dpkgdb_pkg){ .control = &f->control[0], .dpkg_name = "hello:armhf",
					  .conffiles = &f->conffiles, .conffile_md5s = &f->md5s,
					  .deb = f->deb, .list = &f->list, .md5sums = &f->md5sums };
	f->pkgs[1] = (struct dpkgdb_pkg){ .control = &f->control[1], .dpkg_name = "base-files",
					  .deb = f->base, .list = &f->none, .md5sums = &f->none };
}

static void teardown(struct fixture *f)
{
	char *cmd = xasprintf("rm -rf %s", f->dir);

	close(f->w.rootfd);
	staging_release(&f->s);
	deb_free(f->deb);
	deb_free(f->base);
	deb_control_release(&f->control[0]);
	deb_control_release(&f->control[1]);
	strv_release(&f->conffiles);
	strv_release(&f->md5s);
	strv_release(&f->archs);
	buf_release(&f->list);
	buf_release(&f->md5sums);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

/* The file `rel` of the tree must hold `want`, with `mode`, and be in the manifest. */
static void assert_file(const struct fixture *f, const char *rel, const char *want, mode_t mode)
{
	char *p = xasprintf("%s/%s", f->s.root, rel);
	const struct manifest_entry *e = manifest_get(&f->s.manifest, rel);
	struct buf b = { 0 };
	struct stat st;

	ck_assert_msg(!readfile_read(p, 1 << 20, &b, NULL), "cannot read '%s'", rel);
	ck_assert_msg(!strcmp(b.p, want), "'%s' holds '%s', not '%s'", rel, b.p, want);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, mode);
	ck_assert_msg(e && e->type == MF_REG && e->size == b.len && e->mtime == 1700000000,
		      "'%s' is not recorded as written", rel);
	buf_release(&b);
	free(p);
}

START_TEST(database_as_dpkg_leaves_it)
{
	struct fixture f;
	char *status;

	setup(&f, "interest /usr/share/hello\\ninterest-noawait ldconfig\\n");
	ck_assert_int_eq(dpkgdb_write(&f.w, f.pkgs, 2, &f.archs), 0);
	status = xasprintf("Package: base-files\nEssential: yes\nStatus: install ok unpacked\n"
			   "Architecture: armhf\nVersion: 12.4\n\n"
			   "Package: hello\nStatus: install ok unpacked\nArchitecture: armhf\n"
			   "Multi-Arch: same\nVersion: 2.10-3\nConffiles:\n /etc/hello.conf " MD5
			   "\nDescription: greets\n\n");
	assert_file(&f, "var/lib/dpkg/status", status, 0644);
	assert_file(&f, "var/lib/dpkg/status-old", status, 0644);
	assert_file(&f, "var/lib/dpkg/info/hello:armhf.list", f.list.p, 0644);
	assert_file(&f, "var/lib/dpkg/info/hello:armhf.md5sums", f.md5sums.p, 0644);
	assert_file(&f, "var/lib/dpkg/info/hello:armhf.postinst", "#!/bin/sh\nexit 0\n", 0755);
	assert_file(&f, "var/lib/dpkg/info/hello:armhf.conffiles", "/etc/hello.conf\n", 0644);
	assert_file(&f, "var/lib/dpkg/info/base-files.list", "", 0644);
	assert_file(&f, "var/lib/dpkg/info/format", "1\n", 0644);
	assert_file(&f, "var/lib/dpkg/arch", "armhf\narmel\n", 0644);
	assert_file(&f, "var/lib/dpkg/available", "", 0644);
	assert_file(&f, "var/lib/dpkg/diversions", "", 0644);
	assert_file(&f, "var/lib/dpkg/statoverride", "", 0644);
	assert_file(&f, "var/lib/dpkg/triggers/File", "/usr/share/hello hello:armhf\n", 0644);
	assert_file(&f, "var/lib/dpkg/triggers/Unincorp", "", 0644);
	assert_file(&f, "var/lib/dpkg/triggers/ldconfig", "hello:armhf/noawait\n", 0644);
	ck_assert_ptr_nonnull(manifest_get(&f.s.manifest, "var/lib/dpkg/updates"));
	free(status);
	teardown(&f);
}
END_TEST

/* A triggers file with an unusable name, or a non-directory where the database goes. */
START_TEST(refused)
{
	struct fixture f;
	int fd;

	setup(&f, "interest ../../etc/passwd\\n");
	ck_assert_int_eq(dpkgdb_write(&f.w, f.pkgs, 2, &f.archs), -MKI_E_PACKAGE);
	teardown(&f);

	setup(&f, "");
	ck_assert_int_eq(mkdirat(f.w.rootfd, "var", 0755), 0);
	fd = openat(f.w.rootfd, "var/lib", O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(dpkgdb_write(&f.w, f.pkgs, 2, &f.archs), -MKI_E_PACKAGE);
	ck_assert_uint_eq(f.s.manifest.n, 0);
	teardown(&f);
}
END_TEST

/* dpkg's status order: by name, then architecture. */
START_TEST(pkg_order)
{
	struct deb_control c[3] = { { 0 } };
	struct dpkgdb_pkg p[3] = { { .control = &c[0] }, { .control = &c[1] },
				   { .control = &c[2] } };

	control(&c[0], "Package: libc6\nArchitecture: armhf\n");
	control(&c[1], "Package: libc6\nArchitecture: armel\n");
	control(&c[2], "Package: bash\nArchitecture: armhf\n");
	ck_assert_int_gt(dpkgdb_pkg_cmp(&p[0], &p[1]), 0);
	ck_assert_int_lt(dpkgdb_pkg_cmp(&p[2], &p[1]), 0);
	ck_assert_int_eq(dpkgdb_pkg_cmp(&p[0], &p[0]), 0);
	for (int i = 0; i < 3; i++)
		deb_control_release(&c[i]);
}
END_TEST

/* Maintainer scripts are kept executable; every other info member is data. */
START_TEST(info_members)
{
	size_t i, scripts = 0;

	for (i = 0; dpkgdb_info_members[i]; i++)
		scripts += (size_t)dpkgdb_info_is_script(dpkgdb_info_members[i]);
	ck_assert_uint_eq(scripts, 5);
	ck_assert(dpkgdb_info_is_script("config"));
	ck_assert(!dpkgdb_info_is_script("triggers"));
	ck_assert(!dpkgdb_info_is_script("control"));
}
END_TEST

Suite *dpkgdb_suite(void)
{
	Suite *s = suite_create("dpkgdb");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, database_as_dpkg_leaves_it);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, pkg_order);
	tcase_add_test(tc, info_members);
	suite_add_tcase(s, tc);
	return s;
}
