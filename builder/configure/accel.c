/*
 * Native tools for emulated maintainer scripts (see accel.h): choosing the host-arch twins of
 * the plan's programs, extracting them into a private copy, and the table mkimage-exec reads.
 */
#include "accel.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accel_internal.h"
#include "debian/arch.h"
#include "debian/deb.h"
#include "debian/deb822.h"
#include "debian/pkgindex.h"
#include "debian/relation.h"
#include "execprof.h"
#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/url.h"
#include "sandbox/idshift.h"
#include "sandbox/sandbox.h"

#define LIB_PREFIX "/lib/" MKI_HOST_MULTIARCH "/"
#define USRLIB_PREFIX "/usr/lib/" MKI_HOST_MULTIARCH "/"
#define TOOLS_SUBDIR "mkimage-accel"
#define MAX_ELF_DYNAMIC (1u << 20)

struct prep {
	const char *const *only; /* the programs of the twin being extracted, or NULL: all */
	const struct strv *emulated; /* --no-native-tools=PROGRAM,...: left emulated */
	struct strv kept;            /* those of them that had a native build here */
	struct accel *a;
	const struct plan *p;
	int rootfd;
	const char *dpkg_arch; /* the architecture of the tree's dpkg, when emulated */
	struct strv bins; /* target paths of the extracted programs; copy i is TOOLS_SUBDIR/i */
	struct buf table;
};

char *accel_source_version(const char *version)
{
	const char *b = NULL, *q;
	size_t n;

	for (q = version; (q = strstr(q, "+b")); q++)
		b = q;
	n = b ? strspn(b + 2, "0123456789") : 0;

	if (b && n && !b[2 + n])
		return xstrndup(version, (size_t)(b - version));
	return xstrdup(version);
}

/* --- ELF ------------------------------------------------------------------------------------ */

static int pread_all(int fd, void *p, size_t n, off_t off)
{
	ssize_t r = pread(fd, p, n, off);

	return r == (ssize_t)n ? 0 : r < 0 ? -errno : -ENOEXEC;
}

/* File offset of virtual address `va` through the PT_LOAD segments. */
static off_t va_offset(const ElfW(Phdr) *ph, size_t n, ElfW(Addr) va)
{
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
		    va < ph[i].p_vaddr + ph[i].p_filesz)
			return (off_t)(ph[i].p_offset + (va - ph[i].p_vaddr));
	return -1;
}

static int read_dynamic(int fd, const ElfW(Phdr) *ph, size_t n, struct strv *needed,
			struct strv *runpath)
{
	ElfW(Dyn) *dyn = NULL;
	ElfW(Addr) strtab = 0;
	size_t nd = 0, strsz = 0, i;
	char *str = NULL;
	off_t off;
	int ret = 0;

	for (i = 0; i < n && !dyn; i++)
		if (ph[i].p_type == PT_DYNAMIC && ph[i].p_filesz <= MAX_ELF_DYNAMIC) {
			nd = ph[i].p_filesz / sizeof(*dyn);
			dyn = xmalloc(nd * sizeof(*dyn) + 1);
			ret = pread_all(fd, dyn, nd * sizeof(*dyn), (off_t)ph[i].p_offset);
		}
	for (i = 0; !ret && i < nd && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
	}
	if (ret || !dyn || !strsz || strsz > MAX_ELF_DYNAMIC || (off = va_offset(ph, n, strtab)) < 0)
		goto out;
	str = xmalloc(strsz + 1);
	str[strsz] = 0;
	ret = pread_all(fd, str, strsz, off);
	for (i = 0; !ret && i < nd && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_NEEDED && dyn[i].d_un.d_val < strsz)
			strv_push(needed, str + dyn[i].d_un.d_val);
		else if (runpath && (dyn[i].d_tag == DT_RUNPATH || dyn[i].d_tag == DT_RPATH) &&
			 dyn[i].d_un.d_val < strsz)
			strv_push(runpath, str + dyn[i].d_un.d_val);
out:
	free(dyn);
	free(str);
	return ret;
}

