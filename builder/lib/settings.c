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

/* Where podman, skopeo and docker keep registry credentials, in the order they look. */
static void auth_files(struct strv *v)
{
	const char *file = getenv("REGISTRY_AUTH_FILE"), *run = getenv("XDG_RUNTIME_DIR");
	const char *home = getenv("HOME");
	char *p;

	if (file && *file)
		strv_push(v, file);
	if (run && *run) {
		p = xasprintf("%s/containers/auth.json", run);
		strv_push_take(v, p);
	}
	if (home && *home) {
		p = xasprintf("%s/.docker/config.json", home);
		strv_push_take(v, p);
	}
}

void settings_read_env(struct settings *st)
{
	const char *auth = getenv("MKIMAGE_REGISTRY_AUTH");

	const char *root = getenv("MKIMAGE_APT_ROOT"), *stream = getenv("MKI_TEST_STREAM_BYTES");

	free(st->apt_root);
	st->apt_root = xstrdup(root && *root ? root : APT_ROOT_DEFAULT);
	st->stall_timeout = stall_timeout();
	/* The test suite lowers the threshold to stream every package. */
	st->stream_over = stream && *stream ? strtoull(stream, NULL, 10) : STREAM_OVER_DEFAULT;
	free(st->registry_auth);
	st->registry_auth = auth && *auth ? xstrdup(auth) : NULL;
	strv_release(&st->registry_auth_files);
	auth_files(&st->registry_auth_files);
}

void settings_release_env(struct settings *st)
{
	free(st->apt_root);
	st->apt_root = NULL;
	free(st->registry_auth);
	st->registry_auth = NULL;
	strv_release(&st->registry_auth_files);
}
