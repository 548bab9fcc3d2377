#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/reconcile.h"
#include "lib/err.h"

static void put(const char *root, const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", root, rel);
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

/* New, changed and deleted paths; owners kept; device nodes survive; hardlinks grouped. */
START_TEST(reconcile_tree)
{
	char tmpl[] = "/tmp/mki-unit-reconcile.XXXXXX", *root = mkdtemp(tmpl), *p, *q;
	struct staging s = { .root = root };
	struct reconcile_changes ch;
	struct manifest_entry *e;

	ck_assert_ptr_nonnull(root);
	manifest_init(&s.manifest);
	put(root, "kept", "same");
	put(root, "grown", "x");
	p = xasprintf("%s/d", root);
	ck_assert_int_eq(mkdir(p, 0750), 0);
	free(p);
	put(root, "d/b", "linked");
	p = xasprintf("%s/d/b", root);
	q = xasprintf("%s/a-link", root);
	ck_assert_int_eq(link(p, q), 0);
	free(p);
	free(q);
	ck_assert_int_eq(reconcile_manifest(&s, 100, NULL, &ch), 0);
	ck_assert_uint_eq(ch.added, 6); /* "", kept, grown, d, d/b, a-link */
	strv_push(&manifest_get(&s.manifest, "kept")->owners, "pkg");
	e = manifest_add(&s.manifest, "dev/console");
	e->type = MF_CHR;
	e->major = 5;
	e->minor = 1;
	manifest_add(&s.manifest, "gone")->type = MF_REG;
	put(root, "grown", "xyz");
	put(root, "new", "n");
	ck_assert_int_eq(reconcile_manifest(&s, 100, NULL, &ch), 0);
	ck_assert_uint_eq(ch.added, 1);
	ck_assert_uint_eq(ch.removed, 1);
	ck_assert_uint_eq(manifest_get(&s.manifest, "grown")->size, 3);
	ck_assert_uint_eq(manifest_get(&s.manifest, "grown")->mtime, 100);
	ck_assert_str_eq(manifest_get(&s.manifest, "kept")->owners.v[0], "pkg");
	ck_assert_ptr_null(manifest_get(&s.manifest, "gone"));
	ck_assert_int_eq(manifest_get(&s.manifest, "dev/console")->type, MF_CHR);
	ck_assert_uint_eq(manifest_get(&s.manifest, "d")->mode, 0750);
	ck_assert_int_eq(manifest_get(&s.manifest, "a-link")->type, MF_REG);
	e = manifest_get(&s.manifest, "d/b");
	ck_assert_int_eq(e->type, MF_HARDLINK);
	ck_assert_str_eq(e->target, "a-link");
	ck_assert_str_eq(s.manifest.v[0]->path, "");
	manifest_release(&s.manifest);
	p = xasprintf("rm -rf '%s'", root);
	ck_assert_int_eq(system(p), 0);
	free(p);
}
END_TEST

static void sized(const char *root, const char *rel, off_t data, off_t size)
{
	char *p = xasprintf("%s/%s", root, rel), *buf = xcalloc(1, (size_t)data + 1);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	memset(buf, 'x', (size_t)data);
	ck_assert_int_eq(write(fd, buf, (size_t)data), data);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	close(fd);
	free(buf);
	free(p);
}

/*
 * What scripts left counts: entries past staging-entries and allocated bytes past staging-size
 * are refused (the manifest untouched); holes are free and a hardlink group counts once.
 */
START_TEST(reconcile_limits)
{
	char tmpl[] = "/tmp/mki-unit-reconcile.XXXXXX", *root = mkdtemp(tmpl), *p, *q;
	struct staging s = { .root = root };
	struct limits l = { 0 };
	int i;

	ck_assert_ptr_nonnull(root);
	manifest_init(&s.manifest);
	p = xasprintf("%s/flood", root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	free(p);
	for (i = 0; i < 20; i++) {
		p = xasprintf("flood/f%d", i);
		put(root, p, "");
		free(p);
	}
	l.v[LIMIT_STAGING_ENTRIES] = 21; /* the root, flood and 20 files: one too many */
	ck_assert_int_eq(reconcile_manifest(&s, 100, &l, NULL), -MKI_E_HOOK);
	ck_assert_uint_eq(s.manifest.n, 0);
	l.v[LIMIT_STAGING_ENTRIES] = 22;
	ck_assert_int_eq(reconcile_manifest(&s, 100, &l, NULL), 0);
	ck_assert_uint_eq(s.manifest.n, 22);
	l.v[LIMIT_STAGING_ENTRIES] = 0; /* the default */
	l.v[LIMIT_STAGING_SIZE] = 4 << 20;
	sized(root, "sparse", 4096, 1 << 30); /* 1 GiB, a block of it allocated */
	sized(root, "big", 3 << 20, 3 << 20);
	p = xasprintf("%s/big", root);
	q = xasprintf("%s/flood/big-link", root);
	ck_assert_int_eq(link(p, q), 0);
	free(q);
	ck_assert_int_eq(reconcile_manifest(&s, 100, &l, NULL), 0);
	q = xasprintf("%s/big2", root);
	ck_assert_int_eq(link(p, q), 0); /* a third name: still counted once */
	free(q);
	ck_assert_int_eq(reconcile_manifest(&s, 100, &l, NULL), 0);
	sized(root, "more", 2 << 20, 2 << 20);
	ck_assert_int_eq(reconcile_manifest(&s, 100, &l, NULL), -MKI_E_HOOK);
	ck_assert_ptr_null(manifest_get(&s.manifest, "more"));
	manifest_release(&s.manifest);
	free(p);
	p = xasprintf("rm -rf '%s'", root);
	ck_assert_int_eq(system(p), 0);
	free(p);
}
END_TEST

Suite *reconcile_suite(void)
{
	Suite *s = suite_create("reconcile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, reconcile_tree);
	tcase_add_test(tc, reconcile_limits);
	suite_add_tcase(s, tc);
	return s;
}
