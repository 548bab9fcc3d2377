/* The staging tree's description and what mkimage itself writes into it (staging.h). */
#include "staging.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/str.h"
#include "sandbox/idshift.h"

int staging_init(struct staging *s, const char *work_dir)
{
	int fd;

	s->root = xasprintf("%s/root", work_dir);
	s->manifest_file = xasprintf("%s/manifest", work_dir);
	s->lint_file = xasprintf("%s/multiarch-lint", work_dir);
	fd = fsutil_mkdir_apart(s->root, 0755);
	if (!fd) {
		fd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0)
		log_error("cannot create the staging tree '%s': %s", s->root, strerror(-fd));
	return fd;
}

void staging_release(struct staging *s)
{
	free(s->root);
	free(s->manifest_file);
	free(s->lint_file);
	manifest_release(&s->manifest);
	memset(s, 0, sizeof(*s));
}

/* The first refusal means an unprivileged build: stop trying, the manifest keeps the owners. */
static void note_chown_failed(struct staging_writer *w, int err)
{
	if (w->can_chown && (err == EPERM || err == EINVAL)) {
		w->can_chown = 0;
		log_debug("cannot change ownership here (%s): owners are kept in the manifest only",
			  strerror(err));
	}
}

void staging_chown(struct staging_writer *w, int dirfd, const char *name, uid_t uid, gid_t gid)
{
	int flags = *name ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH;

	if (w->can_chown &&
	    fchownat(dirfd, name, idshift_tree_uid(uid), idshift_tree_gid(gid), flags))
		note_chown_failed(w, errno);
}

struct manifest_entry *staging_own_entry(struct staging_writer *w, const char *path, char type,
					uint32_t mode)
{
	struct manifest_entry *me = manifest_add(w->m, path);

	me->type = type;
	me->mode = mode;
	me->uid = me->gid = 0;
	me->mtime = w->mtime;
	return me;
}

int staging_mkdirs(struct staging_writer *w, const char *path)
{
	char *p = xstrdup(path), *s = p;
	struct stat st;
	char saved;
	int r = 0, missing;

	for (;;) {
		s = strchrnul(s, '/');
		saved = *s;
		*s = 0;
		missing = fstatat(w->rootfd, p, &st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
		if (!missing && !S_ISDIR(st.st_mode)) {
			/* a package put something else there: never follow it */
			log_error("cannot create '/%s': a package shipped '/%s' as a non-directory",
				  path, p);
			free(p);
			return -MKI_E_PACKAGE;
		}
		if (missing == -ENOENT) {
			if (mkdirat(w->rootfd, p, 0755)) {
				r = -errno;
				break;
			}
			staging_chown(w, w->rootfd, p, 0, 0);
			staging_own_entry(w, p, MF_DIR, 0755);
		}
		if (!saved)
			break;
		*s++ = saved;
	}
	if (r)
		log_error("cannot create directory '/%s' in the staging tree: %s", p, strerror(-r));
	free(p);
	return r;
}

int staging_write_file(struct staging_writer *w, const char *path, const char *data, size_t len,
		     uint32_t mode)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	char *parent = xstrndup(path, slash ? (size_t)(slash - path) : 0);
	char *tmp = xasprintf("%s.mki-tmp", name);
	struct timespec ts[2] = { { .tv_sec = w->mtime }, { .tv_sec = w->mtime } };
	int dfd = beneath_open_canonical(w->rootfd, parent, O_PATH | O_DIRECTORY), fd = -1;
	int r = dfd < 0 ? dfd : 0;

	if (!r) {
		unlinkat(dfd, tmp, 0);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		r = fd < 0 ? -errno : fsutil_write_all(fd, data, len);
	}
	if (!r)
		staging_chown(w, fd, "", 0, 0);
	if (!r && (fchmod(fd, mode) || futimens(fd, ts)))
		r = -errno;
	if (fd >= 0 && close(fd) && !r)
		r = -errno;
	if (!r && renameat(dfd, tmp, dfd, name))
		r = -errno;
	if (r && dfd >= 0)
		unlinkat(dfd, tmp, 0);
	if (r)
		log_error("cannot write '/%s' in the staging tree: %s", path, strerror(-r));
	else
		staging_own_entry(w, path, MF_REG, mode)->size = len;
	if (dfd >= 0)
		close(dfd);
	free(parent);
	free(tmp);
	return r;
}
