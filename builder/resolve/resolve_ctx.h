/*
 * The resolver's shared state, internal to the resolve modules (libsolv types): only resolve*.c
 * include it. resolve_encode.c fills the pool, resolve_candidates.c picks the versions considered,
 * resolve_jobs.c turns the request into solver jobs, resolve_problems.c explains a failure and
 * resolve.c solves and builds the plan (ordered by resolve_order.c, which knows no libsolv).
 */
#ifndef MKI_RESOLVE_CTX_H
#define MKI_RESOLVE_CTX_H

#include <stdint.h>
#include <sys/types.h>

#include <solv/pool.h>
#include <solv/repo.h>
#include <solv/solver.h>

#include "debian/deb822.h"
#include "debian/plan.h"
#include "lib/runlimits.h"
#include "lib/str.h"
#include "recipe/lockfile.h"
#include "recipe/recipe.h"
#include "repo/indexes.h"

#define MAX_NAME 256 /* package names, versions and architectures we accept */

enum ma { MA_NO, MA_SAME, MA_FOREIGN, MA_ALLOWED };
enum { F_ESSENTIAL = 1, F_REQUIRED = 2, F_IMPORTANT = 4 };

/* Where a solvable's stanza lives, and the little the request needs before the end. */
struct pkgref {
	uint32_t file;  /* index into resolve_ctx files */
	uint32_t line;
	off_t offset;
	uint8_t ma, flags, valid;
};

/* A file solvables were read from: a Packages index or a local .deb. */
struct srcfile {
	char *path;       /* Packages file, or local .deb */
	const struct index_release *rel; /* NULL for a local .deb */
	char *text;       /* local .deb: its control text */
	size_t text_len;
};

/* One resolve_plan() call: the pool and what each step adds to it. */
struct resolve_ctx {
	Pool *pool;
	Repo *local_repo;
	const struct recipe *r;
	const struct indexes *ix;
	const struct limits *lim; /* NULL: the defaults */
	struct strv archs;      /* primary first */
	struct pkgref *refs;    /* by solvable id */
	size_t alloc_refs;
	struct srcfile *files;
	size_t n_files, alloc_files;
	Queue jobs;
	struct strv job_what;   /* per job index / 2: what the user asked for, for messages */
	Map considered;
	Id *best;               /* by solvable id: 1 if it is the candidate of its (name, arch) */
	struct lockfile lock;
	int locked;
	int lock_changed; /* --locked, but the recipe's digest is not the lock's: resolved anew */
};


/** Is solvable `p` from a local .deb (not from an index)? */
static inline int resolve_is_local(const struct resolve_ctx *c, Id p)
{
	return c->files[c->refs[p].file].rel == NULL;
}

/* ---- resolve.c ---------------------------------------------------------------------------- */

/**
 * Open solvable `p`'s stanza again into `d` (the index is verified and does not change): 0 with
 * `d` on the stanza (close it with deb822_close), or an error, logged, with `d` closed.
 */
int resolve_read_stanza(const struct resolve_ctx *c, Id p, struct deb822 *d);

/* ---- resolve_encode.c: Packages stanzas -> solvables, multiarch rewritten as apt does ------- */

/** A pool with the recipe's architectures as its arch policy (primary preferred). */
Pool *resolve_pool_new(const struct resolve_ctx *c);

/**
 * Load every index of c->ix for the recipe's architectures, then the recipe's local .debs, into
 * c->pool, filling c->refs and c->files. Errors are logged with file and line: -MKI_E_PARSE,
 * -MKI_E_LIMIT_REPO / -MKI_E_LIMIT_PKG, -MKI_E_RESOLVE (a local .deb of a foreign architecture).
 */
int resolve_load_all(struct resolve_ctx *c);

/** The pool string "n:arch" (n is `nlen` bytes, not terminated), interned. */
Id resolve_name_arch_id(Pool *pool, const char *n, size_t nlen, const char *arch);

/* ---- resolve_candidates.c ----------------------------------------------------------------- */

/**
 * Mark the candidates in c->considered (apt's candidate: the newest per (name, arch); the pinned
 * or locked version; the user's own .deb first) and c->best. Missing pins: -MKI_E_RESOLVE, logged.
 */
int resolve_choose_candidates(struct resolve_ctx *c);

/* ---- resolve_jobs.c ----------------------------------------------------------------------- */

/** The request as solver jobs into c->jobs (base set, packages, local .debs, excludes, M-A same);
 *  every unknown name or architecture logged, then -MKI_E_RESOLVE. Needs whatprovides. */
int resolve_build_jobs(struct resolve_ctx *c);

/** --locked: exactly the lock's packages as jobs; -MKI_E_LOCK (logged) for one no index lists. */
int resolve_build_locked_jobs(struct resolve_ctx *c);

/* ---- resolve_lockchange.c: --locked with a changed recipe --------------------------------- */

/**
 * Log, as one error, which keys of the recipe changed (the lock's field: lines against the
 * recipe's) and what plan `p` (the changed recipe resolved anew; NULL when that failed) adds,
 * removes or changes against the lock's packages. Returns -MKI_E_LOCK.
 */
int resolve_lock_changed(const struct resolve_ctx *c, const struct plan *p, const char *file);

/** The keys whose "KEY SHA256" differ between `locked` and `now`, as "'k', 'k'" into `out`. */
void resolve_lock_fields_changed(const struct strv *locked, const struct strv *now,
				 struct buf *out);

/**
 * "the plan would add N (a:arch 1.0, ...), remove N (...), change N (b:arch 1 -> 2)" for `p`
 * against the lock's packages, at most 8 named per kind, into `out`.
 */
void resolve_lock_packages_changed(const struct lockfile *lk, const struct plan *p,
				   struct buf *out);

/* ---- resolve_problems.c ------------------------------------------------------------------- */

/** Log why `solv` failed, in the user's names (the package's own relations, grouped). */
void resolve_report_problems(const struct resolve_ctx *c, Solver *solv);

/* ---- resolve_t64.c: the 64-bit time_t transition's renamed libraries ----------------------- */

/**
 * For dependency `dep` of solvable `src` that nothing provides: where it names a library Debian
 * renamed for the 64-bit time_t ABI whose new name does not provide it on that architecture,
 * what changed and the ways out, as lines pushed into `notes` (each once). Nothing otherwise.
 */
void resolve_t64_explain(const struct resolve_ctx *c, Id src, Id dep, struct strv *notes);

/**
 * Record in `pl` (plan_add_abi_rename) each renamed library among the `n` solvables `chosen`
 * whose new name does not provide the old one on its architecture, and as its users
 * (plan_add_abi_user) the chosen packages that depend on the old name and are met only through
 * it.
 */
void resolve_t64_renames(const struct resolve_ctx *c, const Id *chosen, size_t n,
			 struct plan *pl);

#endif
