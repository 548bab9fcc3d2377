#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/accel.h"
#include "configure/execshim.h"
#include "debian/arch.h"

/* The first 20 bytes of an ELF header: class, byte order and e_machine, the rest zero. */
static void elf_file(char *path, unsigned cls, unsigned data, unsigned machine)
{
	unsigned char h[64] = { 0x7f, 'E', 'L', 'F', (unsigned char)cls, (unsigned char)data, 1 };
	int fd = mkstemp(path);

	h[data == 1 ? 18 : 19] = (unsigned char)(machine & 0xff);
	h[data == 1 ? 19 : 18] = (unsigned char)(machine >> 8);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, h, sizeof(h)), (ssize_t)sizeof(h));
	close(fd);
}

static void text_file(char *path, const char *text)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

START_TEST(elf_machine_in_either_byte_order)
{
	char le[] = "/tmp/mki-shim-le-XXXXXX", be[] = "/tmp/mki-shim-be-XXXXXX";
	char txt[] = "/tmp/mki-shim-txt-XXXXXX", shortf[] = "/tmp/mki-shim-short-XXXXXX";
	const struct arch *host = arch_find(arch_host());
	unsigned machine = 0, cls = 0;

	ck_assert_int_eq(execshim_elf_machine("/bin/sh", &machine, &cls), 0);
	ck_assert_uint_eq(machine, host->elf_machine);
	ck_assert_uint_eq(cls, host->elf_class);
	elf_file(le, 1, 1, 40); /* arm */
	ck_assert_int_eq(execshim_elf_machine(le, &machine, &cls), 0);
	ck_assert_uint_eq(machine, 40);
	ck_assert_uint_eq(cls, 1);
	elf_file(be, 2, 2, 22); /* s390x: big-endian */
	ck_assert_int_eq(execshim_elf_machine(be, &machine, &cls), 0);
	ck_assert_uint_eq(machine, 22);
	ck_assert_uint_eq(cls, 2);
	/* a script, a header cut short, nothing at all: no machine, the outputs untouched */
	machine = cls = 7;
	text_file(txt, "#!/bin/sh\nexit 0\n# long enough for a header\n");
	ck_assert_int_eq(execshim_elf_machine(txt, &machine, &cls), -1);
	text_file(shortf, "\177ELF\002\001\001");
	ck_assert_int_eq(execshim_elf_machine(shortf, &machine, &cls), -1);
	ck_assert_int_eq(execshim_elf_machine("/nonexistent/x", &machine, &cls), -1);
	ck_assert_uint_eq(machine, 7);
	ck_assert_uint_eq(cls, 7);
	unlink(le);
	unlink(be);
	unlink(txt);
	unlink(shortf);
}
END_TEST

static void table_line_native(FILE *t, const char *file, long nsec_delta, const char *flags,
			      const char *native)
{
	struct stat sb;

	ck_assert_int_eq(stat(file, &sb), 0);
	fprintf(t, "native %llu %llu %llu %llu %llu %s %s\n", (unsigned long long)sb.st_dev,
		(unsigned long long)sb.st_ino, (unsigned long long)sb.st_size,
		(unsigned long long)sb.st_mtim.tv_sec,
		(unsigned long long)(sb.st_mtim.tv_nsec + nsec_delta), flags, native);
}

