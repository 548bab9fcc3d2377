/*
 * For suites whose modules run things in the build namespace (sandbox.h). Each test forks, so a
 * test may enter the namespace itself; whether this kernel lets it is found once per suite, by a
 * child that tries. Where it does not, the suite leaves those tests out and says so on stderr
 * ("SKIP: ..."): a skipped test is never counted as passed.
 *
 * A fake tree: an empty staging tree whose usr/lib and usr/lib64 are the host's and whose usr/bin
 * links to the host's programs, bound read-only in the test's own mount namespace, so commands
 * run in it (the host's /bin/sh, dpkg) without building a tree from packages; usr/sbin (with
 * stand-ins for ldconfig and start-stop-daemon), etc and var are the tree's own.
 */
#ifndef MKI_UNIT_SANDBOXED_H
#define MKI_UNIT_SANDBOXED_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"
#include "sandbox/idshift.h"
#include "sandbox/sandbox.h"

/* Whether sandbox_enter() works here (user namespaces allowed), tried in a child. */
static inline int unit_sandbox_usable(void)
{
	static int known = -1;
	struct sandbox_opts o = { .allow_single_id = 1 };
	int st = 0;
	pid_t pid;

	if (known >= 0)
		return known;
	pid = fork();
	if (pid == 0) {
		log_set_level(LOG_QUIET);
		_exit(sandbox_enter(&o) ? 1 : 0);
	}
	known = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
	return known;
}

/* Add `test` to `tc` when the sandbox works here, else say that it was skipped. */
#define UNIT_ADD_SANDBOXED(tc, test)                                                           \
	do {                                                                                   \
		if (unit_sandbox_usable())                                                     \
			tcase_add_test(tc, test);                                              \
		else                                                                           \
			fprintf(stderr, "SKIP: %s: no user namespace for the sandbox here\n",  \
				#test);                                                        \
	} while (0)

/* In a test: enter the build namespace (a single id when there is no subordinate range). */
static inline void unit_sandbox_enter(void)
{
	struct sandbox_opts o = { .allow_single_id = 1 };

	ck_assert_int_eq(sandbox_enter(&o), 0);
}

/* Create `rel` under `root` with `text` and `mode`, owned by the commands' root. */
static inline void unit_write(const char *root, const char *rel, const char *text, mode_t mode)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ck_assert_msg(fd >= 0, "cannot create '%s': %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	if (sandbox_get())
		ck_assert_int_eq(fchown(fd, idshift_tree_uid(0), idshift_tree_gid(0)), 0);
	close(fd);
}

/* The contents of `root`/`rel` (new string), or NULL when it cannot be read. */
static inline char *unit_read(const char *root, const char *rel)
{
	char path[4096], *text = NULL;
	size_t size = 0;
	FILE *f, *m;
	int c;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	m = open_memstream(&text, &size);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	fclose(f);
	return text;
}

/* Fail the test unless `root`/`rel` holds exactly `want`. */
static inline void unit_file_is(const char *root, const char *rel, const char *want)
{
	char *text = unit_read(root, rel);

	ck_assert_msg(text && !strcmp(text, want), "%s is '%s', want '%s'", rel,
		      text ? text : "(absent)", want);
	free(text);
}

static inline int unit_exists(const char *root, const char *rel)
{
	char path[4096];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return lstat(path, &sb) == 0;
}

static inline void unit_mkdir(const char *root, const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir '%s': %s", path,
		      strerror(errno));
	if (sandbox_get())
		ck_assert_int_eq(chown(path, idshift_tree_uid(0), idshift_tree_gid(0)), 0);
}

/* In a test: enter the build namespace and make the mkdtemp template `dir` an empty tree owned
 * by the commands' root, with `rel...` (a NULL-ended list) made in it; its O_PATH descriptor. */
static inline int unit_tree_new(char *dir, ...)
{
	const char *rel;
	va_list ap;
	int fd;

	unit_sandbox_enter();
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chown(dir, idshift_tree_uid(0), idshift_tree_gid(0)), 0);
	va_start(ap, dir);
	while ((rel = va_arg(ap, const char *)))
		unit_mkdir(dir, rel);
	va_end(ap);
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	return fd;
}

