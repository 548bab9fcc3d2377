#include "plan.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/hash.h"
#include "lib/json.h"

static void entry_release(struct plan_entry *e)
{
	free(e->name);
	free(e->arch);
	free(e->version);
	free(e->multi_arch);
	free(e->priority);
	free(e->section);
	free(e->maintainer);
	free(e->installed_size);
	free(e->source);
	free(e->source_version);
	free(e->url);
	free(e->path);
	free(e->depends);
}

void plan_release(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		entry_release(&p->v[i]);
	free(p->v);
	free(p->primary);
	strv_release(&p->archs);
	for (i = 0; i < p->n_abi_renames; i++) {
		free(p->abi_renames[i].arch);
		free(p->abi_renames[i].old_name);
		free(p->abi_renames[i].new_name);
		strv_release(&p->abi_renames[i].users);
	}
	free(p->abi_renames);
	memset(p, 0, sizeof(*p));
}

/* Where the rename of `old_name` on `arch` is in p->abi_renames; p->n_abi_renames if nowhere. */
static size_t rename_at(const struct plan *p, const char *arch, const char *old_name)
{
	size_t i;

	for (i = 0; i < p->n_abi_renames; i++)
		if (!strcmp(p->abi_renames[i].arch, arch) &&
		    !strcmp(p->abi_renames[i].old_name, old_name))
			break;
	return i;
}

void plan_add_abi_rename(struct plan *p, const char *arch, const char *old_name,
			 const char *new_name)
{
	struct plan_abi_rename *a;

	if (rename_at(p, arch, old_name) < p->n_abi_renames)
		return;
	p->abi_renames = xrealloc(p->abi_renames, (p->n_abi_renames + 1) * sizeof(*a));
	a = &p->abi_renames[p->n_abi_renames++];
	a->arch = xstrdup(arch);
	a->old_name = xstrdup(old_name);
	a->new_name = xstrdup(new_name);
	memset(&a->users, 0, sizeof(a->users));
}

void plan_add_abi_user(struct plan *p, const char *arch, const char *old_name, const char *user)
{
	size_t i = rename_at(p, arch, old_name);

	if (i < p->n_abi_renames && !strv_contains(&p->abi_renames[i].users, user))
		strv_push(&p->abi_renames[i].users, user);
}

const struct plan_abi_rename *plan_abi_rename_find(const struct plan *p, const char *arch,
						   const char *old_name)
{
	size_t i = rename_at(p, arch, old_name);

	return i < p->n_abi_renames ? &p->abi_renames[i] : NULL;
}

char *plan_entry_dpkg_name(const struct plan_entry *e)
{
	if (e->multi_arch && !strcmp(e->multi_arch, "same"))
		return xasprintf("%s:%s", e->name, e->arch);
	return xstrdup(e->name);
}

/* A seed of the essential set: what apt and mmdebstrap take as the base the rest may rely on. */
static int essential_seed(const struct plan *p, const struct plan_entry *e)
{
	if (p->primary && strcmp(e->arch, p->primary) && strcmp(e->arch, "all"))
		return 0;
	return e->essential || (e->priority && !strcasecmp(e->priority, "required"));
}

size_t plan_essential_set(const struct plan *p, unsigned char *in)
{
	size_t *work = xmalloc((p->n ? p->n : 1) * sizeof(*work)), n = 0, members = 0, i, k;

	for (i = 0; i < p->n; i++) {
		in[i] = (unsigned char)essential_seed(p, &p->v[i]);
		if (in[i])
			work[n++] = i;
	}
	members = n;
	while (n) {
		const struct plan_entry *e = &p->v[work[--n]];

		for (k = 0; k < e->n_depends; k++) {
			size_t j = e->depends[k];

			if (j < p->n && !in[j]) {
				in[j] = 1;
				work[n++] = j;
				members++;
			}
		}
	}
	free(work);
	return members;
}

static void format_json(const struct plan *p, struct buf *b)
{
	size_t i;

	buf_adds(b, "{\n  \"architectures\": [");
	for (i = 0; i < p->archs.n; i++) {
		buf_adds(b, i ? ", " : "");
		json_str(b, p->archs.v[i]);
	}
	buf_adds(b, "],\n  \"packages\": [");
	for (i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->v[i];

		buf_adds(b, i ? ",\n    { \"name\": " : "\n    { \"name\": ");
		json_str(b, e->name);
		buf_adds(b, ", \"architecture\": ");
		json_str(b, e->arch);
		buf_adds(b, ", \"version\": ");
		json_str(b, e->version);
		buf_addf(b, ", \"size\": %llu, \"sha256\": \"%s\", \"local\": %s }",
			 (unsigned long long)e->size, e->sha256, e->url ? "false" : "true");
	}
	buf_addf(b, "%s],\n  \"total\": %zu\n}\n", p->n ? "\n  " : "", p->n);
}

void plan_format(const struct plan *p, int json, struct buf *out)
{
	size_t i;

	if (json) {
		format_json(p, out);
		return;
	}
	for (i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->v[i];

		buf_addf(out, "%s:%s=%s %llu %s\n", e->name, e->arch, e->version,
			 (unsigned long long)e->size, e->sha256);
	}
}

void plan_seed(const struct plan *p, const char *digest, char *seed)
{
	struct hash h;
	size_t i;

	if (hash_init(&h, HASH_SHA256) < 0) {
		memcpy(seed, digest, 65);
		return;
	}
	hash_update(&h, digest, strlen(digest));
	for (i = 0; i < p->n; i++)
		hash_update(&h, p->v[i].sha256, strlen(p->v[i].sha256));
	hash_final_hex(&h, seed);
}

uint64_t plan_installed_bytes(const struct plan *p)
{
	uint64_t need = 0;
	size_t i;

	for (i = 0; i < p->n; i++) {
		/* an index's number: at most a TiB a package, so the sum cannot wrap */
		uint64_t kib = p->v[i].installed_size ? strtoull(p->v[i].installed_size, NULL, 10) : 0;

		need += (kib < (1ULL << 30) ? kib : 1ULL << 30) * 1024;
	}
	return need;
}
