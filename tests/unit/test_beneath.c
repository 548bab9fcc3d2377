#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/beneath.h"

/*
 * A hostile tree beside an "outside" directory that holds a marker: every link in the tree aims
 * at the outside in another way. Nothing done through beneath.h may reach it.
 */
static char top[64], tree[96], outside[96];
static int rootfd = -1;

static void mk(const char *rel, const char *target)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	if (target)
		ck_assert_int_eq(symlink(target, path), 0);
	else
		ck_assert_int_eq(mkdir(path, 0755), 0);
}

static void setup(void)
{
	char path[256];
	FILE *f;

	snprintf(top, sizeof(top), "/tmp/mki-beneath-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(tree, sizeof(tree), "%s/tree", top);
	snprintf(outside, sizeof(outside), "%s/outside", top);
	ck_assert_int_eq(mkdir(tree, 0755), 0);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	snprintf(path, sizeof(path), "%s/marker", outside);
	f = fopen(path, "w");
	fputs("host", f);
	fclose(f);
	mk("var", NULL);
	mk("var/abs", outside);		  /* absolute link to the host directory */
	mk("var/up", "../../../outside"); /* relative link climbing out */
	mk("var/loop", "loop");		  /* a loop */
	mk("var/proc", "/proc/self/root"); /* a magic link */
	rootfd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rootfd, 0);
}

static void teardown(void)
{
	char cmd[128];

	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

static int marker_intact(void)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/marker", outside);
	return stat(path, &st) == 0 && st.st_size == 4;
}

START_TEST(links_never_leave_the_tree)
{
	static const char *const via[] = { "var/abs/marker", "var/up/marker",
					   "/var/abs/../../outside/marker", "var/proc/etc/passwd" };
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(via) / sizeof(via[0]); i++) {
		ck_assert_msg(beneath_open(rootfd, via[i], O_RDONLY, 0) < 0, "opened %s", via[i]);
		ck_assert_msg(beneath_unlink(rootfd, via[i], 0) < 0, "unlinked %s", via[i]);
		ck_assert_msg(beneath_lstat(rootfd, via[i], &st) < 0, "stat %s", via[i]);
	}
	ck_assert_int_eq(beneath_open(rootfd, "var/loop/x", O_RDONLY, 0), -ELOOP);
	ck_assert_int_lt(beneath_rename(rootfd, "var/up/marker", "stolen"), 0);
	ck_assert(marker_intact());
}
END_TEST

