/* The environment, read once into the settings (settings.h). */
#include "settings.h"

#include <stdlib.h>

#include "log.h"

#define APT_ROOT_DEFAULT "/etc/apt"
#define STALL_DEFAULT 30              /* seconds */
#define MIDSYNC_WAIT_DEFAULT 10       /* seconds; then 20 and 30 (indexes.h) */
#define STREAM_OVER_DEFAULT (32ull << 20) /* a package decoding to more is streamed, not held */

/* A number of seconds from `min` to 3600 in `name`, else `def` (warned about when invalid). */
static long env_seconds(const char *name, long min, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	if (*end || v < min || v > 3600) {
		log_warn("ignoring %s='%s' (seconds from %ld to 3600); using %ld", name, s, min,
			 def);
		return def;
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
	st->stall_timeout = env_seconds("MKIMAGE_STALL_TIMEOUT", 1, STALL_DEFAULT);
	/* The tests shorten the waits of a mirror mid-sync (indexes.h); 0 retries at once. */
	st->midsync_wait = env_seconds("MKIMAGE_MIDSYNC_WAIT", 0, MIDSYNC_WAIT_DEFAULT);
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
