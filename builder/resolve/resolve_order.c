/* Resolve, order: the plan's entries in install order (pure: no libsolv, no I/O). */
#include "resolve_order.h"

#include <stdlib.h>
#include <string.h>

struct node {
	const struct plan_entry *e;
	int tier;      /* 0: Essential, Pre-Depends targets and what they need; 1: the rest */
	int placed;
	size_t waits, waits_pre; /* Depends and Pre-Depends not placed yet */
};

static int key_cmp(const struct node *a, const struct node *b)
{
	int r;

	if (a->tier != b->tier)
		return a->tier - b->tier;
	if ((r = strcmp(a->e->name, b->e->name)))
		return r;
	return strcmp(a->e->arch, b->e->arch);
}

/* Tier 0: Essential and Pre-Depends targets, and everything they depend on (a worklist). */
static void mark_tiers(struct plan *pl, struct node *nodes)
{
	size_t *work = xmalloc(pl->n * sizeof(*work)), n = 0, i, k;

	for (i = 0; i < pl->n; i++) {
		nodes[i].tier = 1;
		if (pl->v[i].essential || pl->v[i].pre_depended) {
			nodes[i].tier = 0;
			work[n++] = i;
		}
	}
	while (n) {
		i = work[--n];
		for (k = 0; k < pl->v[i].n_depends; k++) {
			size_t j = pl->v[i].depends[k];

			if (nodes[j].tier) {
				nodes[j].tier = 0;
				work[n++] = j;
			}
		}
	}
	free(work);
}

/* Strongly connected components of the depends graph (iterative Tarjan): comp[i]. */
static size_t tarjan(const struct plan *pl, size_t *comp)
{
	size_t n = pl->n, *index = xmalloc(n * sizeof(size_t)), *low = xmalloc(n * sizeof(size_t));
	size_t *stack = xmalloc(n * sizeof(size_t)), *cs = xmalloc(n * sizeof(size_t));
	size_t *edge = xcalloc(n, sizeof(size_t)), sp = 0, csp, next = 0, n_comp = 0, i, v, w;
	char *on = xcalloc(n, 1);

	for (i = 0; i < n; i++)
		index[i] = (size_t)-1;
	for (i = 0; i < n; i++) {
		if (index[i] != (size_t)-1)
			continue;
		csp = 0;
		cs[csp++] = i;
		index[i] = low[i] = next++;
		stack[sp++] = i;
		on[i] = 1;
		while (csp) {
			v = cs[csp - 1];
			if (edge[v] < pl->v[v].n_depends) {
				w = pl->v[v].depends[edge[v]++];
				if (index[w] == (size_t)-1) {
					index[w] = low[w] = next++;
					stack[sp++] = w;
					on[w] = 1;
					cs[csp++] = w;
				} else if (on[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			csp--;
			if (csp && low[v] < low[cs[csp - 1]])
				low[cs[csp - 1]] = low[v];
			if (low[v] != index[v])
				continue;
			do {
				w = stack[--sp];
				on[w] = 0;
				comp[w] = n_comp;
			} while (w != v);
			n_comp++;
		}
	}
	free(index);
	free(low);
	free(stack);
	free(cs);
	free(edge);
	free(on);
	return n_comp;
}

/* Inside component `k`: the smallest ready member; in a cycle, one whose Pre-Depends are all
 * placed, then the fewest unplaced dependencies. */
static size_t pick_member(const struct plan *pl, const struct node *nodes, const size_t *comp,
			  size_t k)
{
	size_t i, best = (size_t)-1;

	for (i = 0; i < pl->n; i++) {
		const struct node *a = &nodes[i], *b = best == (size_t)-1 ? NULL : &nodes[best];

		if (a->placed || comp[i] != k)
			continue;
		if (!b || (!!a->waits_pre != !!b->waits_pre ? !a->waits_pre
		    : a->waits + a->waits_pre != b->waits + b->waits_pre
			  ? a->waits + a->waits_pre < b->waits + b->waits_pre
			  : key_cmp(a, b) < 0))
			best = i;
	}
	return best;
}

/* The ready component (no unplaced dependency outside it) with the smallest member key. */
static size_t pick_comp(const struct plan *pl, const struct node *nodes, const size_t *comp,
			const size_t *comp_waits)
{
	size_t i, best = (size_t)-1;

	for (i = 0; i < pl->n; i++)
		if (!nodes[i].placed && !comp_waits[comp[i]] &&
		    (best == (size_t)-1 || key_cmp(&nodes[i], &nodes[best]) < 0))
			best = i;
	return comp[best];
}

/*
 * Dependencies first: the graph's components in topological order, ties broken by the smallest
 * (tier, name, arch); inside a dependency cycle, Pre-Depends are honoured first.
 */
static size_t *topo_order(const struct plan *pl, struct node *nodes)
{
	size_t *order = xmalloc(pl->n * sizeof(*order)), *comp = xmalloc(pl->n * sizeof(size_t));
	size_t **users = xcalloc(pl->n, sizeof(*users)), *n_users = xcalloc(pl->n, sizeof(size_t));
	size_t *comp_waits, i, k, done = 0, m, u, n_comp = tarjan(pl, comp);

	comp_waits = xcalloc(n_comp, sizeof(size_t));
	for (i = 0; i < pl->n; i++)
		for (k = 0; k < pl->v[i].n_depends; k++) {
			size_t j = pl->v[i].depends[k], pre = k < pl->v[i].n_pre_depends;

			users[j] = xrealloc(users[j], (n_users[j] + 1) * sizeof(size_t));
			users[j][n_users[j]++] = i << 1 | pre;
			*(pre ? &nodes[i].waits_pre : &nodes[i].waits) += 1;
			comp_waits[comp[i]] += comp[i] != comp[j];
		}
	while (done < pl->n) {
		size_t cur = pick_comp(pl, nodes, comp, comp_waits);

		while ((m = pick_member(pl, nodes, comp, cur)) != (size_t)-1) {
			nodes[m].placed = 1;
			order[done++] = m;
			for (k = 0; k < n_users[m]; k++) {
				u = users[m][k] >> 1;
				*(users[m][k] & 1 ? &nodes[u].waits_pre : &nodes[u].waits) -= 1;
				comp_waits[comp[u]] -= comp[u] != cur;
			}
		}
	}
	for (i = 0; i < pl->n; i++)
		free(users[i]);
	free(users);
	free(n_users);
	free(comp);
	free(comp_waits);
	return order;
}

/* Put the plan in `order`, renumbering every entry's depends. */
static void apply_order(struct plan *pl, const size_t *order)
{
	struct plan_entry *v = xmalloc(pl->n * sizeof(*v));
	size_t *pos = xmalloc(pl->n * sizeof(*pos)), i, k;

	for (i = 0; i < pl->n; i++)
		pos[order[i]] = i;
	for (i = 0; i < pl->n; i++) {
		v[i] = pl->v[order[i]];
		for (k = 0; k < v[i].n_depends; k++)
			v[i].depends[k] = pos[v[i].depends[k]];
	}
	free(pl->v);
	pl->v = v;
	pl->alloc = pl->n;
	free(pos);
}

void resolve_order(struct plan *pl)
{
	struct node *nodes = xcalloc(pl->n + 1, sizeof(*nodes));
	size_t *order, i;

	for (i = 0; i < pl->n; i++)
		nodes[i].e = &pl->v[i];
	mark_tiers(pl, nodes);
	order = topo_order(pl, nodes);
	apply_order(pl, order);
	free(order);
	free(nodes);
}
