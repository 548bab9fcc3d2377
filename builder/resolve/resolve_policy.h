/*
 * Resolve policy: apt's choices (pkgDepCache::MarkInstall) replayed over the resolver's pool.
 * Internal to the resolve module: only resolve.c and resolve_policy.c include it (libsolv types).
 */
#ifndef MKI_RESOLVE_POLICY_H
#define MKI_RESOLVE_POLICY_H

#include <stdint.h>

#include <solv/pool.h>
#include <solv/queue.h>

struct resolve_policy {
	Pool *pool;             /* borrowed; pool->whatprovides created */
	const Map *considered;  /* candidates (apt's candidate versions) */
	const Map *excluded;    /* solvables the recipe excludes, or NULL */
	const Id *arch_ids;     /* primary first (borrowed) */
	size_t n_archs;
	const uint8_t *rank;    /* by solvable id: 0 essential, 1 required, 2 important, 3 other */
	int recommends;         /* follow Recommends too */
};

/**
 * The best candidate for dependency `dep`, apt's way: the first alternative of an or-group that
 * has a candidate; within it the real package of that name before providers, then Essential,
 * the primary architecture, Priority, the name. 0 if none. `avoid` (may be NULL) holds
 * solvables not to pick.
 */
Id resolve_policy_pick(const struct resolve_policy *pol, Id dep, const Map *avoid);

/**
 * apt's install walk: mark every root (in order), then follow each one's Pre-Depends, Depends
 * (and Recommends if asked) depth first, a dependency already satisfied by a marked package
 * being left alone, else satisfied by the first of its solutions in resolve_policy_pick's order
 * that apt's MarkInstall would take (no marked package conflicts with it, its Conflicts hit no
 * root, its own dependencies succeed - else it is discarded and the next one tried). Its
 * Conflicts unmark packages marked before (not roots), whose dependants then choose again. What
 * no root needs any more is dropped. Appends the marked solvables to `out` (roots included), in
 * marking order.
 */
void resolve_policy_walk(const struct resolve_policy *pol, const Queue *roots, Queue *out);

/**
 * The roots of apt's walk: for each SOLVER_INSTALL job of `jobs` (solver job pairs, in the
 * request's order), the solvable it names, the first of a ONE_OF set, or the best provider.
 */
void resolve_policy_roots(const struct resolve_policy *pol, const Queue *jobs, Queue *roots);

#endif
