/*
 * --locked with a changed recipe: what changed, in the words of the recipe and of the package
 * set, rather than two digests. The keys come from the lock's "field:" lines (recipe_field_digests
 * when it was written); the packages from resolving the changed recipe anew over the lock's own
 * recorded indexes, which is what 'mkimage --lock' would then write.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/log.h"
#include "resolve_ctx.h"

#define SHOWN 8 /* packages named per kind of change; the rest counted */

/* The value of key `k` ("KEY SHA256" strings), or NULL. */
static const char *field_digest(const struct strv *v, const char *k, size_t klen)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (!strncmp(v->v[i], k, klen) && v->v[i][klen] == ' ')
			return v->v[i] + klen + 1;
	return NULL;
}

/* Keys in `a` whose digest `b` lacks or holds otherwise, as "'k', 'k'" into `out`. */
static void fields_differ(const struct strv *a, const struct strv *b, struct strv *seen,
			  struct buf *out)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		size_t klen = strcspn(a->v[i], " ");
		const char *d = field_digest(b, a->v[i], klen);
		char *k = xstrndup(a->v[i], klen);

		if ((!d || strcmp(d, a->v[i] + klen + 1)) && !strv_contains(seen, k)) {
			buf_addf(out, "%s'%s'", seen->n ? ", " : "", k);
			strv_push(seen, k);
		}
		free(k);
	}
}

void resolve_lock_fields_changed(const struct strv *locked, const struct strv *now,
				 struct buf *out)
{
	struct strv seen = { 0 };

	fields_differ(now, locked, &seen, out);
	fields_differ(locked, now, &seen, out);
	strv_release(&seen);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct plan_entry *x = *(const struct plan_entry *const *)a;
	const struct plan_entry *y = *(const struct plan_entry *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->arch, y->arch);
}

struct pkg_changes {
	struct buf added, removed, changed;
	unsigned n_added, n_removed, n_changed;
};

static void note(struct buf *b, unsigned *n, const char *name, const char *arch, const char *v1,
		 const char *v2)
{
	if (++*n > SHOWN)
		return;
	buf_addf(b, "%s%s:%s %s", *n > 1 ? ", " : "", name, arch, v1);
	if (v2)
		buf_addf(b, " -> %s", v2);
}

/* A merge walk over the lock's sorted packages and the plan's, sorted here. */
static void diff_packages(const struct lockfile *lk, const struct plan *p, struct pkg_changes *d)
{
	const struct plan_entry **v = xcalloc(p->n + 1, sizeof(*v));
	size_t i = 0, j = 0;

	for (j = 0; j < p->n; j++)
		v[j] = &p->v[j];
	if (p->n)
		qsort(v, p->n, sizeof(*v), entry_cmp);
	for (j = 0; i < lk->n_pkgs || j < p->n;) {
		const struct lock_pkg *a = i < lk->n_pkgs ? &lk->pkgs[i] : NULL;
		const struct plan_entry *b = j < p->n ? v[j] : NULL;
		int c = !a ? 1 : !b ? -1 : strcmp(a->name, b->name);

		c = c || !a || !b ? c : strcmp(a->arch, b->arch);
		if (c < 0)
			note(&d->removed, &d->n_removed, a->name, a->arch, a->version, NULL);
		else if (c > 0)
			note(&d->added, &d->n_added, b->name, b->arch, b->version, NULL);
		else if (strcmp(a->version, b->version))
			note(&d->changed, &d->n_changed, b->name, b->arch, a->version, b->version);
		i += c <= 0;
		j += c >= 0;
	}
	free(v);
}

static void say(struct buf *out, const char *verb, unsigned n, const struct buf *names, int *first)
{
	if (!n)
		return;
	buf_addf(out, "%s%s %u (%s%s)", *first ? "" : ", ", verb, n, names->p,
		 n > SHOWN ? ", ..." : "");
	*first = 0;
}

void resolve_lock_packages_changed(const struct lockfile *lk, const struct plan *p,
				   struct buf *out)
{
	struct pkg_changes d = { 0 };
	int first = 1;

	diff_packages(lk, p, &d);
	if (!d.n_added && !d.n_removed && !d.n_changed)
		buf_adds(out, "the package set stays the same");
	say(out, "the plan would add", d.n_added, &d.added, &first);
	say(out, first ? "the plan would remove" : "remove", d.n_removed, &d.removed, &first);
	say(out, first ? "the plan would change" : "change", d.n_changed, &d.changed, &first);
	buf_release(&d.added);
	buf_release(&d.removed);
	buf_release(&d.changed);
}

int resolve_lock_changed(const struct resolve_ctx *c, const struct plan *p, const char *file)
{
	struct strv now = { 0 };
	struct buf keys = { 0 }, pkgs = { 0 };

	recipe_field_digests(c->r, &now);
	resolve_lock_fields_changed(&c->lock.fields, &now, &keys);
	if (p)
		resolve_lock_packages_changed(&c->lock, p, &pkgs);
	log_error("the recipe changed since '%s' was written: %s%s; resolved again over "
		  "the lock's indexes, %s: run 'mkimage --lock' to accept the change, or undo it",
		  file, !c->lock.fields.n ? "the lock predates the record of each key, so which "
		  "keys changed is not known" : keys.len ? keys.p : "no key's value",
		  !c->lock.fields.n ? "" : " changed", p ? pkgs.p : "the changed recipe does not "
		  "resolve (see above)");
	strv_release(&now);
	buf_release(&keys);
	buf_release(&pkgs);
	return -MKI_E_LOCK;
}