START_TEST(lookup_matches_by_identity_and_machine)
{
	char prog[] = "/tmp/mki-shim-prog-XXXXXX", other[] = "/tmp/mki-shim-other-XXXXXX";
	char table[] = "/tmp/mki-shim-table-XXXXXX";
	struct execshim_hit hit = { 0 };
	FILE *t;
	int fd;

	elf_file(prog, 1, 1, 40);
	elf_file(other, 1, 1, 40);
	fd = mkstemp(table);
	ck_assert_int_ge(fd, 0);
	t = fdopen(fd, "w");
	fprintf(t, "loader /lib64/ld-linux-x86-64.so.2\nprofile /prof/record\n");
	fprintf(t, "qemu 183 2 /usr/bin/qemu-aarch64-static\nqemu 40 1 /usr/bin/qemu-arm-static\n");
	fprintf(t, "qemu 40 2 /wrong/class\n");
	table_line_native(t, other, 0, "any", "/native/other");
	table_line_native(t, prog, 1, "any", "/native/newer"); /* another mtime: another file */
	table_line_native(t, prog, 0, "any", "/native/prog");
	fclose(t);
	ck_assert_int_eq(execshim_lookup(table, prog, &hit), 0);
	ck_assert_str_eq(hit.loader, "/lib64/ld-linux-x86-64.so.2");
	ck_assert_str_eq(hit.profile, "/prof/record");
	ck_assert_str_eq(hit.qemu, "/usr/bin/qemu-arm-static");
	ck_assert_str_eq(hit.native, "/native/prog");
	ck_assert_int_eq(hit.only, EXECSHIM_ANY);

	/* dpkg's line: versions only */
	t = fopen(table, "w");
	fprintf(t, "qemu 40 1 /usr/bin/qemu-arm-static\n");
	table_line_native(t, prog, 0, "versions", "/native/dpkg");
	fclose(t);
	memset(&hit, 0, sizeof(hit));
	ck_assert_int_eq(execshim_lookup(table, prog, &hit), 0);
	ck_assert_str_eq(hit.native, "/native/dpkg");
	ck_assert_int_eq(hit.only, EXECSHIM_VERSIONS);
	ck_assert_str_eq(hit.loader, "");

	/* dracut-install's line: module mode only; a flag word this build does not know: no match */
	t = fopen(table, "w");
	table_line_native(t, prog, 0, "modules", "/native/dracut-install");
	table_line_native(t, other, 0, "newer-flag", "/native/other");
	fclose(t);
	memset(&hit, 0, sizeof(hit));
	ck_assert_int_eq(execshim_lookup(table, prog, &hit), 0);
	ck_assert_str_eq(hit.native, "/native/dracut-install");
	ck_assert_int_eq(hit.only, EXECSHIM_MODULES);
	memset(&hit, 0, sizeof(hit));
	ck_assert_int_eq(execshim_lookup(table, other, &hit), 0);
	ck_assert_str_eq(hit.native, "");

	/* no table, or a file that is no ELF program: -1 and nothing filled in */
	memset(&hit, 0, sizeof(hit));
	ck_assert_int_eq(execshim_lookup("/nonexistent/table", prog, &hit), -1);
	ck_assert_int_eq(execshim_lookup(table, table, &hit), -1);
	ck_assert_int_eq(execshim_lookup(table, "/nonexistent/prog", &hit), -1);
	ck_assert_str_eq(hit.qemu, "");
	ck_assert_str_eq(hit.native, "");
	unlink(prog);
	unlink(other);
	unlink(table);
}
END_TEST

/*
 * The table is mapped and read a line at a time: a large table, lines of other files that differ
 * only in a late field, an overlong line (skipped whole, its tail too) and a last line without a
 * newline are each read as one line.
 */
