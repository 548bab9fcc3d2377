/*
 * mkimage-exec's decisions (execshim.h). It runs inside the tree as whoever exec'd a foreign
 * program, so it trusts nothing but the table mkimage wrote, and answers "emulate" whenever in
 * doubt: emulation is always right, the native way only faster.
 */
#include "execshim.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int execshim_elf_machine(const char *file, unsigned *machine, unsigned *cls)
{
	unsigned char h[20];
	FILE *f = fopen(file, "rbe");
	int ok;

	if (!f)
		return -1;
	ok = fread(h, 1, sizeof(h), f) == sizeof(h) && !memcmp(h, "\177ELF", 4);
	fclose(f);
	if (!ok)
		return -1;
	*cls = h[4];
	*machine = h[5] == 1 ? (unsigned)(h[18] | h[19] << 8) : (unsigned)(h[19] | h[18] << 8);
	return 0;
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
 * Each line of the table through table_line(), read in large chunks: every syscall costs on a
 * virtual machine, and stdio would read the table a kilobyte at a time. A line of
 * TABLE_LINE_MAX or more is skipped whole (mkimage writes none): never half of it read as a line.
 */
#define TABLE_CHUNK (64 * 1024)
#define TABLE_LINE_MAX 1200
static void read_table(int fd, unsigned machine, unsigned cls, const unsigned long long id[5],
		       struct execshim_hit *hit)
{
	static char buf[TABLE_CHUNK + TABLE_LINE_MAX + 1];
	size_t have = 0, skip = 0;
	ssize_t n;

	while ((n = read(fd, buf + have, TABLE_CHUNK)) > 0) {
		char *line = buf, *nl;

		have += (size_t)n;
		buf[have] = 0;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			*nl = 0;
			if (!skip && nl - line < TABLE_LINE_MAX)
				table_line(line, machine, cls, id, hit);
			skip = 0;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		if (have > TABLE_LINE_MAX) {
			skip = 1;
			have = 0;
		}
		memmove(buf, line, have);
	}
	buf[have] = 0;
	if (have && !skip && have < TABLE_LINE_MAX)
		table_line(buf, machine, cls, id, hit);
}

int execshim_lookup(const char *table, const char *file, struct execshim_hit *hit)
{
	unsigned machine = 0, cls = 0;
	unsigned long long id[5];
	struct stat sb;
	int fd;

	if (stat(file, &sb) < 0 || execshim_elf_machine(file, &machine, &cls) < 0)
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

/* dpkg is native only for what cannot depend on its built-in architecture. */
int execshim_native_allowed(const struct execshim_hit *hit, int argc, char **argv)
{
	if (!hit->native[0] || !hit->loader[0])
		return 0;
	if (!hit->versions_only)
		return 1;
	return argc > 3 && (!strcmp(argv[3], "--compare-versions") ||
			    !strcmp(argv[3], "--validate-version"));
}

int execshim_native_argv(struct execshim_hit *hit, int argc, char **argv, char **args)
{
	static char inhibit_cache[] = "--inhibit-cache", argv0[] = "--argv0";
	int i, n = 0;

	args[n++] = hit->loader;
	args[n++] = inhibit_cache;
	args[n++] = argv0;
	args[n++] = argv[2];
	args[n++] = hit->native;
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
