/*
 * libconfig's traps found in a recipe's text: adjacent strings (a missing comma), a group list
 * written [ { } ], a string list written { "" }; comments and escapes never trigger them.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "recipe/recipe_lint.h"

/* The lint's verdict on `text` and what it logged (NUL-terminated, into `msg`). */
static int lint(const char *text, char *msg, size_t n)
{
	char file[] = "/tmp/test-lint-XXXXXX";
	int fd = mkstemp(file), saved = dup(2), ret;
	ssize_t got;

	ck_assert_int_ge(fd, 0);
	log_set_level(LOG_ERROR);
	fflush(stderr);
	dup2(fd, 2);
	ret = recipe_lint_text("r.cfg", text);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	got = pread(fd, msg, n - 1, 0);
	msg[got > 0 ? got : 0] = 0;
	close(fd);
	unlink(file);
	return ret;
}

START_TEST(adjacent_strings)
{
	char msg[512];

	ck_assert_int_eq(lint("packages = { install = [ \"a\",\n \"systemd-sysv\"\n  \"busybox\" ]; };",
			      msg, sizeof(msg)), -MKI_E_RECIPE);
	ck_assert_ptr_nonnull(strstr(msg, "r.cfg:3: missing comma between \"systemd-sysv\" and "
				     "\"busybox\"?"));
	/* only comments between them: still adjacent */
	ck_assert_int_eq(lint("x = [ \"a\" # one\n // two\n /* three\n */ \"b\" ];", msg,
			      sizeof(msg)), -MKI_E_RECIPE);
	ck_assert_ptr_nonnull(strstr(msg, "r.cfg:4: missing comma between \"a\" and \"b\""));
	/* an escaped quote does not end the first string */
	ck_assert_int_eq(lint("x = \"a\\\" \" \"b\";", msg, sizeof(msg)), -MKI_E_RECIPE);
	ck_assert_ptr_nonnull(strstr(msg, "between \"a\\\" \" and \"b\""));
	/* a long one is shortened */
	ck_assert_int_eq(lint("x = \"0123456789012345678901234567890123456789XYZ\" \"b\";", msg,
			      sizeof(msg)), -MKI_E_RECIPE);
	ck_assert_ptr_nonnull(strstr(msg, "\"0123456789012345678901234567890123456789...\""));
}
END_TEST

START_TEST(no_false_alarms)
{
	char msg[512];

	ck_assert_int_eq(lint("name = \"t\"; # \"a\" \"b\"\n// \"c\" \"d\"\n/* \"e\" \"f\" */\n"
			      "packages = { install = [ \"a\", \"b\" ]; };\n"
			      "hooks = ( { name = \"x\"; script = \"echo \\\"q\\\" \\\"r\\\"\"; } );\n"
			      "@include \"a.cfg\"\n@include \"b.cfg\"\n"
			      "disk = { partitions = ( { name = \"r\"; }, { name = \"s\"; } ); };\n"
			      "v = [ 1, 2 ]; w = ( \"a\", ( \"b\" ) ); u = \"/*\"; t = \"x\";",
			      msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, "");
	ck_assert_int_eq(lint("", msg, sizeof(msg)), 0);
	ck_assert_int_eq(lint("x = \"unterminated", msg, sizeof(msg)), 0);
	ck_assert_int_eq(lint("/* unterminated", msg, sizeof(msg)), 0);
}
END_TEST

START_TEST(brackets)
{
	char msg[512];

	ck_assert_int_eq(lint("name = \"t\";\ndisk = {\n  partitions = [\n { name = \"r\"; } ];\n};",
			      msg, sizeof(msg)), -MKI_E_RECIPE);
	ck_assert_ptr_nonnull(strstr(msg, "r.cfg:3: 'partitions' is a list of groups: write "
				     "( { ... }, { ... } ), not [ ... ]"));
	ck_assert_int_eq(lint("hooks : [ /* c */ { name = \"x\"; } ];", msg, sizeof(msg)),
			 -MKI_E_RECIPE);
	ck_assert_ptr_nonnull(strstr(msg, "r.cfg:1: 'hooks' is a list of groups"));
	ck_assert_int_eq(lint("x = [ ( \"a\" ) ];", msg, sizeof(msg)), -MKI_E_RECIPE);
	ck_assert_ptr_nonnull(strstr(msg, "'x' holds lists: write ( ( ... ), ( ... ) )"));
	ck_assert_int_eq(lint("packages = {\n install = { \"a\", \"b\" }; };", msg, sizeof(msg)),
			 -MKI_E_RECIPE);
	ck_assert_ptr_nonnull(strstr(msg, "r.cfg:2: 'install' is a list of strings: write "
				     "[ \"a\", \"b\" ], not { ... }"));
	ck_assert_int_eq(lint("[ { } ]", msg, sizeof(msg)), -MKI_E_RECIPE);
	ck_assert_ptr_nonnull(strstr(msg, "r.cfg:1: this list is a list of groups"));
}
END_TEST

Suite *recipe_lint_suite(void)
{
	Suite *s = suite_create("recipe_lint");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, adjacent_strings);
	tcase_add_test(tc, no_false_alarms);
	tcase_add_test(tc, brackets);
	suite_add_tcase(s, tc);
	return s;
}
