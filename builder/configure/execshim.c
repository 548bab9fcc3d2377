/*
 * mkimage-exec's decisions (execshim.h). It runs inside the tree as whoever exec'd a foreign
 * program, so it trusts nothing but the table mkimage wrote, and answers "emulate" whenever in
 * doubt: emulation is always right, the native way only faster.
 */
#include "execshim.h"

#include "accel.h"
#include "execbuiltin.h"
#include "execkeys.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The ELF machine and class from the header at the start of `fd`: 0, or -1 for no ELF file. */
static int elf_machine_fd(int fd, unsigned *machine, unsigned *cls)
{
	unsigned char h[20];

	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, "\177ELF", 4))
		return -1;
	*cls = h[4];
	*machine = h[5] == 1 ? (unsigned)(h[18] | h[19] << 8) : (unsigned)(h[19] | h[18] << 8);
	return 0;
}

/*
 * open() and pread(), not stdio: every exec of a script pays for what runs here, and fopen()
 * would set up musl's allocator (brk, mmap, the page faults of both) for one 20-byte read.
 */
int execshim_elf_machine(const char *file, unsigned *machine, unsigned *cls)
{
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = elf_machine_fd(fd, machine, cls);
	close(fd);
	return ret;
}

/* The FLAGS word of a native line: 0, or -1 for a word this build does not know (no match). */
static int parse_flags(const char *p, size_t n, struct execshim_hit *hit)
{
	static const struct {
		const char *word;
		enum execshim_only only;
		enum execbuiltin builtin;
	} words[] = { { "any", EXECSHIM_ANY, EXECBUILTIN_NONE },
		      { "versions", EXECSHIM_VERSIONS, EXECBUILTIN_NONE },
		      { "modules", EXECSHIM_MODULES, EXECBUILTIN_NONE },
		      { "pycompile", EXECSHIM_PYCOMPILE, EXECBUILTIN_NONE },
		      { "keygen", EXECSHIM_KEYGEN, EXECBUILTIN_NONE },
		      { "pki", EXECSHIM_PKI, EXECBUILTIN_NONE },
		      { "realpath", EXECSHIM_ANY, EXECBUILTIN_REALPATH },
		      { "readlink", EXECSHIM_ANY, EXECBUILTIN_READLINK } };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].word) == n && !strncmp(p, words[i].word, n)) {
			hit->only = words[i].only;
			hit->builtin = (int)words[i].builtin;
			return 0;
		}
	return -1;
}

/*
 * Whether the "native DEV INO SIZE SEC NSEC FLAGS PATH" line `line` is the file of identity `id`
 * (dev, ino, size, mtime sec, nsec); then its flags and path are copied to `hit`. The numbers are
 * compared as they are read: the table has a line per native program and is read at every exec,
 * so another file's line is left at its first mismatch (the inode) instead of being parsed whole.
 */
static int native_line(const char *line, const unsigned long long id[5], struct execshim_hit *hit)
{
	const char *p = line + strlen("native "), *path;
	size_t flags_len;

	for (int i = 0; i < 5; i++) {
		unsigned long long v = 0;
		const char *digits = p;

		/* by hand: musl's strtoull is a scanf in disguise, ten times slower */
		for (; *p >= '0' && *p <= '9' && p - digits < 20; p++)
			v = v * 10 + (unsigned)(*p - '0');
		if (p == digits || *p != ' ' || v != id[i])
			return 0;
		p++;
	}
	/* FLAGS PATH, each one word; a path too long for `hit` is no match, never a shorter one */
	flags_len = strcspn(p, " ");
	path = p + flags_len + (p[flags_len] == ' ');
	if (!flags_len || !*path || strchr(path, ' ') || strlen(path) >= sizeof(hit->native) ||
	    parse_flags(p, flags_len, hit) < 0)
		return 0;
	memcpy(hit->native, path, strlen(path) + 1);
	return 1;
}

static void table_line(const char *line, unsigned machine, unsigned cls,
		       const unsigned long long id[5], struct execshim_hit *hit)
{
	char path[512];
	unsigned m, c;

	if (!strncmp(line, "native ", strlen("native ")))
		native_line(line, id, hit);
	else if (sscanf(line, "loader %511s", path) == 1)
		snprintf(hit->loader, sizeof(hit->loader), "%s", path);
	else if (sscanf(line, "profile %511s", path) == 1)
		snprintf(hit->profile, sizeof(hit->profile), "%s", path);
	else if (sscanf(line, "qemu %u %u %511s", &m, &c, path) == 3 && m == machine && c == cls)
		snprintf(hit->qemu, sizeof(hit->qemu), "%s", path);
}

/*
 * Each line of the table through table_line(). The table is mapped, not read: read() into a
 * buffer costs a fresh zeroed page per 4 KiB of it, each a page fault that traps to the hypervisor
 * on a virtual machine, while the mapping shares the page cache's pages, a few per fault. Each
 * line is copied onto the stack to end it with a NUL; a line of TABLE_LINE_MAX or more is
 * skipped whole (mkimage writes none): never part of it taken for a line.
 */
