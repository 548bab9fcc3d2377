/*
 * mkimage-exec: the binfmt_misc interpreter for foreign binaries while maintainer scripts run
 * (see accel.h). A separate, statically linked program: the kernel opens it at registration
 * (flag F) and starts it inside the chroot, where no host library exists.
 *
 * argv (flag P): [self, FILE, ARGV0, ARGS...]. When FILE is, by device, inode, size and mtime, a
 * target program listed in the table with an identical native build, run that build through the
 * host loader; otherwise run qemu-user as the kernel would have. Nothing is written anywhere (but
 * the exec profile under mkimage -v, execprof.h) and the environment is passed through untouched,
 * so the program cannot tell the difference except by being fast. The decisions are execshim.c's;
 * a few path questions it answers itself (execbuiltin.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "accel.h"
#include "execbuiltin.h"
#include "execprof.h"
#include "execshim.h"

#define MAX_ARGS 4096

int main(int argc, char **argv)
{
	extern char **environ;
	static char *args[MAX_ARGS + 16];
	struct execshim_hit hit = { 0 };
	int native = 0;

	if (argc < 3 || argc > MAX_ARGS) {
		fprintf(stderr, "mkimage-exec: started with %d arguments: only the kernel's binfmt_misc "
				"(flags FP) runs this\n", argc);
		return 126;
	}
	if (execshim_lookup(ACCEL_TABLE, argv[1], &hit) == 0)
		native = execshim_native_allowed(&hit, argc, argv);
	/* Profiling (mkimage -v), only the child returns: the parent exits as the program did. */
	if (hit.profile[0])
		execprof_fork(hit.profile, argv[1], native);
	if (native && hit.builtin) {
		int status = execbuiltin_run((enum execbuiltin)hit.builtin, argc - 3, argv + 3);

		if (status >= 0)
			return status;
	}
	if (native) {
		execshim_native_argv(&hit, argc, argv, args);
		execve(hit.loader, args, environ);
		/* the native way failed to start: emulation is always right */
	}
	if (!hit.qemu[0]) {
		fprintf(stderr, "mkimage-exec: no emulator for '%s'\n", argv[1]);
		return 126;
	}
	execshim_qemu_argv(&hit, argc, argv, args);
	execve(hit.qemu, args, environ);
	fprintf(stderr, "mkimage-exec: cannot run '%s': %s\n", hit.qemu, strerror(errno));
	return 126;
}
