#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/envfile.h"
#include "lib/err.h"
#include "lib/log.h"

#define F "/etc/default/u-boot"

static const char *const KV[] = { "U_BOOT_PARAMETERS", "console=ttyS0 ro \"q\" $x `y` \\z",
				   "U_BOOT_ROOT", "root=PARTUUID=ab", NULL };

/* What /bin/sh prints for `. FILE; printf %s "$KEY"` (static buffer), or NULL if it failed. */
static const char *sh_value(const char *text, size_t len, const char *key)
{
	static char out[1 << 16];
	char path[] = "/tmp/mki-envfile-XXXXXX", *cmd;
	int fd = mkstemp(path);
	size_t n;
	FILE *p;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	cmd = malloc(strlen(path) + strlen(key) + 64);
	sprintf(cmd, "/bin/sh -c '. %s; printf %%s \"$%s\"' 2>/dev/null", path, key);
	p = popen(cmd, "r");
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	free(cmd);
	unlink(path);
	return pclose(p) == 0 ? out : NULL;
}

/* Rewrite `old`; sh must then read exactly KV's values, and `keep` as it read it before. */
static const char *set_and_check(const char *old, const char *keep)
{
	static char text[1 << 16];
	struct buf b = { 0 };
	char before[4096] = "";

	if (keep)
		snprintf(before, sizeof(before), "%s", sh_value(old, strlen(old), keep));
	ck_assert_int_eq(envfile_set(old, strlen(old), F, NULL, KV, &b), 0);
	ck_assert_str_eq(sh_value(b.p, b.len, "U_BOOT_PARAMETERS"), KV[1]);
	ck_assert_str_eq(sh_value(b.p, b.len, "U_BOOT_ROOT"), KV[3]);
	if (keep)
		ck_assert_str_eq(sh_value(b.p, b.len, keep), before);
	snprintf(text, sizeof(text), "%s", b.p);
	buf_release(&b);
	return text;
}

/* The red team's file: a quoted value over three lines with ESC bytes; all of it replaced. */
START_TEST(multiline_value_replaced_whole)
{
	const char *old = "# head\nU_BOOT_PARAMETERS=\"quiet\n\033[2Jforged\nmore\" # note\n"
			  "U_BOOT_TIMEOUT='5'\n";
	const char *got = set_and_check(old, "U_BOOT_TIMEOUT");

	ck_assert_str_eq(got, "# head\nU_BOOT_PARAMETERS=\"console=ttyS0 ro \\\"q\\\" \\$x \\`y\\` "
			      "\\\\z\"\nU_BOOT_TIMEOUT='5'\nU_BOOT_ROOT=\"root=PARTUUID=ab\"\n");
	ck_assert_ptr_null(strchr(got, '\033'));
}
END_TEST

/* Continuations, single quotes over lines, a later assignment (the one sh keeps) dropped. */
START_TEST(continuations_and_repeats)
{
	const char *old = "U_BOOT_ROOT=root=\\\n/dev/sda1\nX='a\nb'\\\n'c'\n"
			  "U_BOOT_PARAMETERS=one\\ two\nU_BOOT_PARAMETERS='later wins in sh'\n"
			  "  # U_BOOT_ROOT=\"a comment\" stays\n";
	const char *got = set_and_check(old, "X");

	ck_assert_str_eq(got, "U_BOOT_ROOT=\"root=PARTUUID=ab\"\nX='a\nb'\\\n'c'\n"
			      "U_BOOT_PARAMETERS=\"console=ttyS0 ro \\\"q\\\" \\$x \\`y\\` \\\\z\"\n"
			      "  # U_BOOT_ROOT=\"a comment\" stays\n");
}
END_TEST

/* CRLF lines: the key's whole line goes, the others keep their CR; no newline at the end. */
START_TEST(crlf_and_no_final_newline)
{
	const char *old = "A=1\r\nU_BOOT_ROOT=\"x\"\r\n#U_BOOT_PARAMETERS=\"ro\"\r\nB=2";
	const char *got = set_and_check(old, NULL);

	ck_assert_str_eq(got, "A=1\r\nU_BOOT_ROOT=\"root=PARTUUID=ab\"\n"
			      "U_BOOT_PARAMETERS=\"console=ttyS0 ro \\\"q\\\" \\$x \\`y\\` \\\\z\"\n"
			      "B=2\n");
}
END_TEST