#define TABLE_LINE_MAX 1200
static void read_table(int fd, unsigned machine, unsigned cls, const unsigned long long id[5],
		       struct execshim_hit *hit)
{
	const char *line, *end, *nl;
	char copy[TABLE_LINE_MAX];
	void *map;
	struct stat sb;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    (unsigned long long)sb.st_size > SIZE_MAX)
		return;
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return;
	end = (const char *)map + sb.st_size;
	for (line = map; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;
		if (nl - line >= TABLE_LINE_MAX)
			continue;
		memcpy(copy, line, (size_t)(nl - line));
		copy[nl - line] = 0;
		table_line(copy, machine, cls, id, hit);
	}
	munmap(map, (size_t)sb.st_size);
}

/*
 * The identity and the header come from one descriptor: one path walk instead of two, and both
 * describe the same file even if a script renames another over its path meanwhile. O_NONBLOCK:
 * a FIFO renamed over the path must not hold the exec in open().
 */
int execshim_lookup(const char *table, const char *file, struct execshim_hit *hit)
{
	unsigned machine = 0, cls = 0;
	unsigned long long id[5];
	struct stat sb;
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), bad;

	if (fd < 0)
		return -1;
	bad = fstat(fd, &sb) < 0 || elf_machine_fd(fd, &machine, &cls) < 0;
	close(fd);
	if (bad)
		return -1;
	fd = open(table, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	id[0] = (unsigned long long)sb.st_dev;
	id[1] = (unsigned long long)sb.st_ino;
	id[2] = (unsigned long long)sb.st_size;
	id[3] = (unsigned long long)sb.st_mtim.tv_sec;
	id[4] = (unsigned long long)sb.st_mtim.tv_nsec;
	read_table(fd, machine, cls, id, hit);
	close(fd);
	return 0;
}

/* dracut-install's long options (its getopt_long table) and whether each takes a value. */
static const struct {
	const char *name;
	int value;
} dracut_long[] = { { "help", 0 }, { "version", 0 }, { "dir", 0 }, { "debug", 0 },
	{ "verbose", 0 }, { "ldd", 0 }, { "resolvelazy", 0 }, { "optional", 0 }, { "hostonly", 0 },
	{ "all", 0 }, { "module", 0 }, { "fips", 0 }, { "modalias", 0 }, { "silent", 0 },
	{ "destrootdir", 1 }, { "sysrootdir", 1 }, { "logdir", 1 }, { "mod-filter-path", 1 },
	{ "mod-filter-nopath", 1 }, { "mod-filter-symbol", 1 }, { "mod-filter-nosymbol", 1 },
	{ "mod-filter-noname", 1 }, { "kerneldir", 1 }, { "firmwaredirs", 1 } };
/* Its short options with a value ("madfhlL:oD:Hr:Rp:P:s:S:N:v") */
#define DRACUT_SHORT_VALUE "LDrpPsSN"

/*
 * One long option word ("--name" or "--name=value"): 1 -m, 0 another, 2 another whose value is
 * the next word, -1 what is not read here (--modalias, an abbreviation, an unknown name).
 */
static int dracut_long_option(const char *word)
{
	const char *name = word + 2;
	size_t n = strcspn(name, "=");

	for (size_t i = 0; i < sizeof(dracut_long) / sizeof(dracut_long[0]); i++) {
		if (strlen(dracut_long[i].name) != n || strncmp(name, dracut_long[i].name, n))
			continue;
		if (!strcmp(dracut_long[i].name, "modalias"))
			return -1;
		if (!strcmp(dracut_long[i].name, "module"))
			return name[n] ? -1 : 1;
		return dracut_long[i].value && !name[n] ? 2 : 0;
	}
	return -1;
}

/*
 * Whether dracut-install's getopt_long reads -m or --module in these arguments: GNU getopt takes
 * options anywhere before "--", an option's value is never an option, and a short option with a
 * value ends its cluster ("-sm" filters by the symbol "m"). POSIXLY_CORRECT stops the options at
 * the first operand: then, and for anything not read here, no (emulated).
 */
static int dracut_module_mode(int argc, char **argv)
{
	int module = 0, i;

	if (getenv("POSIXLY_CORRECT"))
		return 0;
	for (i = 3; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];
		int r;

		if (a[0] != '-' || !a[1])
			continue;
		if (a[1] == '-') {
			if ((r = dracut_long_option(a)) < 0)
				return 0;
			module |= r == 1;
			i += r == 2;
			continue;
		}
		for (a++; *a; a++) {
			module |= *a == 'm';
			if (strchr(DRACUT_SHORT_VALUE, *a)) {
				i += !a[1];
				break;
			}
		}
	}
	return module;
}

/*
 * dh-python's py3compile starts "/usr/bin/python3.X [-O] -m py_compile -" and writes it the
 * file names: exactly that.
 */
