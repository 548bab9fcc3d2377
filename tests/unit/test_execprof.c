#include <check.h>
#include <string.h>

#include "configure/execprof.h"

static void parse(struct execprof *p, const char *text)
{
	execprof_parse(p, text, strlen(text));
}

START_TEST(sums_per_program_and_way)
{
	struct execprof p = { 0 };

	parse(&p, "emulated 300000 250000 /usr/bin/cpio\n"
		  "native 1000 800 /usr/bin/sed\n"
		  "emulated 100000 50000 /usr/bin/cpio\n"
		  "emulated 2000 1000 /usr/bin/sed\n");
	ck_assert_uint_eq(p.n, 3);
	ck_assert_uint_eq(p.execs, 4);
	ck_assert_uint_eq(p.native_execs, 1);
	ck_assert_uint_eq(p.cpu_us, 301800);
	ck_assert_uint_eq(p.malformed, 0);
	/* the py_compile guard's lines in the same record are not the profile's (accel_python.c) */
	parse(&p, "python /usr/lib/python3/dist-packages/x.py\n");
	ck_assert_uint_eq(p.execs, 4);
	ck_assert_uint_eq(p.malformed, 0);
	execprof_sort(&p);
	ck_assert_str_eq(p.v[0].path, "/usr/bin/cpio");
	ck_assert_uint_eq(p.v[0].count, 2);
	ck_assert_uint_eq(p.v[0].wall_us, 400000);
	ck_assert_uint_eq(p.v[0].cpu_us, 300000);
	ck_assert_int_eq(p.v[0].native, 0);
	/* The same program natively and emulated: two entries. */
	ck_assert_str_eq(p.v[1].path, "/usr/bin/sed");
	ck_assert_int_eq(p.v[1].native, 0);
	ck_assert_str_eq(p.v[2].path, "/usr/bin/sed");
	ck_assert_int_eq(p.v[2].native, 1);
	execprof_release(&p);
}
END_TEST

START_TEST(sort_breaks_ties_by_wall_then_path)
{
	struct execprof p = { 0 };

	parse(&p, "native 5 7 /b\nnative 9 7 /c\nnative 5 7 /a\n");
	execprof_sort(&p);
	ck_assert_str_eq(p.v[0].path, "/c");
	ck_assert_str_eq(p.v[1].path, "/a");
	ck_assert_str_eq(p.v[2].path, "/b");
	execprof_release(&p);
}
END_TEST

/* Anything a script may write into the record: skipped and counted, never shown raw. */
START_TEST(hostile_lines_are_skipped)
{
	static const char *const bad[] = {
		"native 1 2 /bin/a b\n",          /* a space in the path */
		"native 1 2 /bin/\x1b[2Jx\n",     /* a terminal escape */
		"native 1 2 /bin/\\x4\n",         /* a cut escape */
		"native 1 2 /bin/\\q00\n",        /* not \xHH */
		"native 1 2 /bin/\\xZZ\n",        /* not hex */
		"nativ 1 2 /bin/a\n",             /* unknown way */
		"native -1 2 /bin/a\n",           /* not a number */
		"native 12345678901234567890 2 /a\n", /* too many digits */
		"native 1 2 \n",                  /* no path */
		"native 1 2\n",                   /* no path at all */
		"emulated 1 2 /bin/\xc3\xa9\n",   /* raw UTF-8 */
		"native 1 2 /bin/a",              /* no newline: cut at the bound */
	};
	struct execprof p = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(&p, bad[i]);
		ck_assert_msg(p.n == 0 && p.malformed == i + 1, "accepted: %s", bad[i]);
	}
	parse(&p, "native 1 2 /bin/a\\x20b\\x5cc\n");
	ck_assert_uint_eq(p.n, 1);
	ck_assert_str_eq(p.v[0].path, "/bin/a\\x20b\\x5cc");
	execprof_release(&p);
}
END_TEST

START_TEST(nul_bytes_do_not_hide_a_line)
{
	static const char text[] = "native 1 2 /bin/a\0b\nnative 3 4 /bin/c\n";
	struct execprof p = { 0 };

	execprof_parse(&p, text, sizeof(text) - 1);
	ck_assert_uint_eq(p.malformed, 1);
	ck_assert_uint_eq(p.n, 1);
	ck_assert_str_eq(p.v[0].path, "/bin/c");
	execprof_release(&p);
}
END_TEST

Suite *execprof_suite(void)
{
	Suite *s = suite_create("execprof");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sums_per_program_and_way);
	tcase_add_test(tc, sort_breaks_ties_by_wall_then_path);
	tcase_add_test(tc, hostile_lines_are_skipped);
	tcase_add_test(tc, nul_bytes_do_not_hide_a_line);
	suite_add_tcase(s, tc);
	return s;
}
