#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "hooks.h"
#include "sandbox.h"

START_TEST(tail_lines)
{
	ck_assert_str_eq(sandbox_tail("a\nb\nc\n", 2), "b\nc\n");
	ck_assert_str_eq(sandbox_tail("a\nb\nc", 1), "c");
	ck_assert_str_eq(sandbox_tail("a\nb\nc\n", 10), "a\nb\nc\n");
	ck_assert_str_eq(sandbox_tail("", 3), "");
	ck_assert_str_eq(sandbox_tail(NULL, 3), "");
}
END_TEST

/* The entry DESIGN.md section 4 proved for arm (armel and armhf), and the big-endian layout. */
START_TEST(binfmt_lines)
{
	char *l = sandbox_binfmt_line(arch_find("armhf"), "/usr/bin/qemu-arm-static");

	ck_assert_str_eq(l, ":mkimage-qemu-arm:M::"
			    "\\x7f\\x45\\x4c\\x46\\x01\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
			    "\\x00\\x00\\x02\\x00\\x28\\x00:"
			    "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff"
			    "\\xff\\xff\\xfe\\xff\\xff\\xff:/usr/bin/qemu-arm-static:FP");
	free(l);
	l = sandbox_binfmt_line(arch_find("riscv64"), "/q");
	ck_assert_ptr_nonnull(strstr(l, "\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01"));
	ck_assert_ptr_nonnull(strstr(l, "\\x02\\x00\\xf3\\x00:"));
	free(l);
	l = sandbox_binfmt_line(arch_find("s390x"), "/q");
	ck_assert_ptr_nonnull(strstr(l, "\\x02\\x02\\x01\\x00"));
	ck_assert_ptr_nonnull(strstr(l, "\\x00\\x02\\x00\\x16:")); /* e_type 2, e_machine 22, BE */
	ck_assert_ptr_nonnull(strstr(l, "\\xff\\xfe\\xff\\xff:/q:FP"));
	free(l);
}
END_TEST

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
	char tmpl[] = "/tmp/mki-unit-hooks.XXXXXX", *root = mkdtemp(tmpl), *p, *q;
	struct stage s = { .root = root };
	struct hooks_changes ch;
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
	ck_assert_int_eq(hooks_reconcile(&s, 100, &ch), 0);
	ck_assert_uint_eq(ch.added, 6); /* "", kept, grown, d, d/b, a-link */
	strv_push(&manifest_get(&s.manifest, "kept")->owners, "pkg");
	e = manifest_add(&s.manifest, "dev/console");
	e->type = MF_CHR;
	e->major = 5;
	e->minor = 1;
	manifest_add(&s.manifest, "gone")->type = MF_REG;
	put(root, "grown", "xyz");
	put(root, "new", "n");
	ck_assert_int_eq(hooks_reconcile(&s, 100, &ch), 0);
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

Suite *hooks_suite(void)
{
	Suite *s = suite_create("hooks");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, tail_lines);
	tcase_add_test(tc, binfmt_lines);
	tcase_add_test(tc, reconcile_tree);
	suite_add_tcase(s, tc);
	return s;
}
