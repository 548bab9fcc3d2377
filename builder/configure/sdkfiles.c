/* The SDK's wrappers, toolchain files and environment scripts (sdkfiles.h). */
#include "sdkfiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/x.h"

/* The SDK's root from a file two levels below it (sdk/bin/x): what every wrapper starts with. */
#define SH_ROOT "sdk=$(cd \"$(dirname \"$0\")/../..\" && pwd -P) || exit 1\n"
/* Its host libraries beside the build host's C library (sdkfiles.h). */
#define SH_LIBS "LD_LIBRARY_PATH=\"$sdk/sdk/hostlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n" \
		"export LD_LIBRARY_PATH\n"

/* The binutils each target gets a wrapper for, besides the compilers. */
static const char *const binutils[] = { "ar", "as", "ld", "nm", "objcopy", "objdump", "ranlib",
					"readelf", "strip", NULL };

/* What `uname -m` says on a host of `a`, where that is one name; NULL: not checked. */
static const char *uname_machine(const struct arch *a)
{
	return !strcmp(a->name, "amd64") ? "x86_64" : !strcmp(a->name, "arm64") ? "aarch64" : NULL;
}

void sdkfiles_env(const struct arch *a, const char *glibc, struct buf *out)
{
	const struct arch *host = arch_find(arch_host());
	const char *m = host ? uname_machine(host) : NULL;
	const char *t = a->triplet;

	buf_addf(out, "# mkimage SDK: cross-building for %s (%s). Source it from bash:\n"
		 "#   . ./environment-setup-%s\n"
		 "# Everything is found relative to this file (or to $MKIMAGE_SDK when set).\n", a->name,
		 t, t);
	buf_addf(out, "if [ -z \"${MKIMAGE_SDK:-}\" ]; then\n"
		 "\tif [ -z \"${BASH_SOURCE:-}\" ]; then\n"
		 "\t\techo \"environment-setup-%s: source it from bash, or set MKIMAGE_SDK to the "
		 "SDK's directory first\" >&2\n\t\treturn 1\n\tfi\n"
		 "\tMKIMAGE_SDK=$(cd \"$(dirname \"$BASH_SOURCE\")\" && pwd -P) || return 1\nfi\n", t);
	if (m)
		buf_addf(out, "if [ \"$(uname -m)\" != %s ]; then\n"
			 "\techo \"environment-setup-%s: this SDK runs on %s (%s) hosts, not on "
			 "$(uname -m)\" >&2\n\treturn 1\nfi\n", m, t, host->name, m);
	buf_addf(out, "_mki_libc=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed 's/^glibc[[:space:]]*//')\n"
		 "if [ -n \"$_mki_libc\" ] && [ \"$(printf '%%s\\n' %s \"$_mki_libc\" | sort -V | "
		 "head -n 1)\" != %s ]; then\n"
		 "\techo \"environment-setup-%s: this host's C library $_mki_libc is older than "
		 "the SDK's %s, which its programs need\" >&2\n\treturn 1\nfi\nunset _mki_libc\n",
		 glibc, glibc, t, glibc);
	buf_addf(out, "export MKIMAGE_SDK\nexport SDKTARGETSYSROOT=\"$MKIMAGE_SDK\"\n"
		 "export PATH=\"$MKIMAGE_SDK/sdk/bin:$PATH\"\n"
		 "export CC=%s-gcc CXX=%s-g++ CPP=\"%s-gcc -E\" AR=%s-ar AS=%s-as LD=%s-ld "
		 "NM=%s-nm\nexport OBJCOPY=%s-objcopy OBJDUMP=%s-objdump RANLIB=%s-ranlib "
		 "STRIP=%s-strip\n", t, t, t, t, t, t, t, t, t, t, t);
	buf_addf(out, "export PKG_CONFIG=%s-pkg-config\n"
		 "export CMAKE_TOOLCHAIN_FILE=\"$MKIMAGE_SDK/sdk/cmake/%s.cmake\"\n"
		 "export MESON_CROSS_FILE=\"$MKIMAGE_SDK/sdk/meson/%s.ini\"\n", t, t, t);
}

