/*
 * Which packages and programs of a plan have twins (accel.h), as data: mkimage fetches the
 * host-architecture builds of these packages and runs these programs natively, each table saying
 * how far. accel.c applies them.
 */
#include "accel_internal.h"

#include <stddef.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Packages whose programs do the same on every architecture; dpkg's programs once their built-in
 * architecture names the target's (dpkg_programs), dracut-install only for some invocations
 * (restricted_programs: mkimage-exec checks the arguments).
 */
static const char *const tool_packages[] = { "dash", "bash", "coreutils", "sed", "grep",
	"findutils", "diffutils", "gzip", "perl-base", "debianutils", "mawk", "base-passwd", "tar",
	"passwd", "hostname", "ncurses-bin", "dpkg",
	/* The initramfs chain (mkinitramfs and its hooks): modules are data to depmod and modinfo,
	 * and to dracut-install, trixie's initramfs-tools' module copier (restricted_programs) */
	"kmod", "cpio", "xz-utils", "zstd", "lz4", "dracut-install",
	/* Only the offline programs their postinsts run (partial_packages) */
	"systemd", "udev",
	/* Only the interpreter, only as py_compile's checked worker (accel_python.c) */
	"python3.11-minimal", "python3.12-minimal", "python3.13-minimal",
	/* Only ssh-keygen and openssl, only for key and certificate files (execkeys.c) */
	"openssh-client", "openssl",
	/* Only getopt (words in, words out) and logger (a line to a socket) */
	"util-linux", "bsdutils", NULL };
/*
 * ... except these, which report or depend on the machine, inject libraries into what they run
 * (stdbuf), or are dpkg's programs that configuring never needs fast.
 */
static const char *const arch_dependent[] = { "uname", "arch", "nproc", "stdbuf", "chroot",
	"dpkg-deb", "dpkg-split", "dpkg-realpath", "start-stop-daemon", NULL };
/*
 * dpkg's programs that read or write its database: native once accel_retarget() made the twin
 * name the target's architecture, which dpkg has built in; otherwise dpkg itself only for version
 * arithmetic (mkimage-exec checks the arguments) and the others emulated.
 */
static const char *const dpkg_programs[] = { "dpkg", "dpkg-divert", "dpkg-query",
	"dpkg-statoverride", "dpkg-trigger", "update-alternatives", NULL };

/*
 * Of these tool packages, only the named programs: systemctl, journalctl --update-catalog,
 * systemd-sysusers, -tmpfiles and -hwdb work on files (the tree's units, catalogs, sysusers.d,
 * tmpfiles.d, hwdb.d; hwdb.bin and the catalog are little-endian on every architecture). The
 * others talk to a running system or look at the machine (systemd-detect-virt,
 * systemd-machine-id-setup, udevadm).
 */
static const char *const systemd_offline[] = { "systemctl", "journalctl", "systemd-sysusers",
	"systemd-tmpfiles", NULL };
static const char *const udev_offline[] = { "systemd-hwdb", NULL };
static const char *const python_interpreters[] = { "python3.11", "python3.12", "python3.13", NULL };
static const char *const ssh_keygen[] = { "ssh-keygen", NULL };
static const char *const openssl[] = { "openssl", NULL };
static const char *const util_linux[] = { "getopt", NULL };
static const char *const bsdutils[] = { "logger", NULL };
static const struct {
	const char *package;
	const char *const *programs;
} partial_packages[] = { { "systemd", systemd_offline }, { "udev", udev_offline },
			 { "python3.11-minimal", python_interpreters },
			 { "python3.12-minimal", python_interpreters },
			 { "python3.13-minimal", python_interpreters },
			 { "openssh-client", ssh_keygen }, { "openssl", openssl },
			 { "util-linux", util_linux }, { "bsdutils", bsdutils } };

/*
 * Programs outside the program directories (is_tool_path), by their path in the package.
 * dracut-install (initramfs-tools' manual_add_modules on trixie) reads modules through libkmod,
 * which reads 32- and 64-bit, either-endian ELF alike, and copies them with cp (a twin itself).
 */
static const char *const lib_programs[] = { "usr/lib/dracut/dracut-install",
	"lib/dracut/dracut-install", NULL };

/*
 * Programs whose table line says more than "any" (execshim.c decides per exec): dracut-install is
 * native in its module mode (-m) only, where nothing depends on the machine: it hands binaries to
 * the target's ldd in its other modes, but only the module mode was read through and is tested
 * (test 150). coreutils' realpath and readlink (busybox's applets are links, never twins) are
 * native for every invocation, and mkimage-exec answers their simplest questions itself
 * (execbuiltin.h; MKIMAGE_EXEC_BUILTINS=0 turns that off, to compare). ssh-keygen and openssl
 * make keys and certificates natively only where nothing loads a module built for the target
 * (execkeys.c). dpkg's are accel.c's native_scope()'s.
 */
static const struct {
	const char *program, *flags;
} restricted_programs[] = { { "dracut-install", "modules" }, { "realpath", "realpath" },
			    { "readlink", "readlink" }, { "ssh-keygen", "keygen" },
			    { "openssl", "pki" } };

/*
 * Libraries a twin's library opens with dlopen() rather than DT_NEEDED: libkmod decompresses
 * .ko.xz and .ko.zst modules through them, so the copy carries them as the target tree does.
 */
static const struct {
	const char *package;
	const char *const opened[3];
} dlopened[] = { { "libkmod2", { "liblzma5", "libzstd1", NULL } } };

int accel_tools_in(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

const char *const *accel_tools_packages(void)
{
	return tool_packages;
}

const char *const *accel_tools_only(const char *package)
{
	for (size_t i = 0; i < COUNT(partial_packages); i++)
		if (!strcmp(partial_packages[i].package, package))
			return partial_packages[i].programs;
	return NULL;
}

const char *const *accel_tools_dlopened(const char *package)
{
	for (size_t i = 0; i < COUNT(dlopened); i++)
		if (!strcmp(dlopened[i].package, package))
			return dlopened[i].opened;
	return NULL;
}

const char *accel_tools_flags(const char *program)
{
	for (size_t i = 0; i < COUNT(restricted_programs); i++)
		if (!strcmp(restricted_programs[i].program, program))
			return restricted_programs[i].flags;
	return NULL;
}

int accel_tools_lib_program(const char *path)
{
	return accel_tools_in(lib_programs, path);
}

int accel_tools_dpkg_program(const char *program)
{
	return accel_tools_in(dpkg_programs, program);
}

int accel_tools_machine_dependent(const char *program)
{
	return accel_tools_in(arch_dependent, program);
}

int accel_tools_python(const char *program)
{
	return accel_tools_in(python_interpreters, program);
}
