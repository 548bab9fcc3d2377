#include "locksrc.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "keyfpr.h"
#include "lib/err.h"
#include "lib/log.h"
#include "recipe/lockfile.h"
#include "sources.h"

static void glob_into(const char *pattern, struct strv *out)
{
	glob_t g;
	size_t i;

	if (glob(pattern, 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++) /* glob sorts: the search order is deterministic */
		strv_push(out, g.gl_pathv[i]);
	globfree(&g);
}

static void candidates(const struct recipe *r, const char *apt_root, struct strv *out)
{
	char *pat;
	size_t i;

	for (i = 0; i < r->n_sources; i++)
		if (r->sources[i].keyring)
			strv_push(out, r->sources[i].keyring);
	pat = xasprintf("%s/trusted.gpg.d/*.gpg", apt_root);
	glob_into(pat, out);
	free(pat);
	glob_into("/usr/share/keyrings/*.gpg", out);
}

static char *joined(const struct strv *v, const char *sep)
{
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < v->n; i++)
		buf_addf(&b, "%s%s", i ? sep : "", v->v[i]);
	return b.p ? b.p : xstrdup("");
}

/*
 * A suite the locked build did without (its mirror mid-sync, --allow-stale) is left out again:
 * the replay builds what the lock says. One built from its last verified Release is fetched as
 * served now; the locked versions must be in it (or --allow-stale again).
 */
static int mid_sync_spec(const struct lock_source *s, const char *lock_file)
{
	if (!s->index)
		return 0;
	if (!strcmp(s->index, "omitted")) {
		log_warn("--locked: '%s' records that its build left out '%s' suite '%s' (its mirror "
			 "was mid-sync, --allow-stale): left out again", lock_file, s->uri, s->suite);
		return 1;
	}
	log_info("--locked: '%s' records that '%s' suite '%s' was built from its last verified "
		 "Release (dated %s; the mirror was mid-sync): fetched as served now", lock_file,
		 s->uri, s->suite, s->date ? s->date : "-");
	return 0;
}

static int one_spec(const struct lock_source *s, const struct strv *cand, struct strv *specs)
{
	char *comps = joined(&s->components, " "), *fprs;
	int k;

	if (!s->keys.n) {
		log_warn("--locked: the lock's source '%s' '%s' was not verified (trusted); neither "
			 "is this build", s->uri, s->suite);
		strv_push_take(specs, xasprintf("%s %s %s trusted=yes", s->uri, s->suite, comps));
		free(comps);
		return 0;
	}
	k = keyfpr_find(&s->keys, cand);
	if (k < 0) {
		fprs = joined(&s->keys, ", ");
		log_error("--locked: no keyring holds the key %s that the lock records for '%s' '%s' "
			  "(searched the recipe's keyrings, trusted.gpg.d and /usr/share/keyrings): "
			  "give it with --source '%s %s %s signed-by=KEYRING'",
			  fprs, s->uri, s->suite, s->uri, s->suite, comps);
		free(fprs);
		free(comps);
		return -MKI_E_SOURCE;
	}
	log_info("--locked: source '%s' '%s' from the lock, keyring '%s'", s->uri, s->suite,
		 cand->v[k]);
	strv_push_take(specs, xasprintf("%s %s %s signed-by=%s", s->uri, s->suite, comps, cand->v[k]));
	free(comps);
	return 0;
}

int locksrc_specs(const char *lock_file, const struct recipe *r, const char *apt_root,
		  struct strv *specs)
{
	struct lockfile lk;
	struct strv cand = { 0 };
	size_t i;
	int ret;

	if (lockfile_read(&lk, lock_file))
		return -MKI_E_LOCK;
	for (i = 0; i < lk.n_sources; i++)
		if (!lk.sources[i].components.n) {
			log_info("--locked: '%s' records no components (an older lock): using the "
				 "recipe's sources", lock_file);
			lockfile_release(&lk);
			return 0;
		}
	candidates(r, apt_root, &cand);
	for (i = 0, ret = 0; i < lk.n_sources && !ret; i++)
		if (!mid_sync_spec(&lk.sources[i], lock_file))
			ret = one_spec(&lk.sources[i], &cand, specs);
	strv_release(&cand);
	lockfile_release(&lk);
	return ret;
}
