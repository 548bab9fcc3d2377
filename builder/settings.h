/* Run-time settings from the command line, shared read-only by every stage. */
#ifndef MKI_SETTINGS_H
#define MKI_SETTINGS_H

#include <stdint.h>

#include "runlimits.h"
#include "str.h"

struct settings {
	char *cache_dir;          /* absolute; shared between concurrent builds */
	char *work_dir;           /* absolute; private to this build, removed at exit */
	unsigned jobs;            /* parallel downloads / unpack workers */
	int offline;              /* cache only; a miss is -MKI_E_OFFLINE */
	int ignore_valid_until;   /* build from an old snapshot: Valid-Until not enforced */
	int allow_rollback;       /* accept a Release older than the last verified one */
	int64_t source_date_epoch;/* every timestamp written comes from here */
	struct strv sources;      /* --source 'URI SUITE COMPONENTS [signed-by=...]': replace the recipe's */
	char *lock_file;          /* where the lock is read (--locked) or written */
	int locked;               /* build exactly what lock_file says */
	int keep_staging;         /* keep work_dir for inspection */
	int no_native_tools;      /* emulate every target program (see accel.h) */
	int single_id;            /* no subordinate ids: build in a single-id namespace anyway */
	struct limits limits;     /* --limit NAME=VALUE; zero-initialised means every default */
};

#endif
