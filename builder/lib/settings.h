/* Run-time settings from the command line, shared read-only by every stage. */
#ifndef MKI_SETTINGS_H
#define MKI_SETTINGS_H

#include <stdint.h>

#include "runlimits.h"
#include "str.h"

struct cache_user;

struct settings {
	char *cache_dir;          /* absolute; shared between concurrent builds */
	char *work_dir;           /* absolute; private to this build, removed at exit */
	unsigned jobs;            /* parallel downloads / unpack workers */
	int offline;              /* cache only; a miss is -MKI_E_OFFLINE */
	int ignore_valid_until;   /* build from an old snapshot: Valid-Until not enforced */
	int allow_rollback;       /* accept a Release older than the last verified one */
	struct strv allow_stale;  /* --allow-stale: suites (or "updates") a mirror mid-sync may
				     build from their last verified indexes (indexes.h) */
	int64_t source_date_epoch;/* every timestamp written comes from here */
	struct strv sources;      /* --source 'URI SUITE COMPONENTS [signed-by=...]': replace the recipe's */
	char *lock_file;          /* where the lock is read (--locked) or written */
	int locked;               /* build exactly what lock_file says */
	int keep_staging;         /* keep work_dir for inspection */
	int no_native_tools;      /* emulate every target program (see accel.h) */
	struct strv emulated_tools; /* --no-native-tools=PROGRAM,...: these emulated, the rest native */
	int no_initramfs_once;    /* a kernel's initramfs built twice, dpkg's way (initramfs.h) */
	int native_only;          /* no emulation at all: only the host's own architectures can
				     run in the tree (--sdk; configure_stage.c) */
	int no_host_twins;        /* native tools' twins never from the host's apt sources (twinsrc.h) */
	int single_id;            /* no subordinate ids: build in a single-id namespace anyway */
	int no_layer_cache;       /* --no-layer-cache: never restore or store a configured tree */
	char *layer_registry;     /* --layer-registry URL: the remote layer cache (registry.h); NULL: the recipe's */
	char *layer_sign_key;     /* --layer-sign-key FILE: signs pushed layers; NULL: the recipe's */
	struct limits limits;     /* --limit NAME=VALUE; zero-initialised means every default */
	struct cache_user *cache_user; /* this build's claims on cache objects (cachegc.h); may be NULL */
	/* From the environment, read once by settings_read_env(): */
	char *apt_root;           /* MKIMAGE_APT_ROOT: the host's apt configuration, or "/etc/apt" */
	long stall_timeout;       /* MKIMAGE_STALL_TIMEOUT: seconds below 1 byte/s = stalled */
	long midsync_wait;        /* MKIMAGE_MIDSYNC_WAIT: seconds before the first retry of an
				     index that does not match its Release (indexes.h) */
	uint64_t stream_over;     /* MKI_TEST_STREAM_BYTES: unpack streams packages decoding to more */
	char *registry_auth;      /* MKIMAGE_REGISTRY_AUTH: "user:password" for the layer registry */
	char *registry_token_hosts; /* MKIMAGE_REGISTRY_TOKEN_HOSTS: other realms allowed */
	long registry_grace;      /* MKIMAGE_REGISTRY_GRACE: seconds a registry operation gets */
	uint64_t registry_min_rate; /* MKIMAGE_REGISTRY_MIN_RATE: bytes/s its blob is timed at */
	struct strv registry_auth_files; /* docker/podman auth files, in the order they are tried */
};

/**
 * Fill the environment-driven fields of `st` (its other fields are left alone): each variable
 * when set and valid, else its default. An invalid MKIMAGE_STALL_TIMEOUT, MKIMAGE_REGISTRY_GRACE
 * or MKIMAGE_REGISTRY_MIN_RATE is warned about and ignored. Stages never read the environment
 * themselves.
 */
void settings_read_env(struct settings *st);
/** Free what settings_read_env() allocated. */
void settings_release_env(struct settings *st);

#endif
