/*
 * What mkimage-exec (the binfmt_misc interpreter, accel.h) decides before it becomes a program:
 * which ELF machine a file is, what the native tools' table says about it, whether its native
 * build may run, and the argv of either way. Linked into the static mkimage-exec (which links no
 * other module) and the unit tests; nothing here allocates, logs or writes anything.
 */
#ifndef MKI_EXECSHIM_H
#define MKI_EXECSHIM_H

/** Which invocations a native build may answer: the FLAGS word of its table line. */
enum execshim_only {
	EXECSHIM_ANY,      /* "any": every one */
	EXECSHIM_VERSIONS, /* "versions": dpkg's version questions only */
	EXECSHIM_MODULES,  /* "modules": dracut-install's module mode only */
	EXECSHIM_PYCOMPILE, /* "pycompile": python3.X as py_compile's worker, through the guard */
	EXECSHIM_KEYGEN,   /* "keygen": ssh-keygen's key file modes (execkeys.h) */
	EXECSHIM_PKI,      /* "pki": openssl's file commands (execkeys.h) */
};

/** What the table (ACCEL_TABLE's format, accel.c) says about one file: "" where it says nothing. */
struct execshim_hit {
	char native[512], qemu[512], loader[512], profile[512];
	enum execshim_only only;
	int builtin; /* enum execbuiltin: questions mkimage-exec answers itself ("realpath", "readlink") */
};

/**
 * The ELF machine (`*machine`, in the file's byte order) and class (`*cls`: 1 32-bit, 2 64-bit)
 * of `file`: 0, or -1 when it cannot be read or is no ELF file.
 */
int execshim_elf_machine(const char *file, unsigned *machine, unsigned *cls);
/**
 * Fill `hit` from the table file `table`: the loader, the profile, the qemu for `file`'s ELF
 * machine and class, and the native build whose device, inode, size and mtime are `file`'s
 * (the last matching line wins). 0, or -1 when `file` or `table` cannot be read (`hit` untouched).
 */
int execshim_lookup(const char *table, const char *file, struct execshim_hit *hit);
/**
 * Whether the native build of `hit` may run for binfmt_misc's argv (flag P: [self, FILE, ARGV0,
 * ARGS...]): it needs a native build and a loader; a versions-only one (dpkg) only for
 * --compare-versions and --validate-version as the first argument; a modules-only one
 * (dracut-install) only when its getopt would read -m or --module (the environment's
 * POSIXLY_CORRECT included); a pycompile one (python3.X) only as py_compile, dh-python's worker
 * `[-O] -m py_compile -` or the interpreter postinsts' `-E -S [-O] /usr/lib/python3.N/py_compile.py
 * FILE...`, or for dh-python's questions of its magic number and tag, and only with an emulator
 * to hand what it cannot vouch for to (ACCEL_PYCOMPILE); a keygen or pki one (ssh-keygen,
 * openssl) only where nothing would load a module built for the target (execkeys.h).
 */
int execshim_native_allowed(const struct execshim_hit *hit, int argc, char **argv);
/**
 * `args` (room for argc + 12 pointers, the final NULL included) for the native way: the loader,
 * told the original argv[0], runs the native build with ARGS; a pycompile build runs
 * ACCEL_PYCOMPILE with the flags before py_compile and -S (FLAGS GUARD QEMU FILE ARGV0 ARGS:
 * it reads the same stdin). Pointers into `hit` and `argv`; the number of arguments.
 */
int execshim_native_argv(struct execshim_hit *hit, int argc, char **argv, char **args);
/**
 * `args` (room for argc + 2 pointers, the final NULL included) for running FILE under qemu as
 * the kernel would have (qemu -0 ARGV0 FILE ARGS...). Pointers into `hit` and `argv`; the
 * number of arguments.
 */
int execshim_qemu_argv(struct execshim_hit *hit, int argc, char **argv, char **args);

#endif