void sdkfiles_cmake(const struct arch *a, struct buf *out)
{
	const char *t = a->triplet;

	buf_addf(out, "# mkimage SDK: cross-building for %s (%s) with CMake:\n"
		 "#   cmake -DCMAKE_TOOLCHAIN_FILE=SDK/sdk/cmake/%s.cmake ...\n"
		 "get_filename_component(MKIMAGE_SDK \"${CMAKE_CURRENT_LIST_DIR}/../..\" ABSOLUTE)\n"
		 "set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR %s)\n"
		 "set(CMAKE_LIBRARY_ARCHITECTURE %s)\nset(CMAKE_SYSROOT \"${MKIMAGE_SDK}\")\n",
		 a->name, t, t, a->gnu_cpu, t);
	buf_addf(out, "set(CMAKE_C_COMPILER \"${MKIMAGE_SDK}/sdk/bin/%s-gcc\")\n"
		 "set(CMAKE_CXX_COMPILER \"${MKIMAGE_SDK}/sdk/bin/%s-g++\")\n"
		 "set(CMAKE_AR \"${MKIMAGE_SDK}/sdk/bin/%s-ar\" CACHE FILEPATH \"\")\n"
		 "set(CMAKE_RANLIB \"${MKIMAGE_SDK}/sdk/bin/%s-ranlib\" CACHE FILEPATH \"\")\n"
		 "set(CMAKE_STRIP \"${MKIMAGE_SDK}/sdk/bin/%s-strip\" CACHE FILEPATH \"\")\n"
		 "set(PKG_CONFIG_EXECUTABLE \"${MKIMAGE_SDK}/sdk/bin/%s-pkg-config\" "
		 "CACHE FILEPATH \"\")\n", t, t, t, t, t, t);
	buf_adds(out, "set(CMAKE_FIND_ROOT_PATH \"${MKIMAGE_SDK}\")\n"
		 "set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)\n"
		 "set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)\n"
		 "set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)\n"
		 "set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)\n");
}