/* Values as sh reads them; a computed one is NULL; statements that are not one assignment. */
START_TEST(parse_values)
{
	const char *t = "A=\"x\\\"y\\n\\$\"\nB='it''s'\nC=a\\ b#c # comment\nD=$(echo \")\")\n"
			"E=1; F=2\nexport G=3\nH=\"${I:-x}\"\n\n#J=1\n";
	struct envfile e = { 0 };

	ck_assert_int_eq(envfile_parse(t, strlen(t), F, &e), 0);
	ck_assert_uint_eq(e.n, 9);
	ck_assert_str_eq(e.v[0].value, "x\"y\\n$");
	ck_assert_str_eq(e.v[0].value, sh_value(t, strlen(t), "A"));
	ck_assert_str_eq(e.v[1].value, "its");
	ck_assert_str_eq(e.v[2].value, "a b#c");
	ck_assert_str_eq(e.v[2].value, sh_value(t, strlen(t), "C"));
	ck_assert_int_eq(e.v[3].kind, ENVFILE_ASSIGN);
	ck_assert_ptr_null(e.v[3].value);
	ck_assert_int_eq(e.v[4].kind, ENVFILE_OTHER);
	ck_assert_int_eq(e.v[5].kind, ENVFILE_OTHER);
	ck_assert_ptr_null(e.v[6].value);
	ck_assert_int_eq(e.v[7].kind, ENVFILE_BLANK);
	ck_assert_int_eq(e.v[8].kind, ENVFILE_COMMENT);
	ck_assert_str_eq(e.v[8].key, "J");
	ck_assert_uint_eq(e.v[8].line, 9);
	envfile_release(&e);
}
END_TEST

static void expect_refused(const char *t, size_t len)
{
	struct buf b = { 0 };
	struct envfile e = { 0 };

	ck_assert_int_eq(envfile_set(t, len, F, NULL, KV, &b), -MKI_E_IMAGE);
	buf_release(&b);
	ck_assert_int_eq(envfile_parse(t, len, F, &e), -MKI_E_IMAGE);
	ck_assert_uint_eq(e.n, 0);
}

/* What sh would not read as mkimage writes it is refused: unclosed quotes, NUL, nesting. */
START_TEST(hostile_refused)
{
	char deep[200];
	int i, fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	expect_refused("U_BOOT_PARAMETERS=\"ro\nquiet\n", 28);
	expect_refused("A='x\n", 5);
	expect_refused("A=1\nB=2\0hidden\n", 15);
	expect_refused("A=$(echo\n", 9);
	expect_refused("A=`echo\n", 8);
	for (i = 0; i < 60; i++)
		memcpy(deep + 2 * i, "$(", 2);
	expect_refused(deep, 120);
	close(fd);
}
END_TEST

/* A statement that may set the key another way (export, two commands, if) is refused. */
START_TEST(key_in_other_statement_refused)
{
	const char *bad[] = { "export U_BOOT_ROOT=x\n", "A=1; U_BOOT_ROOT=x\n",
			      "if true; then U_BOOT_PARAMETERS=x; fi\n", NULL };
	struct buf b = { 0 };
	int i, fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	for (i = 0; bad[i]; i++) {
		ck_assert_int_eq(envfile_set(bad[i], strlen(bad[i]), F, NULL, KV, &b), -MKI_E_IMAGE);
		buf_release(&b);
	}
	/* a name that only contains the key is another variable */
	ck_assert_int_eq(envfile_set("export MY_U_BOOT_ROOTS=1\n", 25, F, NULL, KV, &b), 0);
	buf_release(&b);
	close(fd);
}
END_TEST

/* A control character in a value mkimage would write is refused, not written. */
START_TEST(control_in_value_refused)
{
	const char *kv[] = { "U_BOOT_PARAMETERS", "ro\033[2J", NULL };
	struct buf b = { 0 };
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	ck_assert_int_eq(envfile_set(NULL, 0, F, "# head\n", kv, &b), -MKI_E_IMAGE);
	buf_release(&b);
	close(fd);
}
END_TEST

/* A 300 KiB line (a quoted value) and 20 000 statements: parsed and kept, in linear time. */
START_TEST(very_long_lines)
{
	size_t n = 300 << 10, i;
	char *t = malloc(n + 20 * 20000 + 64), *p = t;
	struct buf b = { 0 };

	p += sprintf(p, "U_BOOT_PARAMETERS=\"");
	memset(p, 'a', n);
	p += n;
	p += sprintf(p, "\"\n");
	for (i = 0; i < 20000; i++)
		p += sprintf(p, "K%zu='v'\n", i);
	ck_assert_int_eq(envfile_set(t, (size_t)(p - t), F, NULL, KV, &b), 0);
	ck_assert_uint_lt(b.len, (size_t)(p - t) - n + 200);
	ck_assert_ptr_nonnull(strstr(b.p, "\nK19999='v'\n"));
	buf_release(&b);
	free(t);
}
END_TEST

Suite *envfile_suite(void)
{
	Suite *s = suite_create("envfile");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, multiline_value_replaced_whole);
	tcase_add_test(tc, continuations_and_repeats);
	tcase_add_test(tc, crlf_and_no_final_newline);
	tcase_add_test(tc, parse_values);
	tcase_add_test(tc, hostile_refused);
	tcase_add_test(tc, key_in_other_statement_refused);
	tcase_add_test(tc, control_in_value_refused);
	tcase_add_test(tc, very_long_lines);
	suite_add_tcase(s, tc);
	return s;
}
