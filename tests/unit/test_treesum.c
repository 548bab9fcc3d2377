#include <check.h>
#include <stdio.h>
#include <string.h>

#include "tree/treesum.h"

static void top(const struct treesum *t, int by, const char *want)
{
	struct buf b = { 0 };

	treesum_top(t, by, 3, &b);
	ck_assert_str_eq(b.p ? b.p : "", want);
	buf_release(&b);
}

/* Entries go to their directory cut to three components; the largest are named first. */
START_TEST(groups)
{
	struct treesum t;
	char rel[64];
	int i;

	treesum_init(&t, NULL);
	treesum_add(&t, "", 1, 4096);
	treesum_add(&t, "etc", 1, 4096);
	treesum_add(&t, "etc/passwd", 1, 4096);
	for (i = 0; i < 5; i++) {
		snprintf(rel, sizeof(rel), "var/tmp/flood/d%d/f", i);
		treesum_add(&t, rel, 1, 0);
	}
	treesum_add(&t, "usr/share/doc/x/copyright", 1, 3 << 20);
	treesum_add(&t, "usr/share/doc/y/copyright", 1, 1 << 20);
	ck_assert_uint_eq(t.entries, 10);
	ck_assert_uint_eq(t.bytes, (4u << 20) + 3 * 4096);
	top(&t, LIMIT_STAGING_ENTRIES, "'/var/tmp/flood' (5 entries), '/' (2 entries), "
	    "'/usr/share/doc' (2 entries)");
	top(&t, LIMIT_STAGING_SIZE, "'/usr/share/doc' (4.0 MiB), '/' (0.0 MiB), '/etc' (0.0 MiB)");
	ck_assert_int_eq(treesum_over(&t), -1);
	treesum_release(&t);
}
END_TEST

/* Each limit is a refusal once passed, not when reached. */
START_TEST(limits)
{
	struct limits l = { 0 };
	struct treesum t;

	l.v[LIMIT_STAGING_ENTRIES] = 3;
	l.v[LIMIT_STAGING_SIZE] = 8192;
	treesum_init(&t, &l);
	ck_assert_int_eq(treesum_add(&t, "", 1, 4096), -1);
	ck_assert_int_eq(treesum_add(&t, "a", 1, 4096), -1);
	ck_assert_int_eq(treesum_add(&t, "b", 1, 0), -1);
	ck_assert_int_eq(treesum_add(&t, "c", 1, 0), LIMIT_STAGING_ENTRIES);
	treesum_release(&t);
	treesum_init(&t, &l);
	ck_assert_int_eq(treesum_add(&t, "a", 0, 8192), -1);
	ck_assert_int_eq(treesum_add(&t, "b", 0, 1), LIMIT_STAGING_SIZE);
	treesum_release(&t);
}
END_TEST

/* A script names the directories: their names are printed escaped. */
START_TEST(escaped)
{
	struct treesum t;

	treesum_init(&t, NULL);
	treesum_add(&t, "x\033[2J\n/f", 1, 0);
	top(&t, LIMIT_STAGING_ENTRIES, "'/x\\x1b[2J\\n' (1 entries)");
	treesum_release(&t);
}
END_TEST

/* However many directories a tree has, the groups stay bounded; every entry is still counted. */
START_TEST(bounded)
{
	struct treesum t;
	char rel[64];
	int i;

	treesum_init(&t, NULL);
	for (i = 0; i < 5000; i++) {
		snprintf(rel, sizeof(rel), "a/b/c%d/f", i);
		treesum_add(&t, rel, 1, 0);
	}
	for (i = 0; i < 500; i++) {
		snprintf(rel, sizeof(rel), "top%d/b/c/f", i);
		treesum_add(&t, rel, 1, 0);
	}
	ck_assert_uint_eq(t.entries, 5500);
	ck_assert_uint_le(t.n_groups, 4096 + 256 + 1);
	top(&t, LIMIT_STAGING_ENTRIES, "'/a' (904 entries), '/' (245 entries), "
	    "'/a/b/c0' (1 entries)");
	treesum_release(&t);
}
END_TEST

Suite *treesum_suite(void)
{
	Suite *s = suite_create("treesum");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, groups);
	tcase_add_test(tc, limits);
	tcase_add_test(tc, escaped);
	tcase_add_test(tc, bounded);
	suite_add_tcase(s, tc);
	return s;
}
