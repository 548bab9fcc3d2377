#include "debcontrol.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/str.h"

/* Read the current entry of `a` whole, at most `max` bytes. */
static int read_entry(struct archive *a, const char *path, const char *what, size_t max,
		      char **out, size_t *len)
{
	struct buf b = { 0 };
	char chunk[16384];
	la_ssize_t n;

	while ((n = archive_read_data(a, chunk, sizeof(chunk))) > 0) {
		if (b.len + (size_t)n > max) {
			log_error("'%s': %s is larger than %zu bytes", path, what, max);
			buf_release(&b);
			return -MKI_E_LIMIT_PKG;
		}
		buf_add(&b, chunk, (size_t)n);
	}
	if (n < 0) {
		log_error("'%s': cannot read %s: %s", path, what, archive_error_string(a));
		buf_release(&b);
		return -MKI_E_PACKAGE;
	}
	*len = b.len;
	buf_add(&b, "", 0);
	*out = buf_detach(&b);
	return 0;
}

static int control_from_tar(const char *path, const char *tar, size_t tar_len, char **text,
			    size_t *len)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int ret = -MKI_E_PACKAGE, r;

	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, tar, tar_len) != ARCHIVE_OK) {
		log_error("'%s': control member is not a tar archive: %s", path,
			  archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);

		if (name && (!strcmp(name, "./control") || !strcmp(name, "control"))) {
			ret = read_entry(a, path, "the control file", DEBCONTROL_MAX, text, len);
			goto out;
		}
	}
	log_error("'%s': the control archive has no 'control' file", path);
out:
	archive_read_free(a);
	return ret;
}

int debcontrol_read(const char *path, char **text, size_t *len)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char *tar = NULL;
	size_t tar_len = 0;
	int ret = -MKI_E_PACKAGE, r;

	archive_read_support_format_ar(a);
	if (access(path, R_OK)) {
		ret = -errno;
		log_error("cannot read local package '%s': %s", path, strerror(errno));
		goto out;
	}
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		log_error("'%s' is not a Debian package: %s", path, archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);

		if (!name || strncmp(name, "control.tar", 11))
			continue;
		ret = read_entry(a, path, "control.tar", 4 * DEBCONTROL_MAX, &tar, &tar_len);
		if (!ret)
			ret = control_from_tar(path, tar, tar_len, text, len);
		goto out;
	}
	log_error("'%s' is not a Debian package (no control.tar member)", path);
out:
	free(tar);
	archive_read_free(a);
	return ret;
}
