/*
 * Build guards: no service may start while the image is built. policy-rc.d answers 101 (action
 * forbidden) to every invoke-rc.d; start-stop-daemon is diverted to a no-op. Both are put back
 * exactly as the packages left them afterwards.
 */
#include "guards.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/str.h"
#include "sandbox/idshift.h"

#define POLICY_RC_D "usr/sbin/policy-rc.d"
#define SSD "usr/sbin/start-stop-daemon"
#define SSD_REAL "usr/sbin/start-stop-daemon.mkimage-real"
#define SAVED_SUFFIX ".mkimage-saved"

int guards_write_script(int rootfd, const char *rel, const char *text)
{
	char *tmp = xasprintf("%s.mkimage-tmp", rel);
	int fd = beneath_open(rootfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0755);
	size_t len = strlen(text);
	int ret = 0;

	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ret = fsutil_write_all(fd, text, len);
	if (!ret && (fchmod(fd, 0755) < 0 || fchown(fd, idshift_tree_uid(0), idshift_tree_gid(0)) < 0))
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret)
		ret = beneath_rename(rootfd, tmp, rel);
	if (ret)
		beneath_unlink(rootfd, tmp, 0);
out:
	free(tmp);
	return ret;
}

int guards_install(struct guards *g, int rootfd)
{
	struct stat sb;
	int ret = 0;

	ret = beneath_mkdir(rootfd, "usr/sbin", 0755);
	if (ret)
		return ret;
	if (beneath_lstat(rootfd, POLICY_RC_D, &sb) == 0) {
		ret = beneath_rename(rootfd, POLICY_RC_D, POLICY_RC_D SAVED_SUFFIX);
		if (ret)
			return ret;
		g->policy_saved = 1;
	}
	ret = guards_write_script(rootfd, POLICY_RC_D,
			   "#!/bin/sh\n# mkimage: no service starts while the image is built\nexit 101\n");
	if (ret)
		return ret;
	g->policy_installed = 1;
	if (beneath_lstat(rootfd, SSD, &sb) < 0)
		return 0;
	ret = beneath_rename(rootfd, SSD, SSD_REAL);
	if (ret)
		return ret;
	g->ssd_diverted = 1;
	return guards_write_script(rootfd, SSD,
			    "#!/bin/sh\necho 'start-stop-daemon: not started while the image is built'"
			    " >&2\nexit 0\n");
}

void guards_adopt(struct guards *g, int rootfd)
{
	struct stat sb;

	g->policy_installed = beneath_lstat(rootfd, POLICY_RC_D, &sb) == 0;
	g->policy_saved = beneath_lstat(rootfd, POLICY_RC_D SAVED_SUFFIX, &sb) == 0;
	g->ssd_diverted = beneath_lstat(rootfd, SSD_REAL, &sb) == 0;
}

int guards_remove(struct guards *g, int rootfd, const char *root)
{
	int ret = 0, r;

	if (g->ssd_diverted && (r = beneath_rename(rootfd, SSD_REAL, SSD)))
		ret = r;
	g->ssd_diverted = 0;
	if (g->policy_installed && (r = beneath_unlink(rootfd, POLICY_RC_D, 0)) && r != -ENOENT)
		ret = r;
	g->policy_installed = 0;
	if (g->policy_saved && (r = beneath_rename(rootfd, POLICY_RC_D SAVED_SUFFIX, POLICY_RC_D)))
		ret = r;
	g->policy_saved = 0;
	if (ret)
		log_error("cannot remove the build guards (policy-rc.d, start-stop-daemon) from "
			  "'%s': %s", root, strerror(-ret));
	return ret;
}