/* Only ELF files of the host's own class and machine are native here. */
static int open_host_elf(const char *path, ElfW(Ehdr) *eh)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = pread_all(fd, eh, sizeof(*eh), 0);
	if (!ret && (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
		     eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phnum > 256))
		ret = -ENOEXEC;
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int accel_elf_needed(const char *path, struct strv *needed)
{
	return accel_elf_dynamic(path, needed, NULL);
}

int accel_elf_dynamic(const char *path, struct strv *needed, struct strv *runpath)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) *ph = NULL;
	int fd = open_host_elf(path, &eh), ret;

	if (fd < 0)
		return fd;
	ph = xcalloc(eh.e_phnum + 1u, sizeof(*ph));
	ret = pread_all(fd, ph, eh.e_phnum * sizeof(*ph), (off_t)eh.e_phoff);
	if (!ret)
		ret = read_dynamic(fd, ph, eh.e_phnum, needed, runpath);
	free(ph);
	close(fd);
	return ret;
}

/* The basename of the ELF interpreter of `path` ("ld-linux-x86-64.so.2"). New string or NULL. */
static char *elf_interp_name(const char *path)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph;
	char interp[256] = "";
	int fd = open_host_elf(path, &eh), i;

	if (fd < 0)
		return NULL;
	for (i = 0; i < eh.e_phnum && !interp[0]; i++)
		if (!pread_all(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (size_t)i * sizeof(ph))) &&
		    ph.p_type == PT_INTERP && ph.p_filesz < sizeof(interp))
			pread_all(fd, interp, ph.p_filesz, (off_t)ph.p_offset);
	close(fd);
	return interp[0] && strrchr(interp, '/') ? xstrdup(strrchr(interp, '/') + 1) : NULL;
}

/* --- choosing the twins ---------------------------------------------------------------------- */

struct cand {
	char *name, *version, *url, *sha256;
	uint64_t size;
	struct strv deps; /* package names of Pre-Depends and Depends, alternatives included */
	int chosen;
};

struct select {
	const struct plan *p;
	struct cand *v;
	size_t n, alloc;
};

/* The emulated, arch-specific plan entry called `name`, or NULL. */
static const struct plan_entry *plan_emulated(const struct plan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].name, name) && strcmp(p->v[i].arch, "all") &&
		    arch_find(p->v[i].arch) && !arch_runs_natively(arch_find(p->v[i].arch)))
			return &p->v[i];
	return NULL;
}

/* The package names of a Depends field, alternatives included; a malformed rest is ignored. */
static void split_deps(const char *field, struct strv *out)
{
	struct relation_iter it;
	struct relation r;

	if (!field)
		return;
	relation_iter_init(&it, field, strlen(field));
	while (relation_next(&it, &r) > 0)
		strv_push_take(out, xstrndup(r.name, r.name_len));
}

/* A stanza of the host arch's index that is the same source version as a plan entry. */
static void consider(struct select *x, const struct deb822 *d, const char *base)
{
	const char *name = deb822_get(d, "Package"), *ver = deb822_get(d, "Version");
	const char *file = deb822_get(d, "Filename"), *sha = deb822_get(d, "SHA256");
	const char *size = deb822_get(d, "Size");
	const struct plan_entry *e = name ? plan_emulated(x->p, name) : NULL;
	char *v1, *v2;
	struct cand *c;
	int same;

	if (!e || !ver || !file || !sha || strlen(sha) != 64 || !size)
		return;
	v1 = accel_source_version(ver);
	v2 = accel_source_version(e->version);
	same = !strcmp(v1, v2);
	free(v1);
	free(v2);
	if (!same)
		return;
	ALLOC_GROW(x->v, x->n + 1, x->alloc);
	c = &x->v[x->n++];
	memset(c, 0, sizeof(*c));
	c->name = xstrdup(name);
	c->version = xstrdup(ver);
	c->url = url_join(base, file);
	c->sha256 = xstrdup(sha);
	c->size = strtoull(size, NULL, 10);
	split_deps(deb822_get(d, "Pre-Depends"), &c->deps);
	split_deps(deb822_get(d, "Depends"), &c->deps);
}