/* Remount the bind at `path` read-only, keeping the flags a user namespace may not clear. */
static inline void unit_readonly(const char *path)
{
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
	struct statvfs sv;

	ck_assert_int_eq(statvfs(path, &sv), 0);
	flags |= (sv.f_flag & ST_NOSUID ? MS_NOSUID : 0) | (sv.f_flag & ST_NODEV ? MS_NODEV : 0) |
		 (sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0) |
		 (sv.f_flag & ST_NOATIME ? MS_NOATIME : 0) |
		 (sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0) |
		 (sv.f_flag & ST_RELATIME ? MS_RELATIME : 0);
	ck_assert_msg(mount(NULL, path, NULL, flags, NULL) == 0, "remount '%s' read-only: %s", path,
		      strerror(errno));
}

/* Every program of the host's /usr/bin as a link in `dir`/usr/bin to `dir`/.host-bin (bound). */
static inline void unit_link_programs(const char *dir)
{
	char path[4096], target[512];
	struct dirent *e;
	DIR *d = opendir("/usr/bin");

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/usr/bin/%s", dir, e->d_name);
		snprintf(target, sizeof(target), "/.host-bin/%s", e->d_name);
		ck_assert_int_eq(symlink(target, path), 0);
	}
	closedir(d);
}

/*
 * After unit_sandbox_enter(): a fake tree in `dir` ("/tmp/...-XXXXXX", filled in) with the host's
 * programs and an empty dpkg database. The test's mount namespace (the build namespace) holds the
 * binds; they go with the test's process. usr/bin holds links, not a bind: mkimage looks at the
 * tree through openat2 without crossing mounts, and must find usr/bin/dpkg there.
 */
static inline void unit_fake_tree(char *dir)
{
	static const char *const dirs[] = { "usr", "usr/bin", "usr/lib", "usr/lib64", "usr/sbin",
		"etc", "dev", "var", "var/lib", "var/lib/dpkg", "var/lib/dpkg/info",
		"var/lib/dpkg/updates", "var/log", "root", ".host-bin", NULL };
	static const char *const links[][2] = { { "bin", "usr/bin" }, { "lib", "usr/lib" },
		{ "lib64", "usr/lib64" }, { "sbin", "usr/sbin" } };
	static const char *const binds[][2] = { { "/usr/bin", ".host-bin" },
		{ "/usr/lib", "usr/lib" }, { "/usr/lib64", "usr/lib64" } };
	char path[4096];
	size_t i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chown(dir, idshift_tree_uid(0), idshift_tree_gid(0)), 0);
	for (i = 0; dirs[i]; i++)
		unit_mkdir(dir, dirs[i]);
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, links[i][0]);
		ck_assert_int_eq(symlink(links[i][1], path), 0);
	}
	for (i = 0; i < sizeof(binds) / sizeof(binds[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, binds[i][1]);
		if (access(binds[i][0], F_OK) < 0)
			continue;
		ck_assert_msg(mount(binds[i][0], path, NULL, MS_BIND | MS_REC, NULL) == 0,
			      "bind '%s': %s", binds[i][0], strerror(errno));
		unit_readonly(path);
	}
	unit_link_programs(dir);
	unit_write(dir, "var/lib/dpkg/status", "", 0644);
	/* dpkg refuses to run without them in PATH; the host's /usr/sbin is not bound */
	unit_write(dir, "usr/sbin/ldconfig", "#!/bin/sh\nexit 0\n", 0755);
	unit_write(dir, "usr/sbin/start-stop-daemon", "#!/bin/sh\nexit 0\n", 0755);
}

static inline int unit_remove_one(const char *path, const struct stat *sb, int type,
				  struct FTW *ftw)
{
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* Remove a tree made by the test: its binds first, then its own files, never crossing a mount. */
static inline void unit_tree_remove(const char *dir)
{
	static const char *const binds[] = { ".host-bin", "usr/lib", "usr/lib64", NULL };
	char path[4096];
	size_t i;

	for (i = 0; binds[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, binds[i]);
		umount2(path, MNT_DETACH);
	}
	ck_assert_int_eq(nftw(dir, unit_remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT), 0);
}

/* Capture what is logged (stderr) from here on into a file; unit_log_text() reads it back. */
static inline void unit_log_capture(char *file)
{
	int fd = mkstemp(file);

	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	ck_assert_int_eq(dup2(fd, 2), 2);
	close(fd);
}

static inline char *unit_log_text(const char *file)
{
	char *text;

	fflush(stderr);
	text = unit_read("/", file);
	ck_assert_ptr_nonnull(text);
	return text;
}

#endif
