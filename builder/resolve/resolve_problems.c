/*
 * Resolve, problems: libsolv's failed rules told in the user's names. A dependency is shown as the
 * package wrote it (the ":ea" rewrite of resolve_encode.c dropped), a job as the recipe line asked
 * for it, and the providers of a virtual package failing alike as one line.
 */
#include <string.h>

#include <solv/pool.h>
#include <solv/rules.h>
#include <solv/solverdebug.h>

#include "lib/log.h"
#include "resolve_ctx.h"

static void fmt_solvable(const struct resolve_ctx *c, Id p, struct buf *b)
{
	Solvable *s = pool_id2solvable(c->pool, p);

	buf_addf(b, "'%s:%s=%s'", pool_id2str(c->pool, s->name), pool_id2str(c->pool, s->arch),
		 pool_id2str(c->pool, s->evr));
}

static const char *rel_op(int flags)
{
	switch (flags) {
	case REL_LT: return "<<";
	case REL_LT | REL_EQ: return "<=";
	case REL_EQ: return "=";
	case REL_GT | REL_EQ: return ">=";
	case REL_GT: return ">>";
	default: return "?";
	}
}

/* A dependency as the package wrote it: our ":ea" rewrite is dropped, ":#same" never shown. */
static void fmt_dep(const struct resolve_ctx *c, Id dep, const char *ea, struct buf *b, int depth)
{
	const char *n, *colon;
	Reldep *rd;

	if (depth > 64) {
		buf_adds(b, "...");
		return;
	}
	if (ISRELDEP(dep)) {
		rd = GETRELDEP(c->pool, dep);
		if (rd->flags == REL_OR || rd->flags == REL_WITHOUT) {
			fmt_dep(c, rd->name, ea, b, depth + 1);
			if (rd->flags == REL_OR) {
				buf_adds(b, " | ");
				fmt_dep(c, rd->evr, ea, b, depth + 1);
			}
			return;
		}
		fmt_dep(c, rd->name, ea, b, depth + 1);
		buf_addf(b, " (%s %s)", rel_op(rd->flags), pool_id2str(c->pool, rd->evr));
		return;
	}
	n = pool_id2str(c->pool, dep);
	colon = strrchr(n, ':');
	if (colon && ea && (!strcmp(colon + 1, ea) || !strcmp(colon + 1, "#same")))
		buf_add(b, n, (size_t)(colon - n));
	else
		buf_adds(b, n);
}

static const char *ea_of(const struct resolve_ctx *c, Id p)
{
	Solvable *s = pool_id2solvable(c->pool, p);

	return s->arch == ARCH_ALL ? c->archs.v[0] : pool_id2str(c->pool, s->arch);
}

static int is_same_lock(const struct resolve_ctx *c, Id dep)
{
	const char *n;

	while (ISRELDEP(dep))
		dep = GETRELDEP(c->pool, dep)->name;
	n = pool_id2str(c->pool, dep);
	return str_ends_with(n, ":#same");
}

/* For a versioned relation nothing satisfies: the candidates the name does have, if any. */
static void fmt_existing(const struct resolve_ctx *c, Id dep, struct buf *b)
{
	Pool *pool = c->pool;
	Reldep *rd;
	Id p, pp;
	int n = 0;

	if (!ISRELDEP(dep) || !((rd = GETRELDEP(pool, dep))->flags & (REL_LT | REL_EQ | REL_GT)) ||
	    rd->flags > (REL_LT | REL_EQ | REL_GT))
		return;
	FOR_PROVIDES(p, pp, rd->name) {
		if (!MAPTST(&c->considered, p))
			continue;
		if (n++ == 4) {
			buf_adds(b, ", ...");
			break;
		}
		buf_adds(b, n == 1 ? " (there is only " : ", ");
		fmt_solvable(c, p, b);
	}
	if (n)
		buf_adds(b, ")");
}

/* A job's rule: what the recipe asked for or excludes, as the user wrote it. */
static void fmt_job_rule(const struct resolve_ctx *c, Solver *solv, Id rid, struct buf *b)
{
	Id what = 0, how = solver_rule2job(solv, rid, &what);
	int job = solver_rule2jobidx(solv, rid);

	if (job >= 0 && (size_t)job / 2 < c->job_what.n)
		buf_addf(b, "%s '%s'",
			 (how & SOLVER_JOBMASK) == SOLVER_LOCK ? "the recipe excludes"
							       : "the recipe asks for",
			 c->job_what.v[job / 2]);
	else
		buf_adds(b, "a request of the recipe");
}

