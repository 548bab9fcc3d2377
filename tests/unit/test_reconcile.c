#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/reconcile.h"

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
	struct stage s = { .root = root };
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

Suite *reconcile_suite(void)
{
	Suite *s = suite_create("reconcile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, reconcile_tree);
	suite_add_tcase(s, tc);
	return s;
}