/* An absolute link means the tree's own /: writes land inside, at the path the image sees. */
START_TEST(absolute_links_resolve_in_the_tree)
{
	char path[512], *rel = NULL;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "mkdir -p %s%s", tree, outside);
	ck_assert_int_eq(system(path), 0);
	fd = beneath_open(rootfd, "var/abs/new", O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s%s/new", tree, outside);
	ck_assert_int_eq(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/new", outside);
	ck_assert_int_ne(stat(path, &st), 0);
	fd = beneath_mkstemp(rootfd, "var/abs", "hook-", &rel);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_ptr_nonnull(strstr(rel, "var/abs/hook-"));
	ck_assert_int_eq(beneath_unlink(rootfd, rel, 0), 0);
	free(rel);
	ck_assert_int_eq(beneath_unlink(rootfd, "var/abs/new", 0), 0);
	ck_assert(marker_intact());
}
END_TEST

START_TEST(last_component_is_not_followed)
{
	struct stat st;

	ck_assert_int_eq(beneath_lstat(rootfd, "var/abs", &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(beneath_unlink(rootfd, "var/up", 0), 0); /* the link, not its target */
	ck_assert(marker_intact());
	ck_assert_int_eq(beneath_mkdir(rootfd, "var/d", 0755), 0);
	ck_assert_int_eq(beneath_mkdir(rootfd, "var/d", 0755), 0);
	ck_assert_int_eq(beneath_mkdir(rootfd, "var/abs", 0755), -EEXIST);
	ck_assert_int_eq(beneath_unlink(rootfd, "var/d", AT_REMOVEDIR), 0);
	ck_assert_int_eq(beneath_supported(rootfd), 0);
}
END_TEST

/* Canonical paths: no link at all, even one that stays inside; real files and dirs open. */
START_TEST(canonical_refuses_every_link)
{
	static const char *const links[] = { "var/abs/marker", "var/up/marker", "var/loop/x",
					     "var/proc/etc", "var/in/f", "var/in", NULL };
	char path[256];
	FILE *f;
	int fd;

	mk("var/real", NULL);
	mk("var/in", "real"); /* harmless, but not a canonical path */
	snprintf(path, sizeof(path), "%s/var/real/f", tree);
	f = fopen(path, "w");
	fclose(f);
	for (const char *const *l = links; *l; l++) {
		fd = beneath_open_canonical(rootfd, *l, O_RDONLY);
		ck_assert_msg(fd < 0, "'%s' was opened", *l);
	}
	ck_assert_int_lt(beneath_open_canonical(rootfd, "../outside/marker", O_RDONLY), 0);
	fd = beneath_open_canonical(rootfd, "var/real/f", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = beneath_open_canonical(rootfd, "var/real", O_PATH | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(marker_intact());
}
END_TEST

/*
 * A FIFO, a directory or a device where a regular file should be: refused at once (a FIFO
 * without a writer would block a plain open for ever), through links too; a file stays readable.
 */
START_TEST(regular_never_blocks)
{
	const char *kind = NULL;
	char path[256], c;
	FILE *f;
	int fd;

	mk("var/lib", NULL);
	snprintf(path, sizeof(path), "%s/var/lib/status", tree);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	mk("var/fifo-link", "/var/lib/status");
	mk("var/null", "/dev/null");
	for (int canonical = 0; canonical < 2; canonical++) {
		ck_assert_int_eq(beneath_open_regular(rootfd, "var/lib/status", canonical, &kind),
				 -EINVAL);
		ck_assert_str_eq(kind, "a FIFO");
		ck_assert_int_eq(beneath_open_regular(rootfd, "var/lib", canonical, &kind), -EINVAL);
		ck_assert_str_eq(kind, "a directory");
	}
	ck_assert_int_eq(beneath_open_regular(rootfd, "var/fifo-link", 0, &kind), -EINVAL);
	ck_assert_str_eq(kind, "a FIFO");
	ck_assert_int_eq(beneath_open_regular(rootfd, "var/fifo-link", 1, NULL), -ELOOP);
	/* /dev/null resolves inside the tree, where there is none */
	ck_assert_int_eq(beneath_open_regular(rootfd, "var/null", 0, NULL), -ENOENT);
	ck_assert_int_lt(beneath_open_regular(rootfd, "var/abs/marker", 0, NULL), 0);
	snprintf(path, sizeof(path), "%s/var/lib/file", tree);
	f = fopen(path, "w");
	fputs("x", f);
	fclose(f);
	fd = beneath_open_regular(rootfd, "var/lib/file", 1, NULL);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	ck_assert_int_eq(read(fd, &c, 1), 1);
	close(fd);
	ck_assert(marker_intact());
}
END_TEST

/* Userspace resolution (the unpacker's): "" for a failure, else the canonical directory. */
static int resolved(const char *path, const char *want, const char *want_bad)
{
	struct buf out = { 0 }, bad = { 0 };
	int r = beneath_resolve_dir(rootfd, path, &out, &bad);

	if (!r)
		ck_assert_msg(want && !strcmp(out.p, want), "'%s' resolved to '%s'", path, out.p);
	if (r && want_bad)
		ck_assert_msg(!strcmp(bad.p, want_bad), "'%s' failed at '%s'", path, bad.p);
	buf_release(&out);
	buf_release(&bad);
	return r;
}

/* dpkg's view: links are followed with the tree as "/", so a package path lands inside. */
START_TEST(resolve_follows_links_inside_the_tree)
{
	mk("usr", NULL);
	mk("usr/lib", NULL);
	mk("usr/bin", NULL);
	mk("lib", "usr/lib");         /* merged-/usr, relative */
	mk("var/lib", "/usr/lib");    /* absolute: restarts at the tree's root */
	mk("var/both", "../lib/../bin"); /* ".." applies to where the link led */
	ck_assert_int_eq(resolved("", "", NULL), 0);
	ck_assert_int_eq(resolved("./var//.", "var", NULL), 0);
	ck_assert_int_eq(resolved("lib", "usr/lib", NULL), 0);
	ck_assert_int_eq(resolved("var/lib", "usr/lib", NULL), 0);
	ck_assert_int_eq(resolved("/var/lib/../bin", "usr/bin", NULL), 0);
	ck_assert_int_eq(resolved("var/both", "usr/bin", NULL), 0);
	ck_assert_int_eq(resolved("usr/lib/..", "usr", NULL), 0);
}
END_TEST

START_TEST(resolve_refuses_hostile_trees)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/var/file", tree);
	f = fopen(path, "w");
	fclose(f);
	ck_assert_int_eq(resolved("var/up", NULL, NULL), -EXDEV);      /* climbs above "/" */
	ck_assert_int_eq(resolved("var/../..", NULL, NULL), -EXDEV);
	ck_assert_int_eq(resolved("../outside", NULL, NULL), -EXDEV);
	ck_assert_int_eq(resolved("var/loop", NULL, NULL), -ELOOP);
	/* the host path the link names does not exist inside the tree: never the host's */
	ck_assert_int_eq(resolved("var/abs", NULL, "tmp"), -ENOENT);
	ck_assert_int_eq(resolved("var/proc", NULL, "proc"), -ENOENT);
	ck_assert_int_eq(resolved("var/file/x", NULL, "var/file"), -ENOTDIR);
	ck_assert_int_eq(resolved("var/none/x", NULL, "var/none"), -ENOENT);
	ck_assert(marker_intact());
}
END_TEST

/* As Linux: 40 links on the way are followed, the 41st is refused. */
START_TEST(resolve_counts_links)
{
	char name[32], target[32];
	int i;

	mk("d", NULL);
	for (i = 0; i < 41; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		if (i == 40)
			snprintf(target, sizeof(target), "d");
		else
			snprintf(target, sizeof(target), "l%d", i + 1);
		mk(name, target);
	}
	ck_assert_int_eq(resolved("l1", "d", NULL), 0);
	ck_assert_int_eq(resolved("l0", NULL, NULL), -ELOOP);
}
END_TEST

Suite *beneath_suite(void)
{
	Suite *s = suite_create("beneath");
	TCase *tc = tcase_create("beneath");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, links_never_leave_the_tree);
	tcase_add_test(tc, absolute_links_resolve_in_the_tree);
	tcase_add_test(tc, last_component_is_not_followed);
	tcase_add_test(tc, canonical_refuses_every_link);
	tcase_add_test(tc, resolve_follows_links_inside_the_tree);
	tcase_add_test(tc, resolve_refuses_hostile_trees);
	tcase_add_test(tc, resolve_counts_links);
	tcase_add_test(tc, regular_never_blocks);
	suite_add_tcase(s, tc);
	return s;
}