static int read_candidates(struct select *x, const struct pkgindex *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct deb822 d;
		int r;

		if ((r = deb822_open(&d, v[i].path)) < 0) {
			log_error("cannot read index '%s': %s", v[i].path, strerror(-r));
			return r;
		}
		while ((r = deb822_next(&d)) == 1)
			consider(x, &d, v[i].base);
		deb822_close(&d);
		if (r < 0)
			return r;
	}
	return 0;
}

static struct cand *cand_find(struct select *x, const char *name)
{
	for (size_t i = 0; i < x->n; i++)
		if (!strcmp(x->v[i].name, name))
			return &x->v[i];
	return NULL;
}

static void choose(struct select *x, struct cand *c)
{
	if (!c || c->chosen)
		return;
	c->chosen = 1;
	for (size_t i = 0; i < c->deps.n; i++)
		choose(x, cand_find(x, c->deps.v[i]));
	for (const char *const *o = accel_tools_dlopened(c->name); o && *o; o++)
		choose(x, cand_find(x, *o));
}

int accel_select(const struct pkgindex *v, size_t n, const struct plan *p, struct plan *twins,
		 const char *from)
{
	struct select x = { .p = p };
	const char *const *t;
	size_t i;
	int ret = read_candidates(&x, v, n);

	memset(twins, 0, sizeof(*twins));
	for (t = accel_tools_packages(); !ret && *t; t++)
		choose(&x, cand_find(&x, *t));
	for (i = 0; i < x.n; i++) {
		struct cand *c = &x.v[i];

		if (!ret && c->chosen) {
			struct plan_entry *e;

			ALLOC_GROW(twins->v, twins->n + 1, twins->alloc);
			e = &twins->v[twins->n++];
			memset(e, 0, sizeof(*e));
			e->name = c->name;
			e->arch = xstrdup(arch_host());
			e->version = c->version;
			e->url = c->url;
			e->size = c->size;
			memcpy(e->sha256, c->sha256, 65);
			c->name = c->version = c->url = NULL;
		}
		free(c->name);
		free(c->version);
		free(c->url);
		free(c->sha256);
		strv_release(&c->deps);
	}
	free(x.v);
	if (twins->n)
		log_info("native tools: %zu twin packages (host-architecture builds of the plan's "
			 "versions, not installed) from %s", twins->n, from);
	return ret;
}

/* --- the private copy ------------------------------------------------------------------------- */

/* Write what `rd` yields into a new file `dst` (never through a symlink there). 0 or -errno. */
static int write_from(const char *dst, mode_t mode, ssize_t (*rd)(void *, void *, size_t),
		      void *src)
{
	int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode & 0755);
	char chunk[1 << 16];
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	while ((n = rd(src, chunk, sizeof(chunk))) > 0 && !ret)
		ret = fsutil_write_all(fd, chunk, (size_t)n);
	if (n < 0 && !ret)
		ret = -EIO;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

static ssize_t read_fd(void *fd, void *buf, size_t n)
{
	return read(*(int *)fd, buf, n);
}

static ssize_t read_deb(void *d, void *buf, size_t n)
{
	return deb_read(d, buf, n);
}

static int copy_file(const char *src, const char *dst, mode_t mode)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), ret;

	if (in < 0)
		return -errno;
	ret = write_from(dst, mode, read_fd, &in);
	close(in);
	return ret;
}