static void fmt_rule(const struct resolve_ctx *c, Solver *solv, Id rid, struct buf *b)
{
	Id src = 0, tgt = 0, dep = 0;
	SolverRuleinfo type = solver_ruleinfo(solv, rid, &src, &tgt, &dep);

	switch (type) {
	case SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP:
		fmt_solvable(c, src, b);
		buf_adds(b, " depends on '");
		fmt_dep(c, dep, ea_of(c, src), b, 0);
		buf_adds(b, "', which no candidate package provides");
		fmt_existing(c, dep, b);
		return;
	case SOLVER_RULE_PKG_REQUIRES:
		fmt_solvable(c, src, b);
		buf_adds(b, " depends on '");
		fmt_dep(c, dep, ea_of(c, src), b, 0);
		buf_adds(b, "'");
		return;
	case SOLVER_RULE_PKG_CONFLICTS:
		fmt_solvable(c, src, b);
		if (is_same_lock(c, dep)) {
			buf_adds(b, " and ");
			fmt_solvable(c, tgt, b);
			buf_adds(b, " are Multi-Arch: same and must have the same version on every "
				    "architecture (version skew)");
			return;
		}
		buf_adds(b, " conflicts with or breaks ");
		fmt_solvable(c, tgt, b);
		buf_adds(b, " ('");
		fmt_dep(c, dep, NULL, b, 0);
		buf_adds(b, "')");
		return;
	case SOLVER_RULE_PKG_SAME_NAME:
		fmt_solvable(c, src, b);
		buf_adds(b, " and ");
		fmt_solvable(c, tgt, b);
		buf_adds(b, " cannot both be installed: only Multi-Arch: same packages can be "
			    "installed for several architectures, and one version per architecture");
		return;
	case SOLVER_RULE_PKG_NOT_INSTALLABLE:
		fmt_solvable(c, src, b);
		buf_adds(b, " is not installable on the recipe's architectures");
		return;
	default:
		break;
	}
	if ((type & SOLVER_RULE_TYPEMASK) == SOLVER_RULE_JOB)
		fmt_job_rule(c, solv, rid, b);
	else
		buf_adds(b, solver_ruleinfo2str(solv, type, src, tgt, dep));
}

/* Where the predicate of a line "'name:arch=version' depends on ..." starts; NULL if none. */
static const char *predicate(const char *line)
{
	const char *q = line[0] == '\'' ? strstr(line + 1, "' ") : NULL;

	return q ? q + 1 : NULL;
}

#define GROUP_SHOWN 8 /* packages named in one grouped line */

/*
 * Log a problem's lines, those sharing a predicate as one (every provider of a virtual package
 * failing the same way): "each of 'a', 'b' and 3 more depends on 'x'".
 */
static void log_grouped(Id problem, const struct strv *lines)
{
	size_t i, j, n;
	const char *pi, *pj;

	for (i = 0; i < lines->n; i++) {
		struct buf b = { 0 };

		if (!(pi = predicate(lines->v[i]))) {
			log_error("  problem %d: %s", problem, lines->v[i]);
			continue;
		}
		for (j = n = 0; j < lines->n; j++) {
			pj = predicate(lines->v[j]);
			if (!pj || strcmp(pi, pj))
				continue;
			if (j < i)
				break; /* logged with an earlier line */
			if (n < GROUP_SHOWN)
				buf_addf(&b, "%s%.*s", n ? ", " : "", (int)(pj - lines->v[j]),
					 lines->v[j]);
			n++;
		}
		if (j < lines->n && j < i) {
			buf_release(&b);
			continue;
		}
		if (n == 1)
			log_error("  problem %d: %s", problem, lines->v[i]);
		else if (n > GROUP_SHOWN)
			log_error("  problem %d: each of %s and %zu more%s", problem, b.p,
				  n - GROUP_SHOWN, pi);
		else
			log_error("  problem %d: each of %s%s", problem, b.p, pi);
		buf_release(&b);
	}
}

/* A dependency nothing provides that names a library renamed for 64-bit time_t: why, what to do. */
static void explain_t64(const struct resolve_ctx *c, Solver *solv, Id rid, struct strv *notes)
{
	Id src = 0, tgt = 0, dep = 0;

	if (solver_ruleinfo(solv, rid, &src, &tgt, &dep) == SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP)
		resolve_t64_explain(c, src, dep, notes);
}

void resolve_report_problems(const struct resolve_ctx *c, Solver *solv)
{
	Id problem, n = solver_problem_count(solv);
	Queue rules;
	int i;

	queue_init(&rules);
	log_error("no installable package set satisfies the recipe (%d problem%s):", n,
		  n == 1 ? "" : "s");
	for (problem = 1; problem <= n; problem++) {
		struct strv lines = { 0 }, notes = { 0 };
		size_t k;

		solver_findallproblemrules(solv, problem, &rules);
		for (i = 0; i < rules.count; i++) {
			struct buf b = { 0 };

			fmt_rule(c, solv, rules.elements[i], &b);
			if (!strv_contains(&lines, b.p))
				strv_push(&lines, b.p);
			buf_release(&b);
			explain_t64(c, solv, rules.elements[i], &notes);
		}
		log_grouped(problem, &lines);
		for (k = 0; k < notes.n; k++)
			log_error("  problem %d: %s", problem, notes.v[k]);
		strv_release(&notes);
		strv_release(&lines);
	}
	queue_free(&rules);
}

