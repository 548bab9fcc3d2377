#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/imgtree.h"
#include "image/imgtree_internal.h"
#include "lib/err.h"
#include "lib/fsutil.h"

static struct manifest_entry *add(struct manifest *m, const char *path, char type, int64_t mtime)
{
	struct manifest_entry *e = manifest_add(m, path);

	e->type = type;
	e->mode = type == MF_DIR ? 0755 : 0644;
	e->mtime = mtime;
	return e;
}

static void test_staging_init(struct staging *s)
{
	memset(s, 0, sizeof(*s));
	s->root = strdup("/");
	manifest_init(&s->manifest);
}

static void staging_done(struct staging *s)
{
	manifest_release(&s->manifest);
	free(s->root);
}

START_TEST(sorted_clamped_linked)
{
	char path[] = "/dev/console";
	struct recipe_device dev = { .path = path, .type = 'c', .major = 5, .minor = 1,
				     .mode = 0600 };
	struct recipe_image im = { .devices = &dev, .n_devices = 1 };
	struct image_params p = { .im = &im, .source_date_epoch = 1000 };
	struct imgtree t;
	struct staging s;
	long z, a;

	test_staging_init(&s);
	add(&s.manifest, "z", MF_DIR, 5);
	add(&s.manifest, "z/file", MF_REG, 2000);
	add(&s.manifest, "a", MF_HARDLINK, 5)->target = strdup("z/file");
	add(&s.manifest, "z/b", MF_HARDLINK, 5)->target = strdup("/z/file");
	ck_assert_int_eq(imgtree_build(&t, &s, &p), 0);
	/* root and dev come from the imgtree itself; sorted bytewise */
	ck_assert_uint_eq(t.n, 7);
	ck_assert_str_eq(t.v[0].e->path, "");
	ck_assert_str_eq(t.v[1].e->path, "a");
	ck_assert_str_eq(t.v[2].e->path, "dev");
	ck_assert_str_eq(t.v[3].e->path, "dev/console");
	ck_assert_int_eq(t.v[3].e->type, MF_CHR);
	z = imgtree_find(&t, "z/file");
	a = imgtree_find(&t, "a");
	ck_assert_int_ge(z, 0);
	ck_assert_int_eq(t.v[z].mtime, 1000); /* clamped */
	ck_assert_uint_eq(t.v[z].nlink, 3);
	ck_assert_uint_eq(t.v[a].link, (size_t)z);
	ck_assert_uint_eq(t.v[z].first, (size_t)a); /* tar: "a" carries the data */
	ck_assert_str_eq(imgtree_name(&t, (size_t)z), "file");
	ck_assert_uint_eq(imgtree_parent(&t, (size_t)z), (size_t)imgtree_find(&t, "z"));
	imgtree_release(&t);
	staging_done(&s);
}
END_TEST

START_TEST(epoch_from_manifest)
{
	struct recipe_image im = { 0 };
	struct image_params p = { .im = &im, .source_date_epoch = -1 };
	struct imgtree t;
	struct staging s;

	test_staging_init(&s);
	add(&s.manifest, "", MF_DIR, 10);
	add(&s.manifest, "f", MF_REG, 1234);
	ck_assert_int_eq(imgtree_build(&t, &s, &p), 0);
	ck_assert_int_eq(t.sde, 1234);
	ck_assert_int_eq(t.v[1].mtime, 1234);
	imgtree_release(&t);
	staging_done(&s);
}
END_TEST

START_TEST(inconsistent)
{
	struct recipe_image im = { 0 };
	struct image_params p = { .im = &im, .source_date_epoch = 0 };
	struct imgtree t;
	struct staging s;

	test_staging_init(&s);
	add(&s.manifest, "x/y", MF_FIFO, 0);
	ck_assert_int_eq(imgtree_build(&t, &s, &p), -MKI_E_IMAGE);
	staging_done(&s);

	test_staging_init(&s);
	add(&s.manifest, "d", MF_DIR, 0);
	add(&s.manifest, "h", MF_HARDLINK, 0)->target = strdup("d");
	ck_assert_int_eq(imgtree_build(&t, &s, &p), -MKI_E_IMAGE);
	staging_done(&s);

	test_staging_init(&s);
	add(&s.manifest, "l", MF_SYMLINK, 0);
	ck_assert_int_eq(imgtree_build(&t, &s, &p), -MKI_E_IMAGE);
	staging_done(&s);
}
END_TEST

