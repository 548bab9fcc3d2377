/* The environment, read once into the settings (settings.h). */
#include "settings.h"

#include <stdlib.h>

#include "log.h"

#define APT_ROOT_DEFAULT "/etc/apt"
#define STALL_DEFAULT 30              /* seconds */
#define STREAM_OVER_DEFAULT (32ull << 20) /* a package decoding to more is streamed, not held */

static long stall_timeout(void)
{
	const char *s = getenv("MKIMAGE_STALL_TIMEOUT");
	char *end;
	long v;

	if (!s || !*s)
		return STALL_DEFAULT;
	v = strtol(s, &end, 10);
	if (*end || v < 1 || v > 3600) {
		log_warn("ignoring MKIMAGE_STALL_TIMEOUT='%s' (seconds from 1 to 3600); using %d", s,
			 STALL_DEFAULT);
		return STALL_DEFAULT;
	}
	return v;
}

void settings_read_env(struct settings *st)
{
	const char *root = getenv("MKIMAGE_APT_ROOT"), *stream = getenv("MKI_TEST_STREAM_BYTES");

	free(st->apt_root);
	st->apt_root = xstrdup(root && *root ? root : APT_ROOT_DEFAULT);
	st->stall_timeout = stall_timeout();
	/* The test suite lowers the threshold to stream every package. */
	st->stream_over = stream && *stream ? strtoull(stream, NULL, 10) : STREAM_OVER_DEFAULT;
}

void settings_release_env(struct settings *st)
{
	free(st->apt_root);
	st->apt_root = NULL;
}
