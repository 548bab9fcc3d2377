/*
 * mkimage-exec: the binfmt_misc interpreter for foreign binaries while maintainer scripts run
 * (see accel.h). A separate, statically linked program: the kernel opens it at registration
 * (flag F) and starts it inside the chroot, where no host library exists.
 *
 * argv (flag P): [self, FILE, ARGV0, ARGS...]. When FILE is, by device, inode, size and mtime, a
 * target program listed in the table with an identical native build, run that build through the
 * host loader; otherwise run qemu-user as the kernel would have. Nothing is written anywhere (but
 * the exec profile under mkimage -v, execprof.h) and the environment is passed through untouched,
 * so the program cannot tell the difference except by being fast.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accel.h"
#include "execprof.h"

#define MAX_ARGS 4096

struct hit {
	char native[512], qemu[512], loader[512], profile[512];
	int versions_only;
};

static int elf_machine(const char *file, unsigned *machine, unsigned *cls)
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

/* Fill `hit` from the table: the loader, the qemu for this ELF machine, the native build if any. */
static int lookup(const char *file, struct hit *hit)
{
	unsigned machine = 0, cls = 0, m, c;
	unsigned long long dev, ino, size, sec, nsec;
	char line[1200], flags[16], path[512];
	struct stat sb;
	FILE *t;

	if (stat(file, &sb) < 0 || elf_machine(file, &machine, &cls) < 0)
		return -1;
	t = fopen(ACCEL_TABLE, "re");
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
static int native_allowed(const struct hit *hit, int argc, char **argv)
{
	if (!hit->native[0] || !hit->loader[0])
		return 0;
	if (!hit->versions_only)
		return 1;
	return argc > 3 && (!strcmp(argv[3], "--compare-versions") ||
			    !strcmp(argv[3], "--validate-version"));
}

int main(int argc, char **argv)
{
	extern char **environ;
	static char *args[MAX_ARGS + 8];
	struct hit hit = { 0 };
	int i, n = 0, native = 0;

	if (argc < 3 || argc > MAX_ARGS) {
		fprintf(stderr, "mkimage-exec: started with %d arguments: only the kernel's binfmt_misc "
				"(flags FP) runs this\n", argc);
		return 126;
	}
	if (lookup(argv[1], &hit) == 0)
		native = native_allowed(&hit, argc, argv);
	/* Profiling (mkimage -v), only the child returns: the parent exits as the program did. */
	if (hit.profile[0])
		execprof_fork(hit.profile, argv[1], native);
	if (native) {
		args[n++] = hit.loader;
		args[n++] = (char *)"--inhibit-cache";
		args[n++] = (char *)"--argv0";
		args[n++] = argv[2];
		args[n++] = hit.native;
		for (i = 3; i < argc; i++)
			args[n++] = argv[i];
		args[n] = NULL;
		execve(hit.loader, args, environ);
		n = 0; /* the native way failed to start: emulation is always right */
	}
	if (!hit.qemu[0]) {
		fprintf(stderr, "mkimage-exec: no emulator for '%s'\n", argv[1]);
		return 126;
	}
	args[n++] = hit.qemu;
	args[n++] = (char *)"-0";
	args[n++] = argv[2];
	for (i = 1; i < argc; i++)
		if (i != 2)
			args[n++] = argv[i];
	args[n] = NULL;
	execve(hit.qemu, args, environ);
	fprintf(stderr, "mkimage-exec: cannot run '%s': %s\n", hit.qemu, strerror(errno));
	return 126;
}