/* A tree for the scoped views: /boot/efi a subtree (on disk too), /srv holding none. */
static void scoped_stage(struct staging *s, char *dir)
{
	char path[4096];

	test_staging_init(s);
	free(s->root);
	s->root = strdup(dir);
	snprintf(path, sizeof(path), "%s/boot/efi/EFI", dir);
	ck_assert_int_eq(fsutil_mkdirs(path), 0);
	add(&s->manifest, "", MF_DIR, 5);
	add(&s->manifest, "boot", MF_DIR, 5);
	add(&s->manifest, "boot/efi", MF_DIR, 5)->mode = 0700;
	add(&s->manifest, "boot/efi/EFI", MF_DIR, 5);
	add(&s->manifest, "boot/efi/EFI/x.efi", MF_REG, 5);
	add(&s->manifest, "boot/vmlinuz", MF_REG, 5);
	add(&s->manifest, "etc", MF_DIR, 5);
}

START_TEST(scoped_views)
{
	char dir[] = "/tmp/test-imgtree-XXXXXX";
	static const char *const efi[] = { "boot/efi", "srv/data" };
	struct recipe_image im = { 0 };
	struct image_params p = { .im = &im, .source_date_epoch = 100 };
	struct imgtree_scope root = { NULL, efi, 2 }, sub = { "boot/efi", NULL, 0 };
	struct imgtree_scope boot = { "boot", efi, 1 };
	struct imgtree t;
	struct staging s;
	long i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	scoped_stage(&s, dir);
	/* the root: /boot/efi kept (its own mode), empty; /srv/data made with its parent */
	ck_assert_int_eq(imgtree_build_scoped(&t, &s, &p, &root), 0);
	ck_assert_int_lt(imgtree_find(&t, "boot/efi/EFI"), 0);
	ck_assert_int_lt(imgtree_find(&t, "boot/efi/EFI/x.efi"), 0);
	i = imgtree_find(&t, "boot/efi");
	ck_assert_int_ge(i, 0);
	ck_assert_uint_eq(t.v[i].e->mode, 0700);
	i = imgtree_find(&t, "srv/data");
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(t.v[i].e->type, MF_DIR);
	ck_assert_int_ge(imgtree_find(&t, "boot/vmlinuz"), 0);
	imgtree_release(&t);
	/* the subtree: its contents at the root, read from where they are */
	ck_assert_int_eq(imgtree_build_scoped(&t, &s, &p, &sub), 0);
	ck_assert_uint_eq(t.n, 3);
	ck_assert_str_eq(t.v[0].e->path, "");
	ck_assert_uint_eq(t.v[0].e->mode, 0700);
	ck_assert_str_eq(t.v[2].e->path, "EFI/x.efi");
	ck_assert_int_lt(imgtree_open(&t, 2), 0); /* the tree has no such file: opened there */
	imgtree_release(&t);
	/* a subtree holding another: /boot less /boot/efi's contents */
	ck_assert_int_eq(imgtree_build_scoped(&t, &s, &p, &boot), 0);
	ck_assert_int_ge(imgtree_find(&t, "efi"), 0);
	ck_assert_int_lt(imgtree_find(&t, "efi/EFI"), 0);
	ck_assert_int_ge(imgtree_find(&t, "vmlinuz"), 0);
	imgtree_release(&t);
	/* a hard link across a view's edge is refused, naming both */
	add(&s.manifest, "etc/link", MF_HARDLINK, 5)->target = strdup("boot/efi/EFI/x.efi");
	ck_assert_int_eq(imgtree_build_scoped(&t, &s, &p, &root), -MKI_E_IMAGE);
	staging_done(&s);
	fsutil_remove_tree(dir);
}
END_TEST

START_TEST(scoped_whole_unchanged)
{
	char dir[] = "/tmp/test-imgtree-XXXXXX";
	struct recipe_image im = { 0 };
	struct image_params p = { .im = &im, .source_date_epoch = 100 };
	struct imgtree a, b;
	struct staging s;
	size_t i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	scoped_stage(&s, dir);
	ck_assert_int_eq(imgtree_build(&a, &s, &p), 0);
	ck_assert_int_eq(imgtree_build_scoped(&b, &s, &p, NULL), 0);
	ck_assert_uint_eq(a.n, b.n);
	for (i = 0; i < a.n; i++)
		ck_assert_ptr_eq(a.v[i].e, b.v[i].e);
	imgtree_release(&a);
	imgtree_release(&b);
	staging_done(&s);
	fsutil_remove_tree(dir);
}
END_TEST

Suite *imgtree_suite(void)
{
	Suite *s = suite_create("imgtree");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sorted_clamped_linked);
	tcase_add_test(tc, epoch_from_manifest);
	tcase_add_test(tc, inconsistent);
	tcase_add_test(tc, scoped_views);
	tcase_add_test(tc, scoped_whole_unchanged);
	suite_add_tcase(s, tc);
	return s;
}