/* "usr/lib/T/x" or "lib/T/x" -> "x"; NULL for anything else or anything climbing out. */
static const char *lib_rel(const char *path)
{
	const char *rel = NULL;

	if (str_starts_with(path, &USRLIB_PREFIX[1]))
		rel = path + strlen(USRLIB_PREFIX) - 1;
	else if (str_starts_with(path, &LIB_PREFIX[1]))
		rel = path + strlen(LIB_PREFIX) - 1;
	if (!rel || !*rel || strstr(rel, "..") || rel[0] == '/')
		return NULL;
	return rel;
}

static int is_tool_path(const char *path)
{
	static const char *const dirs[] = { "usr/bin/", "usr/sbin/", "bin/", "sbin/", NULL };
	const char *const *d;

	if (accel_tools_lib_program(path))
		return 1;
	for (d = dirs; *d; d++)
		if (str_starts_with(path, *d))
			return path[strlen(*d)] && !strchr(path + strlen(*d), '/') &&
			       strcmp(path + strlen(*d), "..") && strcmp(path + strlen(*d), ".");
	return 0;
}

/* The copy of program `path` ("usr/bin/x") extracted earlier, or NULL. New string. */
static char *bin_copy(struct prep *x, const char *path)
{
	for (size_t i = 0; i < x->bins.n; i++)
		if (!strcmp(x->bins.v[i] + 1, path))
			return xasprintf("%s/" TOOLS_SUBDIR "/%zu", x->a->dir, i);
	return NULL;
}

/*
 * Whether every directory above `rel` in the copy that exists is a real directory: a twin's
 * symlink must never redirect a later entry (or a hardlink source) outside the copy.
 */
static int parents_real(struct prep *x, const char *rel)
{
	const char *slash = rel;
	struct stat sb;
	int ok = 1;

	while (ok && (slash = strchr(slash, '/'))) {
		char *dir = xasprintf("%s/%.*s", x->a->dir, (int)(slash - rel), rel);

		ok = lstat(dir, &sb) < 0 ? errno == ENOENT : S_ISDIR(sb.st_mode);
		free(dir);
		slash++;
	}
	return ok;
}

/* One data.tar entry of a twin: libraries into the copy, programs of tool packages aside. */
static int extract_entry(struct prep *x, struct deb *d, const struct deb_entry *e, int tools)
{
	const char *path = e->path + (str_starts_with(e->path, "./") ? 2 : 0), *rel = lib_rel(path);
	char *dst = NULL, *src = NULL;
	struct stat sb;
	int ret = 0;

	if (rel && !parents_real(x, rel)) {
		log_debug("native tools: '%s' lies beyond a symlink: not extracted", path);
		return 0;
	}
	if (rel)
		dst = xasprintf("%s/%s", x->a->dir, rel);
	else if (tools && is_tool_path(path) && (e->type == 'f' || e->type == 'h') &&
		 (!x->only || accel_tools_in(x->only, strrchr(path, '/') + 1)))
		dst = xasprintf("%s/" TOOLS_SUBDIR "/%zu", x->a->dir, x->bins.n);
	if (!dst)
		return 0;
	if (e->type == 'd')
		ret = fsutil_mkdirs(dst);
	else if (e->type == 'f')
		ret = write_from(dst, e->mode, read_deb, d);
	else if (e->type == 'l')
		ret = symlink(e->target, dst) < 0 && errno != EEXIST ? -errno : 0;
	else if (e->type == 'h' && e->target) {
		const char *t = e->target + (str_starts_with(e->target, "./") ? 2 : 0);
		const char *trel = lib_rel(t);

		src = trel && parents_real(x, trel) ? xasprintf("%s/%s", x->a->dir, trel)
			  : trel ? NULL : bin_copy(x, t);
		if (src && (lstat(src, &sb) < 0 || !S_ISREG(sb.st_mode))) {
			free(src);
			src = NULL;
		}
		ret = src ? copy_file(src, dst, 0755) : 0;
	}
	if (!ret && !rel && (e->type == 'f' || (e->type == 'h' && src))) {
		strv_push_take(&x->bins, xasprintf("/%s", path));
		x->a->n_files++;
	} else
		x->a->n_files += !ret && e->type == 'f';
	if (ret)
		log_warn("native tools: cannot extract '%s' to '%s': %s", path, dst, strerror(-ret));
	free(dst);
	free(src);
	return ret;
}