const char *sdkfiles_meson_cpu_family(const struct arch *a)
{
	static const char *const map[][2] = {
		{ "i386", "x86" }, { "i486", "x86" }, { "i586", "x86" }, { "i686", "x86" },
		{ "powerpc64le", "ppc64" }, { "powerpc64", "ppc64" },
		{ "powerpc", "ppc" }, { "mips64el", "mips64" }, { "mipsel", "mips" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(a->gnu_cpu, map[i][0]))
			return map[i][1];
	return a->gnu_cpu;
}

/*
 * Meson reads no path relative to a cross file before 1.3 (@DIRNAME@): the binaries are named
 * bare and found first in sdk/bin, which the environment script puts at the front of PATH.
 */
void sdkfiles_meson(const struct arch *a, struct buf *out)
{
	const char *t = a->triplet;

	buf_addf(out, "# mkimage SDK: cross-building for %s (%s) with Meson, after sourcing\n"
		 "# environment-setup-%s (it puts the SDK's sdk/bin first in PATH):\n"
		 "#   meson setup --cross-file \"$MESON_CROSS_FILE\" BUILDDIR\n"
		 "[binaries]\nc = '%s-gcc'\ncpp = '%s-g++'\nar = '%s-ar'\nstrip = '%s-strip'\n"
		 "pkg-config = '%s-pkg-config'\n\n", a->name, t, t, t, t, t, t, t);
	buf_addf(out, "[host_machine]\nsystem = 'linux'\ncpu_family = '%s'\ncpu = '%s'\n"
		 "endian = '%s'\n", sdkfiles_meson_cpu_family(a), a->gnu_cpu,
		 a->elf_data == 2 ? "big" : "little");
}

void sdkfiles_wrapper(const struct arch *a, const char *tool, int sysroot, struct buf *out)
{
	buf_addf(out, "#!/bin/sh\n# mkimage SDK: %s-%s of the SDK%s, with the SDK's host "
		 "libraries.\n" SH_ROOT SH_LIBS "exec \"$sdk/usr/bin/%s-%s\" %s\"$@\"\n",
		 a->triplet, tool, sysroot ? " against its own tree (--sysroot)" : "", a->triplet,
		 tool, sysroot ? "--sysroot=\"$sdk\" " : "");
}

void sdkfiles_pkgconfig(const struct arch *a, struct buf *out)
{
	buf_addf(out, "#!/bin/sh\n# mkimage SDK: pkg-config for %s (%s): the target's .pc files "
		 "in the SDK, never the build host's.\n" SH_ROOT SH_LIBS
		 "PKG_CONFIG_SYSROOT_DIR=$sdk\n"
		 "PKG_CONFIG_LIBDIR=$sdk/usr/lib/%s/pkgconfig:$sdk/usr/share/pkgconfig\n"
		 "export PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR\n"
		 "exec \"$sdk/usr/bin/pkgconf\" \"$@\"\n", a->name, a->triplet, a->triplet);
}

int sdkfiles_is_libc(const char *name)
{
	static const char *const glibc[] = {
		"ld-linux", "libc.so", "libm.so", "libmvec.so", "libpthread.so", "libdl.so",
		"librt.so", "libresolv.so", "libutil.so", "libanl.so", "libBrokenLocale.so",
		"libnss_", "libc_malloc_debug.so", "libthread_db.so", "libmemusage.so",
		"libpcprofile.so", "libnsl.so.1", "libcrypt.so.1", NULL,
	};
	size_t i;

	for (i = 0; glibc[i]; i++)
		if (str_starts_with(name, glibc[i]))
			return 1;
	return 0;
}

static int write_text(struct staging_writer *w, const char *path, struct buf *b, uint32_t mode)
{
	int ret = staging_write_file(w, path, b->p ? b->p : "", b->len, mode);

	buf_release(b);
	return ret;
}

static int write_target(struct staging_writer *w, const struct arch *a, const char *glibc)
{
	struct buf b = { 0 };
	char *path;
	size_t i;
	int ret;

	sdkfiles_env(a, glibc, &b);
	path = xasprintf("environment-setup-%s", a->triplet);
	ret = write_text(w, path, &b, 0644);
	free(path);
	for (i = 0; !ret && i < 3; i++) {
		static const char *const cc[] = { "gcc", "g++", "cpp" };

		sdkfiles_wrapper(a, cc[i], 1, &b);
		path = xasprintf("sdk/bin/%s-%s", a->triplet, cc[i]);
		ret = write_text(w, path, &b, 0755);
		free(path);
	}
	for (i = 0; !ret && binutils[i]; i++) {
		sdkfiles_wrapper(a, binutils[i], 0, &b);
		path = xasprintf("sdk/bin/%s-%s", a->triplet, binutils[i]);
		ret = write_text(w, path, &b, 0755);
		free(path);
	}
	if (!ret) {
		sdkfiles_pkgconfig(a, &b);
		path = xasprintf("sdk/bin/%s-pkg-config", a->triplet);
		ret = write_text(w, path, &b, 0755);
		free(path);
	}
	if (!ret) {
		sdkfiles_cmake(a, &b);
		path = xasprintf("sdk/cmake/%s.cmake", a->triplet);
		ret = write_text(w, path, &b, 0644);
		free(path);
	}
	if (!ret) {
		sdkfiles_meson(a, &b);
		path = xasprintf("sdk/meson/%s.ini", a->triplet);
		ret = write_text(w, path, &b, 0644);
		free(path);
	}
	return ret;
}

static int name_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

/* One link sdk/hostlibs/NAME -> ../../usr/lib/TRIPLET/NAME. */
static int link_hostlib(struct staging_writer *w, int dirfd, const char *triplet, const char *name)
{
	char *target = xasprintf("../../usr/lib/%s/%s", triplet, name);
	char *path = xasprintf("sdk/hostlibs/%s", name);
	int ret = symlinkat(target, dirfd, name) ? -errno : 0;

	if (ret) {
		log_error("cannot create '/%s' in the SDK's tree: %s", path, strerror(-ret));
	} else {
		staging_chown(w, dirfd, name, 0, 0);
		staging_own_entry(w, path, MF_SYMLINK, 0777)->target = target;
		target = NULL;
	}
	free(target);
	free(path);
	return ret;
}

/*
 * sdk/hostlibs: the SDK's host libraries (usr/lib/TRIPLET/lib*.so*: binutils' libbfd has no
 * version suffix) but the C library's, so
 * that its compilers run with the build host's C library and the SDK's own libmpc, libisl,
 * libzstd..., whatever the host has installed. Names only come from the tree: only printable
 * ones are linked, each by a link written here, never followed.
 */
static int write_hostlibs(struct staging_writer *w)
{
	const struct arch *host = arch_find(arch_host());
	char *libdir = xasprintf("usr/lib/%s", host->triplet);
	int dfd = beneath_open_canonical(w->rootfd, libdir, O_RDONLY | O_DIRECTORY), out = -1;
	struct dirent *de;
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	int ret = staging_mkdirs(w, "sdk/hostlibs");

	if (!d) {
		ret = log_errno(dfd < 0 ? dfd : -errno, "cannot read '/%s' in the SDK's tree: %m",
				libdir);
		if (dfd >= 0)
			close(dfd);
	}
	if (!ret && (out = beneath_open_canonical(w->rootfd, "sdk/hostlibs",
						  O_PATH | O_DIRECTORY)) < 0)
		ret = log_errno(out, "cannot open '/sdk/hostlibs' in the SDK's tree: %m");
	while (!ret && (de = readdir(d)))
		if (str_starts_with(de->d_name, "lib") &&
		    (strstr(de->d_name, ".so.") || str_ends_with(de->d_name, ".so")) &&
		    name_printable(de->d_name) && !sdkfiles_is_libc(de->d_name) &&
		    (de->d_type == DT_REG || de->d_type == DT_LNK))
			ret = link_hostlib(w, out, host->triplet, de->d_name);
	if (d)
		closedir(d);
	if (out >= 0)
		close(out);
	free(libdir);
	return ret;
}

char *sdkfiles_relative_target(const char *path, const char *target)
{
	struct buf b = { 0 };
	const char *p;

	for (p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
		buf_adds(&b, "../");
	buf_adds(&b, target + strspn(target, "/"));
	if (!b.len)
		buf_adds(&b, ".");
	return buf_detach(&b);
}

/* One absolute link made relative, in the tree (its parent opened beneath the root) and in `m`. */
static int relink(struct staging_writer *w, struct manifest_entry *e)
{
	const char *slash = strrchr(e->path, '/'), *name = slash ? slash + 1 : e->path;
	char *parent = xstrndup(e->path, slash ? (size_t)(slash - e->path) : 0);
	char *target = sdkfiles_relative_target(e->path, e->target);
	int dfd = beneath_open_canonical(w->rootfd, parent, O_PATH | O_DIRECTORY), ret = 0;

	if (dfd < 0 || unlinkat(dfd, name, 0) || symlinkat(target, dfd, name))
		ret = log_errno(dfd < 0 ? dfd : -errno, "cannot make the link '/%s' -> '%s' "
				"relative in the SDK's tree: %m", e->path, e->target);
	if (!ret) {
		staging_chown(w, dfd, name, e->uid, e->gid);
		free(e->target);
		e->target = target;
		target = NULL;
	}
	if (dfd >= 0)
		close(dfd);
	free(target);
	free(parent);
	return ret;
}

/*
 * Every absolute link of the tree made relative (/usr/lib/T/libz.so -> /lib/T/libz.so.1 becomes
 * ../../../lib/T/libz.so.1): a link out of the SDK would name the build host's file, or none,
 * wherever the SDK is unpacked, and linkers and CMake's find_library follow them.
 */
static int relative_links(struct staging_writer *w)
{
	size_t i, n = 0;
	int ret = 0;

	for (i = 0; !ret && i < w->m->n; i++) {
		struct manifest_entry *e = w->m->v[i];

		if (e->type == MF_SYMLINK && e->target && e->target[0] == '/') {
			ret = relink(w, e);
			n++;
		}
	}
	if (!ret)
		log_info("sdk: %zu absolute links made relative", n);
	return ret;
}

int sdkfiles_write(struct staging *s, const struct strv *targets, const char *glibc,
		   int64_t mtime)
{
	int rootfd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct staging_writer w = { rootfd, &s->manifest, mtime < 0 ? 0 : mtime, 1 };
	size_t i;
	int ret = rootfd < 0 ? log_errno(-errno, "cannot open the SDK's tree '%s': %m", s->root)
			     : 0;

	if (!ret)
		ret = staging_mkdirs(&w, "sdk/bin");
	if (!ret)
		ret = staging_mkdirs(&w, "sdk/cmake");
	if (!ret)
		ret = staging_mkdirs(&w, "sdk/meson");
	for (i = 0; !ret && i < targets->n; i++)
		ret = write_target(&w, arch_find(targets->v[i]), glibc);
	if (!ret)
		ret = write_hostlibs(&w);
	if (!ret)
		ret = relative_links(&w);
	if (rootfd >= 0)
		close(rootfd);
	return ret;
}
