/*
 * mkimage-exec's decisions (execshim.h). It runs inside the tree as whoever exec'd a foreign
 * program, so it trusts nothing but the table mkimage wrote, and answers "emulate" whenever in
 * doubt: emulation is always right, the native way only faster.
 */
#include "execshim.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

int execshim_lookup(const char *table, const char *file, struct execshim_hit *hit)
{
	unsigned machine = 0, cls = 0, m, c;
	unsigned long long dev, ino, size, sec, nsec;
	char line[1200], flags[16], path[512];
	struct stat sb;
	FILE *t;

	if (stat(file, &sb) < 0 || execshim_elf_machine(file, &machine, &cls) < 0)
		return -1;
	t = fopen(table, "re");
	if (!t)
		return -1;
	while (fgets(line, sizeof(line), t)) {
		if (sscanf(line, "loader %511s", path) == 1)
			snprintf(hit->loader, sizeof(hit->loader), "%s", path);
		else if (sscanf(line, "profile %511s", path) == 1)
			snprintf(hit->profile, sizeof(hit->profile), "%s", path);
		else if (sscanf(line, "qemu %u %u %511s", &m, &c, path) == 3 && m == machine &&
			 c == cls)
			snprintf(hit->qemu, sizeof(hit->qemu), "%s", path);
		else if (sscanf(line, "native %llu %llu %llu %llu %llu %15s %511s", &dev, &ino, &size,
				&sec, &nsec, flags, path) == 7 &&
			 dev == (unsigned long long)sb.st_dev && ino == (unsigned long long)sb.st_ino &&
			 size == (unsigned long long)sb.st_size &&
			 sec == (unsigned long long)sb.st_mtim.tv_sec &&
			 nsec == (unsigned long long)sb.st_mtim.tv_nsec) {
			snprintf(hit->native, sizeof(hit->native), "%s", path);
			hit->versions_only = !strcmp(flags, "versions");
		}
	}
	fclose(t);
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