static int extract_twin(struct prep *x, const struct plan_entry *t)
{
	struct deb *d = NULL;
	struct deb_entry e = { 0 };
	int tools = accel_tools_in(accel_tools_packages(), t->name), r = 0;
	int ret = deb_open(&d, t->path, NULL);

	x->only = accel_tools_only(t->name);
	while (!ret && (r = deb_next(d, &e)) == 1)
		ret = extract_entry(x, d, &e, tools);
	if (!ret && r < 0)
		ret = r;
	if (ret && d && deb_error(d)[0])
		log_warn("native tools: '%s': %s", t->path, deb_error(d));
	deb_entry_release(&e);
	deb_free(d);
	return ret ? -MKI_E_PACKAGE : 0;
}

/*
 * Where the loader finds library `name` in the copy: in a RUNPATH directory of the copy (systemd's
 * private library), else in the copy's top. New string, or NULL when it is in neither.
 */
static char *lib_in_copy(struct prep *x, const char *name, const struct strv *runpath)
{
	char *lib;

	for (size_t i = 0; i < runpath->n; i++) {
		const char *dir = runpath->v[i];

		while (*dir) {
			size_t n = strcspn(dir, ":");
			char *full = xasprintf("%.*s/%s", (int)n, dir, name);
			const char *rel = full[0] == '/' ? lib_rel(full + 1) : NULL;

			lib = rel ? xasprintf("%s/%s", x->a->dir, rel) : NULL;
			free(full);
			if (lib && access(lib, R_OK) == 0)
				return lib;
			free(lib);
			dir += n + (dir[n] == ':');
		}
	}
	lib = xasprintf("%s/%s", x->a->dir, name);
	if (access(lib, R_OK) == 0)
		return lib;
	free(lib);
	return NULL;
}

/* Every DT_NEEDED of `path`, recursively, exists in the copy. */
static int closure_complete(struct prep *x, const char *path, struct strv *seen)
{
	struct strv needed = { 0 }, runpath = { 0 };
	size_t i;
	int ok = accel_elf_dynamic(path, &needed, &runpath) == 0;

	for (i = 0; ok && i < needed.n; i++) {
		char *lib;

		if (strv_contains(seen, needed.v[i]))
			continue;
		strv_push(seen, needed.v[i]);
		lib = lib_in_copy(x, needed.v[i], &runpath);
		ok = lib && closure_complete(x, lib, seen);
		if (!ok)
			log_debug("native tools: '%s' needs '%s', which the plan lacks in the host's "
				  "arch", path, needed.v[i]);
		free(lib);
	}
	strv_release(&needed);
	strv_release(&runpath);
	return ok;
}

/* --- tools ------------------------------------------------------------------------------------ */

/* The table's FLAGS word for program `base`: which of its invocations may run natively. */
static const char *program_flags(const char *base)
{
	const char *builtins = getenv("MKIMAGE_EXEC_BUILTINS"), *flags = accel_tools_flags(base);

	if (!flags)
		return "any";
	/* a builtin's word is its program's name: MKIMAGE_EXEC_BUILTINS=0 leaves it to the program */
	return builtins && !strcmp(builtins, "0") && !strcmp(flags, base) ? "any" : flags;
}

/*
 * How far the copy of program `base` may stand in for the target's: its table FLAGS word, or NULL
 * (not at all). dpkg's programs are retargeted here, once each: then every invocation is native,
 * else dpkg's version arithmetic only.
 */
static const char *native_scope(struct prep *x, const char *base, const char *copy)
{
	const char *why = "the tree's dpkg is not emulated";
	int r = -ENOENT;

	if (!accel_tools_dpkg_program(base))
		return program_flags(base);
	if (x->dpkg_arch)
		r = accel_retarget(copy, arch_host(), x->dpkg_arch, &why);
	if (r >= 0) {
		x->a->n_dpkg++;
		return "any";
	}
	log_debug("native tools: '%s' stays emulated but for version arithmetic: %s", base, why);
	return !strcmp(base, "dpkg") ? "versions" : NULL;
}