static int py_compile_worker(int argc, char **argv)
{
	int o = argc == 7 && !strcmp(argv[3], "-O");

	return (argc == 6 || o) && !strcmp(argv[3 + o], "-m") &&
	       !strcmp(argv[4 + o], "py_compile") && !strcmp(argv[5 + o], "-");
}

/* "/usr/lib/python3.N/py_compile.py", the target's own module run as a script. */
static int py_compile_path(const char *s)
{
	const char *p = s + strlen("/usr/lib/python3.");
	size_t digits;

	if (strncmp(s, "/usr/lib/python3.", strlen("/usr/lib/python3.")))
		return 0;
	digits = strspn(p, "0123456789");
	return digits && digits < 4 && !strcmp(p + digits, "/py_compile.py");
}

/*
 * The interpreter's own postinsts: "python3.X -E -S [-O] /usr/lib/python3.X/py_compile.py
 * FILE...", the names as arguments.
 */
static int py_compile_script(int argc, char **argv)
{
	int o = argc > 6 && !strcmp(argv[5], "-O");

	return argc > 6 + o && !strcmp(argv[3], "-E") && !strcmp(argv[4], "-S") &&
	       py_compile_path(argv[5 + o]);
}

/*
 * dh-python's questions to each interpreter (debpython/interpreter.py, once per py3compile):
 * answers built into the interpreter of that version, on every machine.
 */
static int py_question(int argc, char **argv)
{
	static const char *const asked[] = { "import imp; print(imp.get_magic())",
		"import imp; print(imp.get_tag())", NULL };

	for (const char *const *q = asked; argc == 5 && *q; q++)
		if (!strcmp(argv[3], "-c") && !strcmp(argv[4], *q))
			return 1;
	return 0;
}

/* The flags before py_compile's module or script: what the native interpreter gets too. */
static int py_compile_flags(int argc, char **argv)
{
	int n = 0;

	while (3 + n < argc && n < 3 && (!strcmp(argv[3 + n], "-E") ||
					  !strcmp(argv[3 + n], "-S") || !strcmp(argv[3 + n], "-O")))
		n++;
	return n;
}

/*
 * dpkg is native only for what cannot depend on its built-in architecture, dracut-install only
 * in the mode whose every step was read for it, ssh-keygen and openssl only where they load
 * nothing from the tree (accel.c's restricted programs).
 */
int execshim_native_allowed(const struct execshim_hit *hit, int argc, char **argv)
{
	if (!hit->native[0] || !hit->loader[0])
		return 0;
	switch (hit->only) {
	case EXECSHIM_ANY:
		return 1;
	case EXECSHIM_VERSIONS:
		return argc > 3 && (!strcmp(argv[3], "--compare-versions") ||
				    !strcmp(argv[3], "--validate-version"));
	case EXECSHIM_MODULES:
		return dracut_module_mode(argc, argv);
	case EXECSHIM_PYCOMPILE:
		return hit->qemu[0] && (py_compile_worker(argc, argv) ||
					py_compile_script(argc, argv) || py_question(argc, argv));
	case EXECSHIM_KEYGEN:
		return execkeys_ssh_keygen(argc, argv, EXECKEYS_OPENSSL_CONF);
	case EXECSHIM_PKI:
		return execkeys_openssl(argc, argv, EXECKEYS_OPENSSL_CONF);
	}
	return 0;
}

int execshim_native_argv(struct execshim_hit *hit, int argc, char **argv, char **args)
{
	static char inhibit_cache[] = "--inhibit-cache", argv0[] = "--argv0", no_site[] = "-S";
	static char guard[] = ACCEL_PYCOMPILE;
	int i, n = 0;

	args[n++] = hit->loader;
	args[n++] = inhibit_cache;
	args[n++] = argv0;
	args[n++] = argv[2];
	args[n++] = hit->native;
	if (hit->only == EXECSHIM_PYCOMPILE) {
		int flags = py_compile_flags(argc, argv), site = 1;

		for (i = 3; i < 3 + flags; i++) {
			site &= !!strcmp(argv[i], "-S");
			args[n++] = argv[i];
		}
		/* the stdin form's guard runs site itself, to see it run cleanly */
		if (site)
			args[n++] = no_site;
		args[n++] = guard;
		args[n++] = hit->qemu;
		args[n++] = argv[1];
		args[n++] = argv[2];
		for (i = 3; i < argc; i++)
			args[n++] = argv[i];
		args[n] = NULL;
		return n;
	}
	for (i = 3; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	return n;
}

int execshim_qemu_argv(struct execshim_hit *hit, int argc, char **argv, char **args)
{
	static char argv0[] = "-0";
	int i, n = 0;

	args[n++] = hit->qemu;
	args[n++] = argv0;
	args[n++] = argv[2];
	for (i = 1; i < argc; i++)
		if (i != 2)
			args[n++] = argv[i];
	args[n] = NULL;
	return n;
}
