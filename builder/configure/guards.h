/* Build guards: no service may start in the tree while the image is built. */
#ifndef MKI_GUARDS_H
#define MKI_GUARDS_H

/** What guards_install() changed, so that guards_remove() puts exactly that back. */
struct guards {
	int policy_saved;     /* the tree had its own usr/sbin/policy-rc.d: set aside */
	int policy_installed; /* ours (exit 101) is in place */
	int ssd_diverted;     /* start-stop-daemon is replaced by a no-op */
};

/**
 * In the tree `rootfd`: set a package's policy-rc.d aside and install one that forbids every
 * action (exit 101), divert start-stop-daemon to a no-op. 0 or a negative errno (not logged).
 */
int guards_install(struct guards *g, int rootfd);
/**
 * The tree `rootfd` has the guards installed already (a configured tree restored from the layer
 * cache, layer.h, stored with them): fill `g` from what is in place, for guards_remove().
 */
void guards_adopt(struct guards *g, int rootfd);
/**
 * Write `text` as the script `rel` of the tree `rootfd` (mode 0755, owned by the tree's root):
 * through a temporary name renamed over `rel`, so a half-written script is never in place.
 * 0 or a negative errno (not logged).
 */
int guards_write_script(int rootfd, const char *rel, const char *text);
/** Undo what guards_install() did in tree `root` (named in the log): 0 or a negative errno. */
int guards_remove(struct guards *g, int rootfd, const char *root);

#endif