/* Program i of the twins replaces the target's file at the same path, when all is in place. */
static void add_tool(struct prep *x, size_t i)
{
	const char *path = x->bins.v[i], *base = strrchr(path, '/') + 1, *scope;
	char *copy = xasprintf("%s/" TOOLS_SUBDIR "/%zu", x->a->dir, i);
	struct strv seen = { 0 };
	struct stat tsb;
	ElfW(Ehdr) eh;
	int fd, python;

	if (strv_contains(x->emulated, base)) {
		if (!strv_contains(&x->kept, base))
			strv_push(&x->kept, base);
		log_debug("native tools: %s stays emulated (--no-native-tools=%s)", path, base);
		goto out;
	}
	/*
	 * The tree's file at the same path, not what a symlink there points to: an alternative
	 * may name another program. A script runs through its (possibly native) interpreter.
	 */
	if (accel_tools_machine_dependent(base) ||
	    beneath_lstat(x->rootfd, path + 1, &tsb) < 0 ||
	    !S_ISREG(tsb.st_mode) || (fd = open_host_elf(copy, &eh)) < 0)
		goto out;
	close(fd);
	if (!closure_complete(x, copy, &seen) || !(scope = native_scope(x, base, copy)))
		goto out;
	python = accel_tools_python(base);
	buf_addf(&x->table, "native %llu %llu %llu %llu %llu %s /" ACCEL_MOUNT "/" TOOLS_SUBDIR
		 "/%zu\n", (unsigned long long)tsb.st_dev, (unsigned long long)tsb.st_ino,
		 (unsigned long long)tsb.st_size, (unsigned long long)tsb.st_mtim.tv_sec,
		 (unsigned long long)tsb.st_mtim.tv_nsec, python ? "pycompile" : scope, i);
	x->a->n_tools++;
	x->a->python |= python;
	log_debug("native tools: %s", path);
out:
	strv_release(&seen);
	free(copy);
}

/* qemu for each emulated machine, in the copy: mkimage-exec falls back to it. */
static int add_emulators(struct prep *x)
{
	const struct arch *t = arch_table();
	struct strv done = { 0 };
	int ret = 0;

	for (; !ret && t->name; t++) {
		char *name, *src, *dst;

		if (!t->qemu || !sandbox_arch_emulated(t->name) || strv_contains(&done, t->qemu))
			continue;
		strv_push(&done, t->qemu);
		name = xasprintf("%s-static", t->qemu);
		src = proc_which(name);
		dst = xasprintf("%s/" TOOLS_SUBDIR "/%s", x->a->dir, name);
		ret = src ? copy_file(src, dst, 0755) : -ENOENT;
		if (ret)
			log_error("cannot copy '%s' for the native tools: %s", name, strerror(-ret));
		buf_addf(&x->table, "qemu %u %u /" ACCEL_MOUNT "/" TOOLS_SUBDIR "/%s\n",
			 t->elf_machine, t->elf_class, name);
		free(name);
		free(src);
		free(dst);
	}
	strv_release(&done);
	return ret;
}

/* --- prepare / release ------------------------------------------------------------------------ */

/* mkimage-exec beside this program (the build tree, or an installed bin/ with ../lib/mkimage). */
static char *find_dispatcher(void)
{
	char exe[4096], *slash, *path;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	*slash = 0;
	path = xasprintf("%s/mkimage-exec", exe);
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	path = xasprintf("%s/../lib/mkimage/mkimage-exec", exe);
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	return NULL;
}

static int emulated_any(const struct prep *x)
{
	for (size_t i = 0; i < x->p->archs.n; i++)
		if (sandbox_arch_emulated(x->p->archs.v[i]))
			return 1;
	return 0;
}

