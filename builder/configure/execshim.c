/*
 * mkimage-exec's decisions (execshim.h). It runs inside the tree as whoever exec'd a foreign
 * program, so it trusts nothing but the table mkimage wrote, and answers "emulate" whenever in
 * doubt: emulation is always right, the native way only faster.
 */
#include "execshim.h"

#include "accel.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
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
	if (!flags_len || !*path || strchr(path, ' ') || strlen(path) >= sizeof(hit->native))
		return 0;
	memcpy(hit->native, path, strlen(path) + 1);
	hit->versions_only = flags_len == strlen("versions") && !strncmp(p, "versions", flags_len);
	hit->pycompile = flags_len == strlen("pycompile") && !strncmp(p, "pycompile", flags_len);
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

/* dpkg is native only for what cannot depend on its built-in architecture. */
int execshim_native_allowed(const struct execshim_hit *hit, int argc, char **argv)
{
	if (!hit->native[0] || !hit->loader[0])
		return 0;
	if (hit->pycompile)
		return hit->qemu[0] && (py_compile_worker(argc, argv) ||
					py_compile_script(argc, argv) || py_question(argc, argv));
	if (!hit->versions_only)
		return 1;
	return argc > 3 && (!strcmp(argv[3], "--compare-versions") ||
			    !strcmp(argv[3], "--validate-version"));
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
	if (hit->pycompile) {
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
