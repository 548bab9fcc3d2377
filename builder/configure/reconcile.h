/* Reconcile the manifest with the staging tree after scripts and hooks changed it. */
#ifndef MKI_RECONCILE_H
#define MKI_RECONCILE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/runlimits.h"
#include "tree/staging.h"

struct reconcile_changes {
	size_t added, changed, removed;
};

/**
 * Make `s->manifest` describe the tree exactly as seen from inside the sandbox: new paths are
 * added, changed ones updated (type, owner, mode, size, link target, xattrs including
 * security.capability, hardlink groups), vanished ones removed - except device nodes, which only
 * the manifest holds. Owning packages are kept. With a single-id sandbox, owners of existing
 * entries come from the manifest (the tree cannot hold them). mtimes later than
 * `source_date_epoch` (when >= 0) are clamped to it. `ch` (may be NULL) gets the counts.
 *
 * What the tree holds now is counted against `lim`'s (NULL: the defaults) staging-entries
 * (every entry, device nodes kept included) and staging-size (blocks allocated, as the image
 * stores them: holes are free, a hardlink group counts once); past either the walk stops and
 * -MKI_E_HOOK (exit 7) is returned, logged with the limit, what was found and the three
 * directories holding the most; `s->manifest` is then unchanged.
 */
int reconcile_manifest(struct staging *s, int64_t source_date_epoch, const struct limits *lim,
		       struct reconcile_changes *ch);

#endif