/* Why nothing can be accelerated, or NULL when something might. */
static const char *unusable(struct prep *x, const struct plan *twins)
{
	const struct sandbox_info *si = sandbox_get();
	struct stat sb;
	size_t i;

	if (!emulated_any(x))
		return "no architecture is emulated";
	if (!twins || !twins->n)
		return "the repositories have none of the plan's programs in the host's architecture";
	for (i = 0; i < twins->n; i++)
		if (!twins->v[i].path)
			return "not every host-architecture package could be fetched";
	if (!si || !si->binfmt_private)
		return "no private binfmt_misc instance";
	if (beneath_lstat(x->rootfd, ACCEL_MOUNT, &sb) != -ENOENT)
		return "the tree has the host's multiarch directory";
	return NULL;
}

/*
 * The basename of the ELF interpreter of the host's shell build, which must be in the copy. The
 * shell is /bin/dash up to bookworm, /usr/bin/dash in packages laid out for merged /usr (trixie).
 */
static char *loader_in_copy(struct prep *x)
{
	char *sh = bin_copy(x, "bin/dash"), *name, *path;

	if (!sh)
		sh = bin_copy(x, "usr/bin/dash");
	name = sh ? elf_interp_name(sh) : NULL;

	free(sh);
	if (!name)
		return NULL;
	path = xasprintf("%s/%s", x->a->dir, name);
	if (access(path, X_OK) < 0) {
		free(name);
		name = NULL;
	}
	free(path);
	return name;
}

static int build_copy(struct prep *x, const struct plan *twins, char **loader)
{
	char *tools = xasprintf("%s/" TOOLS_SUBDIR, x->a->dir);
	size_t i;
	int ret = fsutil_mkdirs(tools);

	free(tools);
	for (i = 0; !ret && i < twins->n; i++)
		ret = extract_twin(x, &twins->v[i]);
	if (ret || !(*loader = loader_in_copy(x)))
		return ret;
	buf_addf(&x->table, "loader /" ACCEL_MOUNT "/%s\n", *loader);
	for (i = 0; i < x->bins.n; i++)
		add_tool(x, i);
	if (x->a->n_tools)
		ret = add_emulators(x);
	if (!ret && x->a->python)
		ret = accel_python_write(x->a->dir);
	return ret;
}

/*
 * With -v, mkimage-exec records what it runs (execprof.h) into a file bound writable; the
 * py_compile guard notes there the files it left to the emulated interpreter, also without -v.
 */
static int add_record(struct prep *x)
{
	x->a->profiling = log_get_level() >= LOG_DEBUG;
	if (!x->a->profiling && !x->a->python)
		return 0;
	x->a->profile = xasprintf("%s/" TOOLS_SUBDIR "/profile", x->a->dir);
	if (x->a->profiling)
		buf_addf(&x->table, "profile /" ACCEL_PROFILE "\n");
	return execprof_create(x->a->profile, idshift_tree_uid(0), idshift_tree_gid(0));
}

