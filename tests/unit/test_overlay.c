#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "configure/overlay.h"
#include "lib/err.h"
#include "lib/manifest.h"
#include "unpack/unpack.h"

static char top[64], src[96], tree[96], root_dest[1] = "", recipe_file[] = "r.cfg";

static void put(const char *base, const char *rel, const char *text, mode_t mode)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static void sub(const char *base, const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

static const char *path_in(const char *base, const char *rel)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	return path;
}

static void setup(void)
{
	char path[256];

	snprintf(top, sizeof(top), "/tmp/mki-overlay-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(src, sizeof(src), "%s/src", top);
	snprintf(tree, sizeof(tree), "%s/tree", top);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	ck_assert_int_eq(mkdir(tree, 0755), 0);
	sub(src, "etc");
	put(src, "etc/app.conf", "a=1\n", 0640);
	snprintf(path, sizeof(path), "%s/etc/link", src);
	ck_assert_int_eq(symlink("app.conf", path), 0);
	sub(tree, "etc");
	put(tree, "etc/owned", "package\n", 0644);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

static struct recipe_overlay overlay(void)
{
	struct recipe_overlay o = { .source = src, .destination = root_dest, .line = 3 };

	o.uid = getuid();
	o.gid = getgid();
	return o;
}

START_TEST(link_inside)
{
	ck_assert_int_eq(overlay_link_inside("etc/x", "/anywhere/at/all"), 1);
	ck_assert_int_eq(overlay_link_inside("etc/x", "y"), 1);
	ck_assert_int_eq(overlay_link_inside("etc/x", "../usr/y"), 1);
	ck_assert_int_eq(overlay_link_inside("etc/x", "../../y"), 0);
	ck_assert_int_eq(overlay_link_inside("x", "../y"), 0);
	ck_assert_int_eq(overlay_link_inside("a/b/x", "./../../c/./../y"), 1);
	ck_assert_int_eq(overlay_link_inside("a/b/x", "c/../../../../y"), 0);
	ck_assert_int_eq(overlay_link_inside("a/x", "..//../y"), 0);
}
END_TEST

/* The digest covers names, modes and contents, not times. */
START_TEST(digest)
{
	struct recipe_overlay o = overlay();
	char first[65], path[256];
	struct timeval tv[2] = { { 1, 0 }, { 1, 0 } };

	ck_assert_int_eq(overlay_check(&o, "r.cfg"), 0);
	memcpy(first, o.digest, sizeof(first));
	ck_assert_int_eq(strlen(first), 64);
	snprintf(path, sizeof(path), "%s/etc/app.conf", src);
	ck_assert_int_eq(utimes(path, tv), 0);
	ck_assert_int_eq(overlay_check(&o, "r.cfg"), 0);
	ck_assert_str_eq(o.digest, first);
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(overlay_check(&o, "r.cfg"), 0);
	ck_assert_str_ne(o.digest, first);
	ck_assert_int_eq(chmod(path, 0640), 0);
	put(src, "etc/app.conf", "a=2\n", 0640);
	ck_assert_int_eq(overlay_check(&o, "r.cfg"), 0);
	ck_assert_str_ne(o.digest, first);
}
END_TEST

START_TEST(refusals)
{
	struct recipe_overlay o = overlay();
	char path[256];

	snprintf(path, sizeof(path), "%s/etc/out", src);
	ck_assert_int_eq(symlink("../../x", path), 0);
	ck_assert_int_eq(overlay_check(&o, "r.cfg"), -MKI_E_RECIPE);
	ck_assert_int_eq(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/pipe", src);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(overlay_check(&o, "r.cfg"), -MKI_E_RECIPE);
	o.devices = 1;
	ck_assert_int_eq(overlay_check(&o, "r.cfg"), 0);
}
END_TEST

/* Into a tree: new files recorded, a package's file only with replace, owners kept. */
START_TEST(apply)
{
	struct recipe_overlay o = overlay();
	struct recipe r = { .file = recipe_file, .overlays = &o, .n_overlays = 1 };
	struct staging s = { .root = tree };
	struct overlay_report *rep;
	struct manifest_entry *e;
	char buf[16] = "";
	int rootfd = open(tree, O_PATH | O_DIRECTORY), fd;

	manifest_init(&s.manifest);
	e = manifest_add(&s.manifest, "etc/owned");
	e->type = MF_REG;
	strv_push(&e->owners, "vendor");
	put(src, "etc/owned", "overlay\n", 0600);
	ck_assert_int_eq(overlay_check(&o, "r.cfg"), 0);
	ck_assert_int_eq(overlay_precheck(&r, &s, rootfd), -MKI_E_RECIPE);
	ck_assert_int_eq(access(path_in(tree, "etc/app.conf"), F_OK), -1); /* nothing written */
	ck_assert_int_eq(overlay_apply(&r, &s, rootfd, 100, &rep), -MKI_E_RECIPE);
	ck_assert_ptr_null(rep);

	o.replace = 1;
	ck_assert_int_eq(overlay_precheck(&r, &s, rootfd), 0);
	ck_assert_int_eq(overlay_apply(&r, &s, rootfd, 100, &rep), 0);
	ck_assert_int_eq(rep->n, 1);
	ck_assert_int_eq(rep->v[0].files, 2);
	ck_assert_int_eq(rep->v[0].links, 1);
	ck_assert_int_eq(rep->v[0].replaced.n, 1);
	ck_assert_str_eq(rep->v[0].replaced.v[0], "/etc/owned (vendor)");
	e = manifest_get(&s.manifest, "etc/owned");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->mode, 0600);
	ck_assert_int_eq(e->mtime, 100);
	ck_assert_str_eq(e->owners.v[0], "vendor");
	e = manifest_get(&s.manifest, "etc/link");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->type, MF_SYMLINK);
	ck_assert_str_eq(e->target, "app.conf");
	ck_assert_ptr_null(manifest_get(&s.manifest, "etc")); /* existing: untouched */
	fd = openat(open(tree, O_RDONLY | O_DIRECTORY), "etc/owned", O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf) - 1), 8);
	ck_assert_str_eq(buf, "overlay\n");
	overlay_report_free(rep);
	manifest_release(&s.manifest);
	close(rootfd);
}
END_TEST

Suite *overlay_suite(void)
{
	Suite *s = suite_create("overlay");
	TCase *tc = tcase_create("overlay");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, link_inside);
	tcase_add_test(tc, digest);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, apply);
	suite_add_tcase(s, tc);
	return s;
}
