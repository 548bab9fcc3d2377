/*
 * The build's user namespace as sandbox_enter() set it up: which id map it has and where its
 * binfmt_misc is. Data only, below every module of the sandbox, so that the modules that shift
 * ids (idshift.h) and confine commands (confine.h) can read it without calling back into
 * sandbox.c, which uses them.
 */
#ifndef MKI_USERNS_H
#define MKI_USERNS_H

#include <sys/types.h>

enum sandbox_idmap {
	SANDBOX_IDS_NONE,   /* not entered */
	SANDBOX_IDS_FULL,   /* 0 = the user, 1..N = its /etc/subuid range (N <= 65536) */
	SANDBOX_IDS_ROOT,   /* really root: identity map; commands get 0..65535 at sub_uid */
	SANDBOX_IDS_SINGLE, /* only 0 = the user: chown to other ids fails inside */
};

/** What sandbox_enter() set up; read-only for callers. */
struct sandbox_info {
	enum sandbox_idmap ids;
	uid_t outer_uid, sub_uid; /* sub_*: first subordinate id (FULL), or the commands' base (ROOT) */
	gid_t outer_gid, sub_gid;
	unsigned sub_count;
	int binfmt_private; /* a private binfmt_misc instance is mounted */
	char *binfmt_dir;   /* where it is mounted (or the host's, for the fallback) */
};

/*
 * Root builds: the commands' ids 0..65535 are stored from root's /etc/subuid and /etc/subgid
 * entry, or from this fixed range (systemd's "foreign" range, 0x7FFE0000) when root has none.
 */
#define SANDBOX_ROOT_RANGE 2147352576u
#define SANDBOX_ROOT_COUNT 65536u

#endif