/* The mount point belongs to the commands' root (root builds shift the tree's owners). */
static int chown_mount_point(int rootfd)
{
	int fd = beneath_open(rootfd, ACCEL_MOUNT, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0), ret = 0;

	if (fd < 0)
		return fd;
	if (fchownat(fd, "", idshift_tree_uid(0), idshift_tree_gid(0), AT_EMPTY_PATH) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int activate(struct prep *x, const char *dispatcher)
{
	char *table = xasprintf("%s/" TOOLS_SUBDIR "/table", x->a->dir);
	int ret = add_record(x);

	if (!ret)
		ret = fsutil_write_atomic(table, x->table.p, x->table.len);

	free(table);
	if (!ret)
		ret = beneath_mkdir(x->rootfd, ACCEL_MOUNT, 0755);
	if (!ret)
		ret = chown_mount_point(x->rootfd);
	if (ret) {
		log_error("cannot set up native tools in '%s': %s", x->a->dir, strerror(-ret));
		return -MKI_E_HOOK;
	}
	ret = sandbox_set_interpreter(dispatcher);
	if (!ret)
		x->a->active = 1;
	return ret;
}

/* A name --no-native-tools gave that no native build here has: the switch did nothing for it. */
static void check_emulated(const struct prep *x)
{
	for (size_t i = 0; i < x->emulated->n; i++)
		if (!strv_contains(&x->kept, x->emulated->v[i]))
			log_warn("--no-native-tools=%s: no target program of that name has a native "
				 "build in this plan; every program it names runs as it would without "
				 "the option", x->emulated->v[i]);
}

int accel_prepare(struct accel *a, const struct plan *p, const struct plan *twins,
		  const struct strv *emulated, const char *root, const char *work_dir)
{
	const struct plan_entry *dpkg = plan_emulated(p, "dpkg");
	struct prep x = { .a = a, .p = p, .emulated = emulated,
			  .rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC),
			  .dpkg_arch = dpkg ? dpkg->arch : NULL };
	char *dispatcher = find_dispatcher(), *loader = NULL;
	const char *why = x.rootfd < 0 ? strerror(errno) : !dispatcher ? "mkimage-exec not found"
									: NULL;
	int ret = 0;

	memset(a, 0, sizeof(*a));
	a->dir = xasprintf("%s/accel", work_dir);
	a->root = xstrdup(root);
	if (!why)
		why = unusable(&x, twins);
	if (!why) {
		/* A twin that cannot be extracted only costs speed: emulation is always exact,
		 * so its messages say why at info level and one warning says what was used */
		enum log_level old = log_cap_severity(LOG_INFO);

		ret = build_copy(&x, twins, &loader);
		log_cap_severity(old);
		if (!ret)
			check_emulated(&x);
		if (ret)
			log_warn_instead("emulation for every target program (the same image, "
					 "slower)", "native tools: a host-architecture package could "
					 "not be set up (%s; the messages above say why)",
					 err_text(ret));
		why = ret ? "a host-architecture package could not be extracted"
		      : !loader ? "the host-architecture shell (dash) and its C library are not among the twins"
		      : !a->n_tools ? "no program can run natively" : NULL;
		ret = 0;
	}
	if (!ret && !why)
		ret = activate(&x, dispatcher);
	/* With nothing emulated every program is native anyway: no word about emulation. */
	if (why && !emulated_any(&x))
		log_debug("native tools: none needed (%s)", why);
	else if (why)
		log_info("native tools: none (%s); every target program is emulated", why);
	else if (!ret)
		log_info("native tools: %zu target programs run as their host-architecture build of "
			 "the same version (%zu packages, %zu files; dpkg's %zu as %s)", a->n_tools,
			 twins->n, a->n_files, a->n_dpkg, x.dpkg_arch ? x.dpkg_arch : "-");
	strv_release(&x.bins);
	strv_release(&x.kept);
	buf_release(&x.table);
	if (x.rootfd >= 0)
		close(x.rootfd);
	free(dispatcher);
	free(loader);
	return ret;
}

int accel_release(struct accel *a)
{
	int ret = 0, fd, r;

	if (a->active) {
		ret = sandbox_set_interpreter(NULL);
		/* Scripts ran: usr/lib may be a link now; it is followed inside the tree only. */
		fd = open(a->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		r = fd < 0 ? -errno : beneath_unlink(fd, ACCEL_MOUNT, AT_REMOVEDIR);
		if (r) {
			log_error("cannot remove the native tools' mount point '%s/%s': %s", a->root,
				  ACCEL_MOUNT, strerror(-r));
			ret = -MKI_E_HOOK;
		}
		if (fd >= 0)
			close(fd);
	}
	if (a->dir)
		fsutil_remove_tree(a->dir);
	free(a->dir);
	free(a->root);
	free(a->profile);
	memset(a, 0, sizeof(*a));
	return ret;
}
