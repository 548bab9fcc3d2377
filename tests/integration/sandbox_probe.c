/*
 * What a hostile maintainer script would try from inside the sandbox (test 56): each mode prints
 * one line saying what happened; the test decides from those lines and from the host.
 *   escape HOSTDIR   double chroot, then look for HOSTDIR and write HOSTDIR/escaped
 *   remount DIR      make the read-only mount DIR writable, then unmount it
 *   fds              list the file descriptors above 2
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static int escape(const char *hostdir)
{
	char path[4096];
	struct stat sb;
	int i, fd;

	mkdir("/mki56-x", 0755);
	if (chroot("/mki56-x") < 0)
		printf("chroot refused: %s\n", strerror(errno));
	else
		printf("chroot ok\n");
	for (i = 0; i < 64; i++)
		if (chdir("..") < 0)
			break;
	if (chroot(".") < 0)
		printf("second chroot refused: %s\n", strerror(errno));
	snprintf(path, sizeof(path), "%s/escaped", hostdir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	printf("%s: %s; marker %s\n", hostdir, stat(hostdir, &sb) == 0 ? "REACHED" : "not reachable",
	       fd >= 0 ? "WRITTEN" : "not written");
	return 0;
}

static int remount(const char *dir)
{
	char path[4096];
	int fd;

	if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND, NULL) == 0)
		printf("remount rw of %s: DONE\n", dir);
	else
		printf("remount rw of %s: %s\n", dir, strerror(errno));
	if (umount2(dir, MNT_DETACH) == 0)
		printf("unmount of %s: DONE\n", dir);
	else
		printf("unmount of %s: %s\n", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/mki56-written", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	printf("write into %s: %s\n", dir, fd >= 0 ? "DONE" : strerror(errno));
	return 0;
}

static int fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int self = d ? dirfd(d) : -1, n = 0;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) > 2 && atoi(de->d_name) != self) {
			char link[4096], p[300];
			ssize_t len;

			snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
			len = readlink(p, link, sizeof(link) - 1);
			link[len > 0 ? len : 0] = 0;
			printf("open fd %s -> %s\n", de->d_name, link);
			n++;
		}
	printf("%d inherited fds\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "escape"))
		return escape(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "remount"))
		return remount(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "fds"))
		return fds();
	fprintf(stderr, "usage: sandbox_probe escape HOSTDIR | remount DIR | fds\n");
	return 2;
}
