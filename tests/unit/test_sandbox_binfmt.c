#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debian/arch.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"
#include "sandboxed.h"

START_TEST(refused_before_the_namespace)
{
	log_set_level(LOG_QUIET);
	ck_assert_int_eq(sandbox_add_arch("nonesuch"), -MKI_E_SANDBOX);
	ck_assert_int_eq(sandbox_add_arch(arch_host()), 0); /* native: nothing to register */
	ck_assert_int_eq(sandbox_arch_emulated(arch_host()), 0);
	ck_assert_int_eq(sandbox_add_arch("riscv64"), -MKI_E_SANDBOX);
	ck_assert_int_eq(sandbox_arch_emulated("riscv64"), 0);
	ck_assert_int_eq(sandbox_set_interpreter("/bin/true"), -MKI_E_SANDBOX);
	ck_assert_int_eq(sandbox_arch_emulated("nonesuch"), 0);
}
END_TEST

/* The line binfmt_misc shows for an entry, e.g. "interpreter /usr/bin/qemu-arm-static". */
static char *entry_field(const char *name, const char *field)
{
	char path[256], *text, *p, *value = NULL;

	snprintf(path, sizeof(path), "%s/%s", BINFMT_DIR, name);
	text = unit_read("/", path);
	if (!text)
		return NULL;
	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, field, strlen(field)) && p[strlen(field)] == ' ') {
			p += strlen(field) + 1;
			value = strndup(p, strcspn(p, "\n"));
			break;
		}
	free(text);
	return value;
}

static int count_entries(void)
{
	DIR *d = opendir(BINFMT_DIR);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "mkimage-", 8);
	closedir(d);
	return n;
}

static void field_is(const char *name, const char *field, const char *want)
{
	char *v = entry_field(name, field);

	ck_assert_msg(v && !strcmp(v, want), "%s: %s is '%s', want '%s'", name, field,
		      v ? v : "(none)", want);
	free(v);
}

/* Whether this kernel gives the build namespace a binfmt_misc of its own (Linux >= 6.7). */
static int private_binfmt(void)
{
	int st = 0;
	pid_t pid;

	if (!unit_sandbox_usable())
		return 0;
	pid = fork();
	if (pid == 0) {
		struct sandbox_opts o = { .allow_single_id = 1 };

		log_set_level(LOG_QUIET);
		_exit(!sandbox_enter(&o) && sandbox_get()->binfmt_private ? 0 : 1);
	}
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
}

START_TEST(registers_once_per_elf_machine)
{
	char *qemu = proc_which("qemu-arm-static"), *magic;

	unit_sandbox_enter();
	ck_assert_int_eq(count_entries(), 0);
	ck_assert_int_eq(sandbox_add_arch("armhf"), 0);
	field_is("mkimage-qemu-arm", "interpreter", qemu);
	field_is("mkimage-qemu-arm", "flags:", "PF");
	magic = entry_field("mkimage-qemu-arm", "magic");
	ck_assert_str_eq(magic, "7f454c4601010100000000000000000002002800");
	free(magic);
	/* armel shares the entry; both count as emulated; arm64 is not */
	ck_assert_int_eq(sandbox_add_arch("armel"), 0);
	ck_assert_int_eq(count_entries(), 1);
	ck_assert_int_eq(sandbox_arch_emulated("armel"), 1);
	ck_assert_int_eq(sandbox_arch_emulated("armhf"), 1);
	ck_assert_int_eq(sandbox_arch_emulated("arm64"), 0);
	ck_assert_int_eq(sandbox_arch_emulated(arch_host()), 0);
	free(qemu);
}
END_TEST

/* ppc64el and ppc64 share ELF machine and class, not byte order: one is not the other. */
START_TEST(byte_order_tells_entries_apart)
{
	unit_sandbox_enter();
	ck_assert_int_eq(sandbox_add_arch("ppc64el"), 0);
	ck_assert_int_eq(sandbox_arch_emulated("ppc64el"), 1);
	ck_assert_int_eq(sandbox_arch_emulated("ppc64"), 0);
	ck_assert_int_eq(sandbox_add_arch("ppc64"), 0);
	ck_assert_int_eq(count_entries(), 2);
	ck_assert_int_eq(sandbox_arch_emulated("ppc64"), 1);
}
END_TEST

START_TEST(interpreter_swapped_and_back)
{
	char *qemu = proc_which("qemu-arm-static");

	unit_sandbox_enter();
	ck_assert_int_eq(sandbox_add_arch("armhf"), 0);
	/* flag F opens the interpreter at registration: it must exist */
	ck_assert_int_eq(sandbox_set_interpreter("/bin/true"), 0);
	field_is("mkimage-qemu-arm", "interpreter", "/bin/true");
	field_is("mkimage-qemu-arm", "flags:", "PF");
	ck_assert_int_eq(count_entries(), 1);
	ck_assert_int_eq(sandbox_set_interpreter(NULL), 0);
	field_is("mkimage-qemu-arm", "interpreter", qemu);
	free(qemu);
}
END_TEST

START_TEST(missing_emulator_is_named)
{
	char logf[] = "/tmp/mki-unit-log-XXXXXX", *text;

	unit_sandbox_enter();
	setenv("PATH", "/nonexistent", 1);
	unit_log_capture(logf);
	ck_assert_int_eq(sandbox_add_arch("riscv64"), -MKI_E_SANDBOX);
	text = unit_log_text(logf);
	ck_assert_ptr_nonnull(strstr(text, "cannot run riscv64 binaries: 'qemu-riscv64-static' not "
					   "found; install the 'qemu-user-static' package"));
	free(text);
	ck_assert_int_eq(sandbox_arch_emulated("riscv64"), 0);
	ck_assert_int_eq(count_entries(), 0);
	unlink(logf);
}
END_TEST

Suite *sandbox_binfmt_suite(void)
{
	Suite *s = suite_create("sandbox_binfmt");
	TCase *tc = tcase_create("sandbox_binfmt");
	char *arm = proc_which("qemu-arm-static"), *ppc = proc_which("qemu-ppc64le-static");
	char *ppcbe = proc_which("qemu-ppc64-static");
	int private = private_binfmt();

	tcase_add_test(tc, refused_before_the_namespace);
	if (!private) {
		fprintf(stderr, "SKIP: sandbox_binfmt: no private binfmt_misc (Linux >= 6.7)\n");
	} else if (!arm || !ppc || !ppcbe) {
		fprintf(stderr, "SKIP: sandbox_binfmt: qemu-user-static is not installed\n");
	} else {
		tcase_add_test(tc, registers_once_per_elf_machine);
		tcase_add_test(tc, byte_order_tells_entries_apart);
		tcase_add_test(tc, interpreter_swapped_and_back);
	}
	if (private)
		tcase_add_test(tc, missing_emulator_is_named);
	free(arm);
	free(ppc);
	free(ppcbe);
	suite_add_tcase(s, tc);
	return s;
}