START_TEST(lookup_reads_large_tables_line_by_line)
{
	char prog[] = "/tmp/mki-shim-prog-XXXXXX", table[] = "/tmp/mki-shim-table-XXXXXX";
	struct execshim_hit hit = { 0 };
	struct stat sb;
	FILE *t;
	int fd, i;

	elf_file(prog, 1, 1, 40);
	ck_assert_int_eq(stat(prog, &sb), 0);
	fd = mkstemp(table);
	ck_assert_int_ge(fd, 0);
	t = fdopen(fd, "w");
	fprintf(t, "loader /lib64/ld-linux-x86-64.so.2\n");
	for (i = 0; i < 3000; i++) /* ~200 KiB: several chunks */
		fprintf(t, "native %llu %llu %llu %llu %d any /native/other-%d\n",
			(unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino,
			(unsigned long long)sb.st_size, (unsigned long long)sb.st_mtim.tv_sec,
			i == 1500 ? (int)sb.st_mtim.tv_nsec + 1 : 1000000000 + i, i);
	/* an overlong line whose tail would be a matching line if it were read as one */
	fprintf(t, "native %*s", 3000, "");
	table_line_native(t, prog, 0, "any", "/native/in-the-long-line");
	table_line_native(t, prog, 0, "any", "/native/prog");
	fprintf(t, "native 1 2 3 4 5 any /native/ignored\n");
	fprintf(t, "qemu 40 1 /usr/bin/qemu-arm-static"); /* no newline at the end */
	fclose(t);
	ck_assert_int_eq(execshim_lookup(table, prog, &hit), 0);
	ck_assert_str_eq(hit.loader, "/lib64/ld-linux-x86-64.so.2");
	ck_assert_str_eq(hit.native, "/native/prog");
	ck_assert_str_eq(hit.qemu, "/usr/bin/qemu-arm-static");

	/* the matching line overlong itself: nothing native */
	t = fopen(table, "w");
	fprintf(t, "native %llu %llu %llu %llu %llu any /%01500d\n", (unsigned long long)sb.st_dev,
		(unsigned long long)sb.st_ino, (unsigned long long)sb.st_size,
		(unsigned long long)sb.st_mtim.tv_sec, (unsigned long long)sb.st_mtim.tv_nsec, 7);
	fclose(t);
	memset(&hit, 0, sizeof(hit));
	ck_assert_int_eq(execshim_lookup(table, prog, &hit), 0);
	ck_assert_str_eq(hit.native, "");
	unlink(prog);
	unlink(table);
}
END_TEST

/*
 * A table that ends exactly at a page's end without a newline: its last line is read up to the
 * end of the mapping and no further (past it, a read would fault). An empty table says nothing.
 */
START_TEST(lookup_stops_at_the_end_of_the_table)
{
	char prog[] = "/tmp/mki-shim-prog-XXXXXX", table[] = "/tmp/mki-shim-table-XXXXXX";
	const char *qemu = "qemu 40 1 /usr/bin/qemu-arm-static";
	long page = sysconf(_SC_PAGESIZE);
	struct execshim_hit hit = { 0 };
	struct stat sb;
	FILE *t;
	int fd;

	elf_file(prog, 1, 1, 40);
	fd = mkstemp(table);
	ck_assert_int_ge(fd, 0);
	t = fdopen(fd, "w");
	/* a comment line filling the page up to the last line (table_line ignores it) */
	fprintf(t, "#%0*d\n", (int)(page - (long)strlen(qemu) - 2), 0);
	fputs(qemu, t);
	fclose(t);
	ck_assert_int_eq(stat(table, &sb), 0);
	ck_assert_int_eq(sb.st_size, page);
	ck_assert_int_eq(execshim_lookup(table, prog, &hit), 0);
	ck_assert_str_eq(hit.qemu, "/usr/bin/qemu-arm-static");

	t = fopen(table, "w");
	fclose(t);
	memset(&hit, 0, sizeof(hit));
	ck_assert_int_eq(execshim_lookup(table, prog, &hit), 0);
	ck_assert_str_eq(hit.qemu, "");
	unlink(prog);
	unlink(table);
}
END_TEST

/* A writable argv (binfmt_misc's is) from string literals: copies in `store`, NULL-terminated. */
struct args {
	char store[10][48];
	char *v[11];
};

static char **args_of(struct args *a, const char *const *list)
{
	int i;

	for (i = 0; list[i]; i++) {
		snprintf(a->store[i], sizeof(a->store[i]), "%s", list[i]);
		a->v[i] = a->store[i];
	}
	a->v[i] = NULL;
	return a->v;
}

START_TEST(native_only_when_allowed)
{
	struct execshim_hit hit = { .native = "/n/prog", .loader = "/lib/ld.so" };
	static const char *const cmp_l[] = { "mkimage-exec", "/usr/bin/dpkg", "dpkg",
		"--compare-versions", "1", "lt", "2", NULL };
	static const char *const val_l[] = { "mkimage-exec", "/usr/bin/dpkg", "dpkg",
		"--validate-version", "1", NULL };
	static const char *const conf_l[] = { "mkimage-exec", "/usr/bin/dpkg", "dpkg",
		"--configure", "-a", NULL };
	static const char *const bare_l[] = { "mkimage-exec", "/usr/bin/dpkg", "dpkg", NULL };
	struct args a1, a2, a3, a4;
	char **cmp = args_of(&a1, cmp_l), **val = args_of(&a2, val_l);
	char **conf = args_of(&a3, conf_l), **bare = args_of(&a4, bare_l);

	ck_assert_int_eq(execshim_native_allowed(&hit, 5, conf), 1);
	hit.only = EXECSHIM_VERSIONS;
	ck_assert_int_eq(execshim_native_allowed(&hit, 7, cmp), 1);
	ck_assert_int_eq(execshim_native_allowed(&hit, 5, val), 1);
	ck_assert_int_eq(execshim_native_allowed(&hit, 5, conf), 0);
	ck_assert_int_eq(execshim_native_allowed(&hit, 3, bare), 0);
	hit.only = EXECSHIM_ANY;
	hit.loader[0] = 0; /* no loader: the native build cannot start */
	ck_assert_int_eq(execshim_native_allowed(&hit, 5, conf), 0);
	hit.loader[0] = '/';
	hit.native[0] = 0;
	ck_assert_int_eq(execshim_native_allowed(&hit, 5, conf), 0);
}
END_TEST

/* Whether a modules-only build may run for the words of `line` after dracut-install's argv[0]. */
static int dracut_allowed(const char *line)
{
	struct execshim_hit hit = { .native = "/n/di", .loader = "/lib/ld.so",
				    .only = EXECSHIM_MODULES };
	static char self[] = "mkimage-exec", file[] = "/usr/lib/dracut/dracut-install",
		    argv0[] = "dracut-install";
	char copy[512], *argv[32] = { self, file, argv0 }, *save = NULL;
	int argc = 3;

	snprintf(copy, sizeof(copy), "%s", line);
	for (char *w = strtok_r(copy, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return execshim_native_allowed(&hit, argc, argv);
}

START_TEST(dracut_install_native_in_module_mode_only)
{
	/* initramfs-tools' calls (hook-functions' _call_dracut_install) */
	ck_assert_int_eq(dracut_allowed("-D /tmp/d --kerneldir /lib/modules/6.12 --firmwaredirs "
					"/lib/firmware -o -m ext4 =drivers/mmc"), 1);
	ck_assert_int_eq(dracut_allowed("-D /tmp/d --kerneldir /lib/modules/6.12 -v -o -m "
					"-s blk_alloc_disk =drivers/ata"), 1);
	ck_assert_int_eq(dracut_allowed("--module=x ext4"), 0); /* getopt refuses the value */
	ck_assert_int_eq(dracut_allowed("-om ext4"), 1);
	ck_assert_int_eq(dracut_allowed("--module ext4"), 1);
	ck_assert_int_eq(dracut_allowed("ext4 -m"), 1); /* GNU getopt permutes */
	ck_assert_int_eq(dracut_allowed("--destrootdir=/d -m ext4"), 1);
	/* no -m, or one getopt does not read as the option */
	ck_assert_int_eq(dracut_allowed("-D /tmp/d /usr/bin/ls"), 0);
	ck_assert_int_eq(dracut_allowed("-D -m /usr/bin/ls"), 0);    /* -D's value */
	ck_assert_int_eq(dracut_allowed("-Dm /usr/bin/ls"), 0);      /* likewise, in its cluster */
	ck_assert_int_eq(dracut_allowed("-s -m -D /d x"), 0);        /* -s's value */
	ck_assert_int_eq(dracut_allowed("--kerneldir -m -D /d x"), 0);
	ck_assert_int_eq(dracut_allowed("-D /d -- -m"), 0);          /* an operand after -- */
	ck_assert_int_eq(dracut_allowed("-l -D /d /usr/bin/ls"), 0); /* ldd mode */
	/* what is not read here: emulated */
	ck_assert_int_eq(dracut_allowed("-m --modalias"), 0);
	ck_assert_int_eq(dracut_allowed("--mod ext4"), 0); /* an abbreviation */
	ck_assert_int_eq(dracut_allowed("-m --unknown ext4"), 0);
	ck_assert_int_eq(dracut_allowed(""), 0);
	setenv("POSIXLY_CORRECT", "1", 1);
	ck_assert_int_eq(dracut_allowed("-o -m ext4"), 0);
	unsetenv("POSIXLY_CORRECT");
}
END_TEST

START_TEST(argv_of_both_ways)
{
	struct execshim_hit hit = { .native = "/n/sed", .qemu = "/usr/bin/qemu-arm-static",
				    .loader = "/lib/ld.so" };
	static const char *const list[] = { "mkimage-exec", "/usr/bin/sed", "sed", "-e", "s/a/b/",
		NULL };
	struct args a;
	char **argv = args_of(&a, list), *args[16];

	ck_assert_int_eq(execshim_native_argv(&hit, 5, argv, args), 7);
	ck_assert_str_eq(args[0], "/lib/ld.so");
	ck_assert_str_eq(args[1], "--inhibit-cache");
	ck_assert_str_eq(args[2], "--argv0");
	ck_assert_str_eq(args[3], "sed");
	ck_assert_str_eq(args[4], "/n/sed");
	ck_assert_str_eq(args[5], "-e");
	ck_assert_str_eq(args[6], "s/a/b/");
	ck_assert_ptr_null(args[7]);
	/* qemu as binfmt_misc with flag P would have started it: -0 ARGV0 FILE ARGS */
	ck_assert_int_eq(execshim_qemu_argv(&hit, 5, argv, args), 6);
	ck_assert_str_eq(args[0], "/usr/bin/qemu-arm-static");
	ck_assert_str_eq(args[1], "-0");
	ck_assert_str_eq(args[2], "sed");
	ck_assert_str_eq(args[3], "/usr/bin/sed");
	ck_assert_str_eq(args[4], "-e");
	ck_assert_str_eq(args[5], "s/a/b/");
	ck_assert_ptr_null(args[6]);
	/* no arguments at all beyond argv[0] */
	ck_assert_int_eq(execshim_qemu_argv(&hit, 3, argv, args), 4);
	ck_assert_str_eq(args[3], "/usr/bin/sed");
	ck_assert_ptr_null(args[4]);
	ck_assert_int_eq(execshim_native_argv(&hit, 3, argv, args), 5);
	ck_assert_ptr_null(args[5]);
}
END_TEST

/* python3.X only as py_compile, in the two forms Debian's scripts use, and with an emulator. */
START_TEST(python_only_as_py_compile)
{
	struct execshim_hit hit = { .native = "/n/python3.11", .qemu = "/q/qemu-arm-static",
				    .loader = "/lib/ld.so", .only = EXECSHIM_PYCOMPILE };
	static const char *const worker_l[] = { "mkimage-exec", "/usr/bin/python3.11",
		"/usr/bin/python3.11", "-m", "py_compile", "-", NULL };
	static const char *const worker_o_l[] = { "mkimage-exec", "/usr/bin/python3.11",
		"python3.11", "-O", "-m", "py_compile", "-", NULL };
	static const char *const script_l[] = { "mkimage-exec", "/usr/bin/python3.11",
		"/usr/bin/python3.11", "-E", "-S", "-O", "/usr/lib/python3.11/py_compile.py",
		"/usr/lib/python3.11/a.py", NULL };
	static const char *const other_l[] = { "mkimage-exec", "/usr/bin/python3.11",
		"python3", "-c", "import sys", NULL };
	static const char *const names_l[] = { "mkimage-exec", "/usr/bin/python3.11",
		"python3", "-m", "py_compile", "a.py", NULL };
	static const char *const elsewhere_l[] = { "mkimage-exec", "/usr/bin/python3.11",
		"python3", "-E", "-S", "/tmp/py_compile.py", "a.py", NULL };
	static const char *const nofiles_l[] = { "mkimage-exec", "/usr/bin/python3.11",
		"python3", "-E", "-S", "/usr/lib/python3.11/py_compile.py", NULL };
	static const char *const tag_l[] = { "mkimage-exec", "/usr/bin/python3.11",
		"python3.11", "-c", "import imp; print(imp.get_tag())", NULL };
	static const char *const more_l[] = { "mkimage-exec", "/usr/bin/python3.11",
		"python3.11", "-c", "import imp; print(imp.get_tag()); 1", NULL };
	struct args a1, a2, a3, a4, a5, a6, a7, a8, a9;
	char **worker = args_of(&a1, worker_l), **worker_o = args_of(&a2, worker_o_l);
	char **script = args_of(&a3, script_l), **other = args_of(&a4, other_l);
	char **names = args_of(&a5, names_l), **elsewhere = args_of(&a6, elsewhere_l);
	char **nofiles = args_of(&a7, nofiles_l), *args[32];
	char **tag = args_of(&a8, tag_l), **more = args_of(&a9, more_l);

	ck_assert_int_eq(execshim_native_allowed(&hit, 6, worker), 1);
	ck_assert_int_eq(execshim_native_allowed(&hit, 7, worker_o), 1);
	ck_assert_int_eq(execshim_native_allowed(&hit, 8, script), 1);
	ck_assert_int_eq(execshim_native_allowed(&hit, 5, other), 0);
	ck_assert_int_eq(execshim_native_allowed(&hit, 6, names), 0);
	ck_assert_int_eq(execshim_native_allowed(&hit, 7, elsewhere), 0);
	ck_assert_int_eq(execshim_native_allowed(&hit, 6, nofiles), 0);
	ck_assert_int_eq(execshim_native_allowed(&hit, 5, tag), 1);
	ck_assert_int_eq(execshim_native_allowed(&hit, 5, more), 0);
	hit.qemu[0] = 0; /* nobody to hand a file to */
	ck_assert_int_eq(execshim_native_allowed(&hit, 6, worker), 0);
	hit.qemu[0] = '/';

	/* FLAGS -S GUARD QEMU FILE ARGV0 ARGS */
	ck_assert_int_eq(execshim_native_argv(&hit, 7, worker_o, args), 15);
	ck_assert_str_eq(args[4], "/n/python3.11");
	ck_assert_str_eq(args[5], "-O");
	ck_assert_str_eq(args[6], "-S");
	ck_assert_str_eq(args[7], ACCEL_PYCOMPILE);
	ck_assert_str_eq(args[8], "/q/qemu-arm-static");
	ck_assert_str_eq(args[9], "/usr/bin/python3.11");
	ck_assert_str_eq(args[10], "python3.11");
	ck_assert_str_eq(args[11], "-O");
	ck_assert_str_eq(args[14], "-");
	ck_assert_ptr_null(args[15]);
	/* the script form has its own -S: not twice */
	ck_assert_int_eq(execshim_native_argv(&hit, 8, script, args), 17);
	ck_assert_str_eq(args[5], "-E");
	ck_assert_str_eq(args[6], "-S");
	ck_assert_str_eq(args[7], "-O");
	ck_assert_str_eq(args[8], ACCEL_PYCOMPILE);
	ck_assert_str_eq(args[16], "/usr/lib/python3.11/a.py");
	ck_assert_ptr_null(args[17]);
	/* a question: -c is the guard's to read, not the interpreter's */
	ck_assert_int_eq(execshim_native_argv(&hit, 5, tag, args), 12);
	ck_assert_str_eq(args[5], "-S");
	ck_assert_str_eq(args[6], ACCEL_PYCOMPILE);
	ck_assert_str_eq(args[10], "-c");
	ck_assert_ptr_null(args[12]);
}
END_TEST

Suite *execshim_suite(void)
{
	Suite *s = suite_create("execshim");
	TCase *tc = tcase_create("execshim");

	tcase_add_test(tc, elf_machine_in_either_byte_order);
	tcase_add_test(tc, lookup_matches_by_identity_and_machine);
	tcase_add_test(tc, lookup_reads_large_tables_line_by_line);
	tcase_add_test(tc, lookup_stops_at_the_end_of_the_table);
	tcase_add_test(tc, native_only_when_allowed);
	tcase_add_test(tc, dracut_install_native_in_module_mode_only);
	tcase_add_test(tc, argv_of_both_ways);
	tcase_add_test(tc, python_only_as_py_compile);
	suite_add_tcase(s, tc);
	return s;
}
