#include <check.h>
#include <stdio.h>
#include <string.h>

#include "debian/relation.h"
#include "lib/buf.h"
#include "lib/err.h"

/*
 * Each case: a field value and what the reader makes of it, one relation a line as
 * "name[:arch][ op version]", an alternative prefixed with "| ", or "ERR why" where it stops.
 */
static const struct {
	const char *in, *want;
} cases[] = {
	{ "", "" },
	{ "  ", "" },
	{ "libc6", "libc6\n" },
	{ "libc6 (>= 2.36), zlib1g", "libc6 >= 2.36\nzlib1g\n" },
	{ "a (<< 1), b (<= 2), c (= 3), d (>= 4), e (>> 5)",
	  "a << 1\nb <= 2\nc = 3\nd >= 4\ne >> 5\n" },
	{ "a (< 1), b (> 2)", "a <= 1\nb >= 2\n" }, /* obsolete forms, as dpkg reads them */
	{ "a(>=1)", "a >= 1\n" },
	{ "a ( >=  1:2.0-3~b1 )", "a >= 1:2.0-3~b1\n" },
	{ "mail-transport-agent | postfix (>= 3), exim4",
	  "mail-transport-agent\n| postfix >= 3\nexim4\n" },
	{ "a|b|c", "a\n| b\n| c\n" },
	{ "python3:any (>= 3.11~), perl:native, libfoo:armel",
	  "python3:any >= 3.11~\nperl:native\nlibfoo:armel\n" },
	{ "a,\n b,\n\tc", "a\nb\nc\n" },
	{ "a, , b,", "a\nb\n" },   /* empty groups carry nothing */
	{ ",a,,b", "a\nb\n" },
	{ "gcc [amd64 i386], make <!nocheck> <stage1>", "gcc\nmake\n" },
	{ "a (>= 1) [!armel] <!cross>", "a >= 1\n" },
	{ "a |", "a\nERR missing package name\n" },
	{ "| a", "ERR missing package name\n" },
	{ "a | , b", "a\nERR missing package name\n" },
	{ "a (>= )", "ERR missing version\n" },
	{ "b (>= ", "ERR missing version\n" },
	{ "a (>= 1", "ERR missing ')' after the version\n" },
	{ "a (>= 1 2)", "ERR missing ')' after the version\n" },
	{ "a (~ 1)", "ERR unknown version operator\n" },
	{ "a:", "ERR missing architecture after ':'\n" },
	{ "a b", "ERR unexpected text after a relation\n" },
	{ "ok, a (= 1) junk", "ok\nERR unexpected text after a relation\n" },
	{ "a [amd64", "ERR unterminated '['\n" },
	{ "a [amd64, i386]", "ERR unterminated '['\n" },
	{ "a <stage1", "ERR unterminated '<'\n" },
};

static void describe(const char *in, struct buf *out)
{
	struct relation_iter it;
	struct relation r;
	int ret;

	relation_iter_init(&it, in, strlen(in));
	while ((ret = relation_next(&it, &r)) > 0) {
		static const char *const ops[] = { "", "<<", "<=", "=", ">=", ">>" };

		buf_addf(out, "%s%.*s", r.alt ? "| " : "", (int)r.name_len, r.name);
		if (r.arch)
			buf_addf(out, ":%.*s", (int)r.arch_len, r.arch);
		if (r.op != RELATION_ANY)
			buf_addf(out, " %s %.*s", ops[r.op], (int)r.version_len, r.version);
		buf_adds(out, "\n");
	}
	if (ret < 0) {
		ck_assert_int_eq(ret, -MKI_E_PARSE);
		buf_addf(out, "ERR %s\n", it.why);
	}
	/* after the end or an error, the reader stays there */
	ck_assert_int_eq(relation_next(&it, &r), 0);
}

START_TEST(table)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf out = { 0 };

		buf_adds(&out, "");
		describe(cases[i].in, &out);
		ck_assert_msg(!strcmp(out.p, cases[i].want), "'%s': got\n%swanted\n%s", cases[i].in,
			      out.p, cases[i].want);
		buf_release(&out);
	}
}
END_TEST

/* Every part is bounded: a name, a version or a qualifier at its limit is refused. */
START_TEST(bounds)
{
	char big[2 * RELATION_NAME_MAX], v[3 * RELATION_NAME_MAX];
	struct buf out = { 0 };

	memset(big, 'a', sizeof(big));
	big[RELATION_NAME_MAX - 1] = 0;
	buf_adds(&out, "");
	describe(big, &out); /* 255 bytes: accepted */
	ck_assert_uint_eq(out.len, RELATION_NAME_MAX);
	big[RELATION_NAME_MAX - 1] = 'a';
	big[RELATION_NAME_MAX] = 0;
	out.len = 0;
	describe(big, &out);
	ck_assert_str_eq(out.p, "ERR package name too long\n");

	snprintf(v, sizeof(v), "a (= %s)", big);
	out.len = 0;
	describe(v, &out);
	ck_assert_str_eq(out.p, "ERR version too long\n");

	big[RELATION_ARCH_MAX] = 0;
	snprintf(v, sizeof(v), "a:%s", big);
	out.len = 0;
	describe(v, &out);
	ck_assert_str_eq(out.p, "ERR architecture qualifier too long\n");
	buf_release(&out);
}
END_TEST

/* The value need not be NUL-terminated: nothing past `len` is read. */
START_TEST(reads_only_len_bytes)
{
	struct relation_iter it;
	struct relation r;
	const char *v = "a (>= 1), b";

	relation_iter_init(&it, v, 4);
	ck_assert_int_eq(relation_next(&it, &r), -MKI_E_PARSE); /* "a (>" */
	relation_iter_init(&it, v, 1);
	ck_assert_int_eq(relation_next(&it, &r), 1);
	ck_assert_uint_eq(r.name_len, 1);
	ck_assert_int_eq(relation_next(&it, &r), 0);
}
END_TEST

START_TEST(operators_hold)
{
	static const struct {
		enum relation_op op;
		int lt, eq, gt;
	} t[] = {
		{ RELATION_ANY, 1, 1, 1 }, { RELATION_LT, 1, 0, 0 }, { RELATION_LE, 1, 1, 0 },
		{ RELATION_EQ, 0, 1, 0 },  { RELATION_GE, 0, 1, 1 }, { RELATION_GT, 0, 0, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ck_assert_int_eq(relation_op_holds(t[i].op, -7), t[i].lt);
		ck_assert_int_eq(relation_op_holds(t[i].op, 0), t[i].eq);
		ck_assert_int_eq(relation_op_holds(t[i].op, 3), t[i].gt);
	}
}
END_TEST

Suite *relation_suite(void)
{
	Suite *s = suite_create("relation");
	TCase *tc = tcase_create("relation");

	tcase_add_test(tc, table);
	tcase_add_test(tc, bounds);
	tcase_add_test(tc, reads_only_len_bytes);
	tcase_add_test(tc, operators_hold);
	suite_add_tcase(s, tc);
	return s;
}
