/*
 * Resolve: Packages indexes + the recipe's request -> the ordered plan, on libsolv.
 *
 * libsolv 0.7 knows nothing of Debian multiarch, so dependencies are rewritten at load time the
 * way apt does internally (DESIGN.md section 2). "ea" is a package's effective architecture: its
 * own, or the primary one for Architecture: all.
 *   provides  N = V (plain, only for conflicts), N:ea = V, N:X = V for every arch X if M-A foreign,
 *             N:any = V if M-A allowed, and the same for every Provides entry
 *   depends   N -> N:ea, N:any stays, N:native -> N:primary, N:X stays
 *   conflicts plain N (every arch); for M-A same "dep WITHOUT N:#same" so a package's own
 *             other-arch copies never conflict with it
 *   M-A same  provides N:#same = V and conflicts with N:#same != V: all copies share one version;
 *             a MULTIVERSION job lifts libsolv's one-package-per-name rule for them
 * Only the newest version per (name, arch) is considered (apt's candidate), unless pinned or the
 * recipe allows older versions. Packages' text is not kept: each solvable remembers where its
 * stanza is and the chosen ones are read again at the end.
 */
#include "resolve.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <solv/evr.h>
#include <solv/pool.h>
#include <solv/poolarch.h>
#include <solv/repo.h>
#include <solv/rules.h>
#include <solv/solver.h>
#include <solv/solverdebug.h>

#include "arch.h"
#include "debcontrol.h"
#include "deb822.h"
#include "err.h"
#include "url.h"
#include "hash.h"
#include "limits.h"
#include "keyfpr.h"
#include "lockfile.h"
#include "log.h"
#include "resolve_policy.h"

#define MAX_NAME 256 /* package names, versions and architectures we accept */

enum ma { MA_NO, MA_SAME, MA_FOREIGN, MA_ALLOWED };
enum { F_ESSENTIAL = 1, F_REQUIRED = 2, F_IMPORTANT = 4 };

/* Where a solvable's stanza lives, and the little the request needs before the end. */
struct pkgref {
	uint32_t file;  /* index into ctx files */
	uint32_t line;
	off_t offset;
	uint8_t ma, flags, valid;
};

struct srcfile {
	char *path;       /* Packages file, or local .deb */
	const struct index_release *rel; /* NULL for a local .deb */
	char *text;       /* local .deb: its control text */
	size_t text_len;
};

struct ctx {
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
};

/* ---- dependency parsing ------------------------------------------------------------------ */

struct atom {
	const char *name, *qual, *ver;
	size_t nlen, qlen, vlen;
	int flags; /* REL_* or 0 */
};

static int is_sp(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static const char *skip_sp(const char *s, const char *end)
{
	while (s < end && is_sp(*s))
		s++;
	return s;
}

static int parse_op(const char **s, const char *end)
{
	static const struct { const char *op; int flags; } ops[] = {
		{ "<<", REL_LT }, { "<=", REL_LT | REL_EQ }, { ">>", REL_GT },
		{ ">=", REL_GT | REL_EQ }, { "=", REL_EQ },
		{ "<", REL_LT | REL_EQ }, { ">", REL_GT | REL_EQ }, /* obsolete forms */
	};
	size_t i, n;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		n = strlen(ops[i].op);
		if ((size_t)(end - *s) >= n && !memcmp(*s, ops[i].op, n)) {
			*s += n;
			return ops[i].flags;
		}
	}
	return -1;
}

/* One "name[:qual] [(op version)] [[archs]] [<profiles>]" in [s, end). 0 or -1. */
static int parse_atom(const char *s, const char *end, struct atom *a)
{
	const char *p;

	memset(a, 0, sizeof(*a));
	s = skip_sp(s, end);
	for (p = s; p < end && !is_sp(*p) && *p != '(' && *p != ':' && *p != '[' && *p != '<'; p++)
		;
	a->name = s;
	a->nlen = (size_t)(p - s);
	if (!a->nlen || a->nlen >= MAX_NAME)
		return -1;
	if (p < end && *p == ':') {
		for (a->qual = ++p; p < end && !is_sp(*p) && *p != '(' && *p != '['; p++)
			;
		a->qlen = (size_t)(p - a->qual);
		if (!a->qlen || a->qlen >= 64)
			return -1;
	}
	p = skip_sp(p, end);
	if (p < end && *p == '(') {
		p = skip_sp(p + 1, end);
		if ((a->flags = parse_op(&p, end)) < 0)
			return -1;
		a->ver = p = skip_sp(p, end);
		while (p < end && !is_sp(*p) && *p != ')')
			p++;
		a->vlen = (size_t)(p - a->ver);
		p = skip_sp(p, end);
		if (!a->vlen || a->vlen >= MAX_NAME || p >= end || *p != ')')
			return -1;
		p++;
	}
	/* Architecture restrictions and build profiles only appear in source packages: ignore */
	p = skip_sp(p, end);
	return p < end && *p != '[' && *p != '<' ? -1 : 0;
}

static Id name_arch_id(Pool *pool, const char *n, size_t nlen, const char *arch)
{
	char buf[MAX_NAME + 72];
	size_t alen = strlen(arch);

	/* hot path (every dependency of every package): no printf */
	if (nlen >= MAX_NAME || alen >= 64)
		return pool_strn2id(pool, n, (unsigned)nlen, 1);
	memcpy(buf, n, nlen);
	buf[nlen] = ':';
	memcpy(buf + nlen + 1, arch, alen);
	return pool_strn2id(pool, buf, (unsigned)(nlen + 1 + alen), 1);
}

static Id with_version(Pool *pool, Id name, const struct atom *a)
{
	if (!a->flags)
		return name;
	return pool_rel2id(pool, name, pool_strn2id(pool, a->ver, (unsigned)a->vlen, 1), a->flags, 1);
}

/* The arch a dependency qualifier selects, for positive dependencies. */
static Id dep_name(struct ctx *c, const struct atom *a, const char *ea)
{
	char q[64];

	if (!a->qual)
		return name_arch_id(c->pool, a->name, a->nlen, ea);
	snprintf(q, sizeof(q), "%.*s", (int)a->qlen, a->qual);
	if (!strcmp(q, "native"))
		return name_arch_id(c->pool, a->name, a->nlen, c->archs.v[0]);
	return name_arch_id(c->pool, a->name, a->nlen, q);
}

/* Conflicts/Breaks: plain name across archs, unless an arch is named. */
static Id neg_name(struct ctx *c, const struct atom *a)
{
	if (!a->qual || (a->qlen == 3 && !memcmp(a->qual, "any", 3)))
		return pool_strn2id(c->pool, a->name, (unsigned)a->nlen, 1);
	return dep_name(c, a, c->archs.v[0]);
}

struct pkgctx {
	struct ctx *c;
	Solvable *s;
	const char *ea;
	const char *file;
	unsigned long line;
	enum ma ma;
	Id same_id; /* N:#same for M-A same packages */
	int limit_err; /* an index's (-MKI_E_LIMIT_REPO) or a local .deb's (-MKI_E_LIMIT_PKG) */
};

static int bad_dep(const struct pkgctx *pc, const char *field, const char *v)
{
	log_error("%s:%lu: malformed %s of '%s': '%.80s'", pc->file, pc->line, field,
		  pool_id2str(pc->c->pool, pc->s->name), v);
	return -MKI_E_PARSE;
}

/*
 * One more entry in `field`. Past the 'relations' limit the stanza is refused, not loaded: no
 * real package comes close (bookworm's most is 1 603), and the check keeps the work per stanza
 * linear and small whatever the solver would make of a hundred thousand dependencies.
 */
static int count_relation(const struct pkgctx *pc, const char *field, size_t *n)
{
	uint64_t max = limits_get(pc->c->lim, LIMIT_RELATIONS);

	if (++*n <= max)
		return 0;
	log_error("%s:%lu: the %s of '%s' has more than %llu entries: refused (%s)", pc->file,
		  pc->line, field, pool_id2str(pc->c->pool, pc->s->name), (unsigned long long)max,
		  limits_hint(pc->c->lim, LIMIT_RELATIONS).s);
	return pc->limit_err;
}

/* Depends, Pre-Depends, Recommends: alternatives become REL_OR, in the order written. */
static int add_positive(struct pkgctx *pc, const char *field, const char *v, Offset *deps,
			Id marker)
{
	const char *clause = v, *cend, *alt, *aend, *end = v + strlen(v);
	struct atom a;
	Id id, acc;
	int ret;
	size_t n = 0;

	while (clause < end) {
		cend = memchr(clause, ',', (size_t)(end - clause));
		cend = cend ? cend : end;
		acc = 0;
		for (alt = clause; alt < cend; alt = aend + 1) {
			aend = memchr(alt, '|', (size_t)(cend - alt));
			aend = aend ? aend : cend;
			if ((ret = count_relation(pc, field, &n)))
				return ret;
			if (parse_atom(alt, aend, &a))
				return bad_dep(pc, field, v);
			id = with_version(pc->c->pool, dep_name(pc->c, &a, pc->ea), &a);
			acc = acc ? pool_rel2id(pc->c->pool, acc, id, REL_OR, 1) : id;
			if (aend == cend)
				break;
		}
		if (!acc && skip_sp(clause, cend) != cend)
			return bad_dep(pc, field, v);
		if (acc)
			*deps = repo_addid_dep(pc->s->repo, *deps, acc, marker);
		clause = cend + 1;
	}
	return 0;
}

static int add_negative(struct pkgctx *pc, const char *field, const char *v)
{
	const char *clause = v, *cend, *end = v + strlen(v);
	struct atom a;
	size_t n = 0;
	int ret;
	Id id;

	for (; clause < end; clause = cend + 1) {
		cend = memchr(clause, ',', (size_t)(end - clause));
		cend = cend ? cend : end;
		if (skip_sp(clause, cend) == cend)
			continue;
		if ((ret = count_relation(pc, field, &n)))
			return ret;
		if (memchr(clause, '|', (size_t)(cend - clause)) || parse_atom(clause, cend, &a))
			return bad_dep(pc, field, v);
		id = with_version(pc->c->pool, neg_name(pc->c, &a), &a);
		if (pc->same_id)
			id = pool_rel2id(pc->c->pool, id, pc->same_id, REL_WITHOUT, 1);
		pc->s->conflicts = repo_addid_dep(pc->s->repo, pc->s->conflicts, id, 0);
	}
	return 0;
}

/* The implicit provides of a name (the package's own, or a Provides entry) at version evr. */
static void provide_name(struct pkgctx *pc, const char *n, size_t nlen, Id evr)
{
	Pool *pool = pc->c->pool;
	Solvable *s = pc->s;
	Id flags = evr ? REL_EQ : 0;
	size_t i;

#define PROV(id) \
	(s->provides = repo_addid_dep(s->repo, s->provides, \
				      flags ? pool_rel2id(pool, (id), evr, flags, 1) : (id), 0))
	PROV(pool_strn2id(pool, n, (unsigned)nlen, 1));
	PROV(name_arch_id(pool, n, nlen, pc->ea));
	if (pc->ma == MA_FOREIGN)
		for (i = 0; i < pc->c->archs.n; i++)
			if (strcmp(pc->c->archs.v[i], pc->ea))
				PROV(name_arch_id(pool, n, nlen, pc->c->archs.v[i]));
	if (pc->ma == MA_ALLOWED)
		PROV(name_arch_id(pool, n, nlen, "any"));
#undef PROV
}

static int add_provides(struct pkgctx *pc, const char *v)
{
	const char *clause = v, *cend, *end = v + strlen(v);
	struct atom a;
	size_t n = 0;
	int ret;

	for (; clause < end; clause = cend + 1) {
		cend = memchr(clause, ',', (size_t)(end - clause));
		cend = cend ? cend : end;
		if (skip_sp(clause, cend) == cend)
			continue;
		if ((ret = count_relation(pc, "Provides", &n)))
			return ret;
		if (parse_atom(clause, cend, &a) || (a.flags && a.flags != REL_EQ))
			return bad_dep(pc, "Provides", v);
		provide_name(pc, a.name, a.nlen,
			     a.flags ? pool_strn2id(pc->c->pool, a.ver, (unsigned)a.vlen, 1) : 0);
	}
	return 0;
}

static void add_same_lock(struct pkgctx *pc)
{
	Pool *pool = pc->c->pool;
	Solvable *s = pc->s;
	char n[MAX_NAME];

	snprintf(n, sizeof(n), "%s", pool_id2str(pool, s->name));
	pc->same_id = name_arch_id(pool, n, strlen(n), "#same");
	s->provides = repo_addid_dep(s->repo, s->provides,
				     pool_rel2id(pool, pc->same_id, s->evr, REL_EQ, 1), 0);
	s->conflicts = repo_addid_dep(s->repo, s->conflicts,
				      pool_rel2id(pool, pc->same_id, s->evr, REL_LT, 1), 0);
	s->conflicts = repo_addid_dep(s->repo, s->conflicts,
				      pool_rel2id(pool, pc->same_id, s->evr, REL_GT, 1), 0);
}

static enum ma parse_ma(const char *v)
{
	if (!v)
		return MA_NO;
	if (!strcmp(v, "same"))
		return MA_SAME;
	if (!strcmp(v, "foreign"))
		return MA_FOREIGN;
	if (!strcmp(v, "allowed"))
		return MA_ALLOWED;
	return MA_NO;
}

static int valid_token(const char *s)
{
	size_t n = strlen(s);

	return n && n < MAX_NAME && !strpbrk(s, " \t\n,|()");
}

static void set_ref(struct ctx *c, Id p, uint32_t file, const struct deb822 *d, enum ma ma,
		    const char *ess, const char *prio)
{
	struct pkgref *ref;

	if ((size_t)p >= c->alloc_refs) {
		size_t old = c->alloc_refs;

		ALLOC_GROW(c->refs, (size_t)p + 1, c->alloc_refs);
		memset(c->refs + old, 0, (c->alloc_refs - old) * sizeof(*c->refs));
	}
	ref = &c->refs[p];
	memset(ref, 0, sizeof(*ref));
	ref->file = file;
	ref->line = (uint32_t)d->stanza_line;
	ref->offset = d->stanza_offset;
	ref->ma = (uint8_t)ma;
	ref->valid = 1;
	if (ess && !strcasecmp(ess, "yes"))
		ref->flags |= F_ESSENTIAL;
	if (prio && !strcmp(prio, "required"))
		ref->flags |= F_REQUIRED;
	if (prio && !strcmp(prio, "important"))
		ref->flags |= F_IMPORTANT;
}

/* The fields the resolver reads, found in one pass over the stanza (the hot path). */
enum fld { F_PACKAGE, F_VERSION, F_ARCH, F_MA, F_ESS, F_PRIO, F_PROVIDES, F_PREDEPENDS,
	   F_DEPENDS, F_RECOMMENDS, F_CONFLICTS, F_BREAKS, F_N };
static const char *const fld_names[F_N] = { "Package", "Version", "Architecture", "Multi-Arch",
	"Essential", "Priority", "Provides", "Pre-Depends", "Depends", "Recommends", "Conflicts",
	"Breaks" };

static void get_fields(const struct deb822 *d, const char **v)
{
	size_t i;
	int k;

	memset(v, 0, F_N * sizeof(*v));
	for (i = 0; i < d->n_fields; i++) {
		const char *n = d->fields[i].name;
		int c0 = n[0] | 0x20;

		for (k = 0; k < F_N; k++)
			if ((fld_names[k][0] | 0x20) == c0 && !strcasecmp(n, fld_names[k])) {
				v[k] = d->fields[i].value;
				break;
			}
	}
}

/* The relationship fields, after the solvable's identity is set. */
static int add_relations(struct pkgctx *pc, const char **f)
{
	static const int negs[] = { F_CONFLICTS, F_BREAKS };
	const char *v;
	size_t i;
	int ret = 0;

	char name[MAX_NAME];

	/* a copy: interning new strings may move the pool's string space */
	snprintf(name, sizeof(name), "%s", pool_id2str(pc->c->pool, pc->s->name));
	provide_name(pc, name, strlen(name), pc->s->evr);
	if (pc->ma == MA_SAME)
		add_same_lock(pc);
	if ((v = f[F_PROVIDES]) && (ret = add_provides(pc, v)))
		return ret;
	if ((v = f[F_PREDEPENDS]) &&
	    (ret = add_positive(pc, "Pre-Depends", v, &pc->s->requires, SOLVABLE_PREREQMARKER)))
		return ret;
	if ((v = f[F_DEPENDS]) &&
	    (ret = add_positive(pc, "Depends", v, &pc->s->requires, -SOLVABLE_PREREQMARKER)))
		return ret;
	if ((v = f[F_RECOMMENDS]) &&
	    (ret = add_positive(pc, "Recommends", v, &pc->s->recommends, 0)))
		return ret;
	for (i = 0; i < 2; i++)
		if ((v = f[negs[i]]) && (ret = add_negative(pc, fld_names[negs[i]], v)))
			return ret;
	return 0;
}

/*
 * Add the current stanza of `d` to `repo`. `file_arch` is the index's arch ("all", an arch, or
 * NULL for a local .deb); `take_all` says whether Architecture: all stanzas are read from it.
 */
static int add_stanza(struct ctx *c, Repo *repo, uint32_t file, const struct deb822 *d,
		      const char *file_arch, int take_all)
{
	const char *f[F_N], *name, *ver, *arch;
	struct pkgctx pc = { .c = c, .file = d->file, .line = d->stanza_line,
			     .limit_err = d->limit_err };
	Id p;

	get_fields(d, f);
	name = f[F_PACKAGE];
	ver = f[F_VERSION];
	arch = f[F_ARCH];

	if (!name || !ver || !arch || !valid_token(name) || !valid_token(ver) || !valid_token(arch)) {
		log_error("%s:%lu: stanza lacks a valid Package, Version or Architecture", d->file,
			  d->stanza_line);
		return -MKI_E_PARSE;
	}
	if (!strcmp(arch, "all") ? !take_all : !strv_contains(&c->archs, arch))
		return 0;
	if (file_arch && strcmp(arch, "all") && strcmp(arch, file_arch))
		return 0; /* an arch's index lists only that arch and all */
	p = repo_add_solvable(repo);
	pc.s = pool_id2solvable(c->pool, p);
	pc.s->name = pool_str2id(c->pool, name, 1);
	pc.s->evr = pool_str2id(c->pool, ver, 1);
	pc.s->arch = pool_str2id(c->pool, arch, 1);
	pc.ea = strcmp(arch, "all") ? arch : c->archs.v[0];
	pc.ma = parse_ma(f[F_MA]);
	if (!strcmp(arch, "all") && pc.ma == MA_SAME)
		pc.ma = MA_NO; /* dpkg refuses M-A same for all; treat it as plain */
	set_ref(c, p, file, d, pc.ma, f[F_ESS], f[F_PRIO]);
	return add_relations(&pc, f);
}

/* ---- loading ----------------------------------------------------------------------------- */

static uint32_t add_file(struct ctx *c, const char *path, const struct index_release *rel)
{
	ALLOC_GROW(c->files, c->n_files + 1, c->alloc_files);
	memset(&c->files[c->n_files], 0, sizeof(c->files[0]));
	c->files[c->n_files].path = xstrdup(path);
	c->files[c->n_files].rel = rel;
	return (uint32_t)c->n_files++;
}

/* Architecture: all is read once per (release, component): from its "all" index when there is
 * one, else from the primary arch's index (or the first arch's if the primary is absent). */
static int takes_all(const struct indexes *ix, size_t i, const char *primary)
{
	const struct index_file *f = &ix->files[i], *g;
	size_t j, first = (size_t)-1, prim = (size_t)-1;

	for (j = 0; j < ix->n_files; j++) {
		g = &ix->files[j];
		if (g->release != f->release || strcmp(g->component, f->component) ||
		    g->native_tools)
			continue;
		if (!strcmp(g->arch, "all"))
			return j == i;
		if (first == (size_t)-1)
			first = j;
		if (!strcmp(g->arch, primary) && prim == (size_t)-1)
			prim = j;
	}
	return i == (prim != (size_t)-1 ? prim : first);
}

static int load_index(struct ctx *c, size_t i)
{
	const struct index_file *f = &c->ix->files[i];
	struct deb822 d;
	uint32_t fi = add_file(c, f->path, &c->ix->releases[f->release]);
	Repo *repo;
	int ret, all = takes_all(c->ix, i, c->archs.v[0]);

	if ((ret = deb822_open(&d, f->path))) {
		log_error("cannot read index '%s': %s", f->path, strerror(-ret));
		return ret;
	}
	deb822_set_limits(&d, c->lim, -MKI_E_LIMIT_REPO);
	if (f->url)
		deb822_set_name(&d, f->url);
	repo = repo_create(c->pool, f->path);
	while ((ret = deb822_next(&d)) > 0)
		if ((ret = add_stanza(c, repo, fi, &d, f->arch, all)))
			break;
	deb822_close(&d);
	repo_internalize(repo);
	return ret;
}

static int load_local(struct ctx *c, const char *path)
{
	struct deb822 d;
	uint32_t fi = add_file(c, path, NULL);
	struct srcfile *sf = &c->files[fi];
	int ret;
	Id first = c->pool->nsolvables;

	if ((ret = debcontrol_read(path, &sf->text, &sf->text_len)))
		return ret;
	if ((ret = deb822_open_mem(&d, path, sf->text, sf->text_len)))
		return ret;
	deb822_set_limits(&d, c->lim, -MKI_E_LIMIT_PKG);
	if (!c->local_repo)
		c->local_repo = repo_create(c->pool, "local");
	ret = deb822_next(&d);
	if (ret == 0) {
		log_error("'%s': empty control file", path);
		ret = -MKI_E_PACKAGE;
	} else if (ret > 0) {
		ret = add_stanza(c, c->local_repo, fi, &d, NULL, 1);
	}
	if (!ret && c->pool->nsolvables == first) {
		log_error("local package '%s' is for architecture '%s', which is not one of the "
			  "recipe's", path, deb822_get(&d, "Architecture"));
		ret = -MKI_E_RESOLVE;
	}
	deb822_close(&d);
	return ret;
}

static int load_all(struct ctx *c)
{
	size_t i;
	int ret;

	for (i = 0; i < c->ix->n_files; i++)
		if (strv_contains(&c->archs, c->ix->files[i].arch) ||
		    !strcmp(c->ix->files[i].arch, "all"))
			if ((ret = load_index(c, i)))
				return ret;
	for (i = 0; i < c->r->local_debs.n; i++)
		if ((ret = load_local(c, c->r->local_debs.v[i])))
			return ret;
	if (c->local_repo)
		repo_internalize(c->local_repo);
	return 0;
}

static Pool *pool_new(struct ctx *c)
{
	Pool *pool = pool_create();
	struct buf policy = { 0 };
	size_t i;

	pool_setdisttype(pool, DISTTYPE_DEB);
	/* ":" keeps the primary arch preferred over the others instead of equal */
	for (i = 0; i < c->archs.n; i++)
		buf_addf(&policy, "%s%s", i ? ":" : "", c->archs.v[i]);
	pool_setarchpolicy(pool, policy.p);
	buf_release(&policy);
	return pool;
}

/* ---- candidates -------------------------------------------------------------------------- */

static int cand_cmp(const void *a, const void *b, void *arg)
{
	Pool *pool = arg;
	Id pa = *(const Id *)a, pb = *(const Id *)b;
	Solvable *x = pool_id2solvable(pool, pa), *y = pool_id2solvable(pool, pb);
	int r;

	if (x->name != y->name)
		return strcmp(pool_id2str(pool, x->name), pool_id2str(pool, y->name));
	if (x->arch != y->arch)
		return strcmp(pool_id2str(pool, x->arch), pool_id2str(pool, y->arch));
	r = pool_evrcmp(pool, y->evr, x->evr, EVRCMP_COMPARE);
	return r ? r : (pa > pb) - (pa < pb);
}

/* The pin the recipe puts on (name, arch of `s`), or NULL. */
static const struct recipe_package *pin_for(const struct ctx *c, const Solvable *s)
{
	const char *name = pool_id2str(c->pool, s->name), *arch = pool_id2str(c->pool, s->arch);
	size_t i;

	for (i = 0; i < c->r->n_packages; i++) {
		const struct recipe_package *rp = &c->r->packages[i];

		if (!rp->version || strcmp(rp->name, name))
			continue;
		if (!strcmp(arch, "all") || !strcmp(arch, rp->arch ? rp->arch : c->archs.v[0]))
			return rp;
	}
	return NULL;
}

static const struct lock_pkg *locked_for(const struct ctx *c, const Solvable *s)
{
	const char *name = pool_id2str(c->pool, s->name), *arch = pool_id2str(c->pool, s->arch);
	size_t i;

	for (i = 0; i < c->lock.n_pkgs; i++)
		if (!strcmp(c->lock.pkgs[i].name, name) && !strcmp(c->lock.pkgs[i].arch, arch))
			return &c->lock.pkgs[i];
	return NULL;
}

static int is_local(const struct ctx *c, Id p)
{
	return c->files[c->refs[p].file].rel == NULL;
}

/* Choose the considered solvables of one (name, arch) group ids[0..n), newest first. */
static int choose_group(struct ctx *c, const Id *ids, size_t n)
{
	Pool *pool = c->pool;
	Solvable *s = pool_id2solvable(pool, ids[0]);
	const struct recipe_package *pin = c->locked ? NULL : pin_for(c, s);
	const struct lock_pkg *lp = c->locked ? locked_for(c, s) : NULL;
	const char *want = pin ? pin->version : lp ? lp->version : NULL;
	size_t i;
	int any_local = 0;

	c->best[ids[0]] = 1;
	for (i = 0; i < n; i++)
		any_local |= is_local(c, ids[i]);
	if (c->locked && !lp)
		return 0;
	for (i = 0; i < n; i++) {
		s = pool_id2solvable(pool, ids[i]);
		if (i && s->evr == pool_id2solvable(pool, ids[i - 1])->evr)
			continue; /* the same version from another source: keep the first */
		if (any_local && !is_local(c, ids[i]))
			continue; /* the user's own .deb wins */
		if (want ? !pool_evrcmp_str(pool, pool_id2str(pool, s->evr), want, EVRCMP_COMPARE)
			 : (i == 0 || any_local || c->r->allow_older)) {
			MAPSET(&c->considered, ids[i]);
			if (want || (!c->r->allow_older && !any_local))
				return 0;
		}
	}
	if (!want)
		return 0;
	return 1; /* pinned version missing: reported by check_pins */
}

static void list_versions(const struct ctx *c, const char *name, const char *arch, struct buf *b)
{
	Pool *pool = c->pool;
	Id nid = pool_str2id(c->pool, name, 0), p;
	Solvable *s;

	FOR_POOL_SOLVABLES(p) {
		s = pool_id2solvable(c->pool, p);
		if (s->name != nid || !c->refs[p].valid)
			continue;
		if (strcmp(pool_id2str(c->pool, s->arch), arch) &&
		    strcmp(pool_id2str(c->pool, s->arch), "all"))
			continue;
		buf_addf(b, "%s%s", b->len ? ", " : "", pool_id2str(c->pool, s->evr));
	}
}

static int check_pins(struct ctx *c)
{
	Pool *pool = c->pool;
	size_t i, j;
	int ret = 0;

	for (i = 0; i < c->r->n_packages; i++) {
		const struct recipe_package *a = &c->r->packages[i];
		const char *arch = a->arch ? a->arch : c->archs.v[0];
		struct buf b = { 0 };
		Id nid, p;
		int found = 0;

		if (!a->version)
			continue;
		for (j = 0; j < i; j++) {
			const struct recipe_package *o = &c->r->packages[j];

			if (o->version && !strcmp(o->name, a->name) &&
			    !strcmp(o->arch ? o->arch : c->archs.v[0], arch) &&
			    strcmp(o->version, a->version)) {
				log_error("conflicting pins: '%s=%s' (line %d) and '%s=%s' (line %d)",
					  o->name, o->version, o->line, a->name, a->version, a->line);
				ret = -MKI_E_RESOLVE;
			}
		}
		nid = pool_str2id(c->pool, a->name, 0);
		FOR_POOL_SOLVABLES(p) {
			Solvable *s = pool_id2solvable(pool, p);

			if (nid && s->name == nid && MAPTST(&c->considered, p) &&
			    (s->arch == ARCH_ALL || !strcmp(pool_id2str(pool, s->arch), arch)))
				found = 1;
		}
		if (found || !nid || !strv_contains(&c->archs, arch))
			continue; /* unknown names and archs are reported with the request */
		list_versions(c, a->name, arch, &b);
		log_error("version '%s' of '%s' is not available for %s (available: %s)", a->version,
			  a->name, arch, b.len ? b.p : "none");
		buf_release(&b);
		ret = -MKI_E_RESOLVE;
	}
	return ret;
}

static int choose_candidates(struct ctx *c)
{
	Pool *pool = c->pool;
	Queue q;
	Id p;
	size_t i, start;

	queue_init(&q);
	FOR_POOL_SOLVABLES(p)
		if ((size_t)p < c->alloc_refs && c->refs[p].valid)
			queue_push(&q, p);
	solv_sort(q.elements, (size_t)q.count, sizeof(Id), cand_cmp, pool);
	map_init(&c->considered, pool->nsolvables);
	MAPSET(&c->considered, SYSTEMSOLVABLE);
	c->best = xcalloc((size_t)pool->nsolvables, sizeof(*c->best));
	for (start = 0; start < (size_t)q.count; start = i) {
		Solvable *s = pool_id2solvable(pool, q.elements[start]), *t;

		for (i = start + 1; i < (size_t)q.count; i++) {
			t = pool_id2solvable(pool, q.elements[i]);
			if (t->name != s->name || t->arch != s->arch)
				break;
		}
		choose_group(c, q.elements + start, i - start);
	}
	queue_free(&q);
	pool->considered = &c->considered;
	return c->locked ? 0 : check_pins(c);
}

/* ---- the request ------------------------------------------------------------------------- */

static void add_job(struct ctx *c, Id how, Id what, const char *desc)
{
	queue_push2(&c->jobs, how, what);
	strv_push(&c->job_what, desc);
}

static const char *closest_name(const struct ctx *c, const char *name)
{
	Pool *pool = c->pool;
	const char *best = NULL, *n;
	unsigned d, best_d = 3;
	Id p;

	FOR_POOL_SOLVABLES(p) {
		n = pool_id2str(c->pool, pool_id2solvable(c->pool, p)->name);
		if (labs((long)strlen(n) - (long)strlen(name)) > 2)
			continue;
		d = str_distance(n, name);
		if (d < best_d) {
			best_d = d;
			best = n;
		}
	}
	return best;
}

/* Considered solvables named `nid` for `arch` (or all) into q; *elsewhere names another arch. */
static void find_named(const struct ctx *c, Id nid, Id arch, Queue *q, const char **elsewhere)
{
	Pool *pool = c->pool;
	Id p, pp;
	Solvable *s;

	*elsewhere = NULL;
	FOR_PROVIDES(p, pp, nid) {
		s = pool_id2solvable(c->pool, p);
		if (s->name != nid || !MAPTST(&c->considered, p))
			continue;
		if (s->arch == arch || s->arch == ARCH_ALL)
			queue_pushunique(q, p);
		else
			*elsewhere = pool_id2str(c->pool, s->arch);
	}
}

static int unknown_package(const struct ctx *c, const struct recipe_package *rp)
{
	const char *near = closest_name(c, rp->name);

	if (near)
		log_error("unknown package '%s' (recipe line %d): no index lists it (did you mean "
			  "'%s'?)", rp->name, rp->line, near);
	else
		log_error("unknown package '%s' (recipe line %d): no index lists it; check the name "
			  "and the recipe's sources and components", rp->name, rp->line);
	return -MKI_E_RESOLVE;
}

static int str_cmp(const void *a, const void *b, void *arg)
{
	(void)arg;
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A requested name no package has, only Provides: as apt, take its provider when there is one,
 * refuse to guess among several (`apt-get install awk`: "you should explicitly select one").
 */
static int virtual_request(struct ctx *c, const struct recipe_package *rp, Id virt, const char *desc)
{
	Pool *pool = c->pool;
	struct strv names = { 0 };
	char *list;
	Id p, pp;

	FOR_PROVIDES(p, pp, virt) {
		const char *n = pool_id2str(c->pool, pool_id2solvable(c->pool, p)->name);

		if (MAPTST(&c->considered, p) && !strv_contains(&c->r->excludes, n) &&
		    !strv_contains(&names, n))
			strv_push(&names, n);
	}
	if (names.n <= 1) {
		strv_release(&names);
		add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE_PROVIDES, virt, desc);
		return 0;
	}
	solv_sort(names.v, names.n, sizeof(*names.v), str_cmp, NULL);
	list = strv_join(&names, ", ");
	log_error("'%s' (recipe line %d) is a virtual package provided by %zu packages: write one "
		  "of: %s", rp->name, rp->line, names.n, list);
	free(list);
	strv_release(&names);
	return -MKI_E_RESOLVE;
}

static int request_one(struct ctx *c, const struct recipe_package *rp)
{
	const char *arch = rp->arch ? rp->arch : c->archs.v[0], *elsewhere = NULL;
	Id nid = pool_str2id(c->pool, rp->name, 0), virt, aid;
	char *desc;
	int added = 1;
	Queue q;

	if (!strv_contains(&c->archs, arch)) {
		char *all = strv_join(&c->archs, ", ");

		log_error("unknown architecture '%s' in '%s:%s' (recipe line %d): the recipe's "
			  "architectures are %s", arch, rp->name, arch, rp->line, all);
		free(all);
		return -MKI_E_RESOLVE;
	}
	if (strv_contains(&c->r->excludes, rp->name)) {
		log_error("'%s' is both requested (recipe line %d) and excluded", rp->name, rp->line);
		return -MKI_E_RESOLVE;
	}
	desc = xasprintf("%s%s%s%s%s", rp->name, rp->arch ? ":" : "", rp->arch ? rp->arch : "",
			 rp->version ? "=" : "", rp->version ? rp->version : "");
	queue_init(&q);
	/* intern first: new strings may move the pool's string space under `elsewhere` */
	virt = name_arch_id(c->pool, rp->name, strlen(rp->name), arch);
	aid = pool_str2id(c->pool, arch, 1);
	if (nid)
		find_named(c, nid, aid, &q, &elsewhere);
	if (q.count)
		add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE_ONE_OF, pool_queuetowhatprovides(c->pool, &q),
			desc);
	else if (!rp->version && c->pool->whatprovidesdata[pool_whatprovides(c->pool, virt)])
		added = virtual_request(c, rp, virt, desc) ? -1 : 1;
	else
		added = 0;
	queue_free(&q);
	free(desc);
	if (added)
		return added < 0 ? -MKI_E_RESOLVE : 0;
	if (nid && elsewhere) {
		log_error("'%s' is not available for %s (recipe line %d), only for other architectures "
			  "such as %s: write '%s:%s'", rp->name, arch, rp->line, elsewhere, rp->name,
			  elsewhere);
		return -MKI_E_RESOLVE;
	}
	return unknown_package(c, rp);
}

static const char *const base_names[] = { "none", "essential", "required", "important" };

static int in_base(const struct ctx *c, Id p)
{
	const struct pkgref *ref = &c->refs[p];
	Solvable *s = pool_id2solvable(c->pool, p);
	int want = c->r->base;

	if (s->arch != ARCH_ALL && s->arch != pool_str2id(c->pool, c->archs.v[0], 0))
		return 0;
	if (strv_contains(&c->r->excludes, pool_id2str(c->pool, s->name)))
		return 0;
	return (ref->flags & F_ESSENTIAL) || (want >= BASE_REQUIRED && (ref->flags & F_REQUIRED)) ||
	       (want >= BASE_IMPORTANT && (ref->flags & F_IMPORTANT));
}

/* Base set, requests, local .debs, excludes; then the multiarch and preference jobs. */
static int build_jobs(struct ctx *c)
{
	Pool *pool = c->pool;
	Queue same;
	Id p, nid;
	size_t i;
	int ret = 0, r;

	FOR_POOL_SOLVABLES(p)
		if (c->r->base != BASE_NONE && MAPTST(&c->considered, p) && c->best[p] &&
		    in_base(c, p)) {
			char *d = xasprintf("%s (base set '%s')",
					    pool_id2str(c->pool, pool_id2solvable(c->pool, p)->name),
					    base_names[c->r->base]);
			add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE, p, d);
			free(d);
		}
	for (i = 0; i < c->r->n_packages; i++)
		if ((r = request_one(c, &c->r->packages[i])))
			ret = r;
	FOR_POOL_SOLVABLES(p)
		if (MAPTST(&c->considered, p) && is_local(c, p))
			add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE, p, c->files[c->refs[p].file].path);
	for (i = 0; i < c->r->excludes.n; i++) {
		if (!(nid = pool_str2id(c->pool, c->r->excludes.v[i], 0))) {
			log_warn("excluded package '%s' is not in any index", c->r->excludes.v[i]);
			continue;
		}
		add_job(c, SOLVER_LOCK | SOLVER_SOLVABLE_NAME, nid, c->r->excludes.v[i]);
	}
	queue_init(&same);
	FOR_POOL_SOLVABLES(p)
		if (MAPTST(&c->considered, p) && c->refs[p].ma == MA_SAME)
			queue_push(&same, p);
	if (same.count)
		add_job(c, SOLVER_MULTIVERSION | SOLVER_SOLVABLE_ONE_OF,
			pool_queuetowhatprovides(c->pool, &same), "Multi-Arch: same");
	queue_free(&same);
	return ret;
}

/* --locked: exactly the lock's packages. */
static int build_locked_jobs(struct ctx *c)
{
	Pool *pool = c->pool;
	Queue same;
	Id p;
	size_t i, n = 0;
	int ret = 0;

	queue_init(&same);
	FOR_POOL_SOLVABLES(p)
		if (p != SYSTEMSOLVABLE && MAPTST(&c->considered, p)) {
			add_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE, p, "the lock file");
			if (c->refs[p].ma == MA_SAME)
				queue_push(&same, p);
			n++;
		}
	if (same.count)
		add_job(c, SOLVER_MULTIVERSION | SOLVER_SOLVABLE_ONE_OF,
			pool_queuetowhatprovides(c->pool, &same), "Multi-Arch: same");
	queue_free(&same);
	for (i = 0; i < c->lock.n_pkgs && n != c->lock.n_pkgs; i++) {
		const struct lock_pkg *lp = &c->lock.pkgs[i];
		Id nid = pool_str2id(c->pool, lp->name, 0), found = 0;

		FOR_POOL_SOLVABLES(p) {
			Solvable *s = pool_id2solvable(c->pool, p);

			if (nid && s->name == nid && MAPTST(&c->considered, p) &&
			    !strcmp(pool_id2str(c->pool, s->arch), lp->arch))
				found = 1;
		}
		if (!found) {
			log_error("the lock names '%s:%s=%s', which no index lists any more", lp->name,
				  lp->arch, lp->version);
			ret = -MKI_E_LOCK;
		}
	}
	return ret;
}

/* ---- problems, in the user's names ------------------------------------------------------- */

static void fmt_solvable(const struct ctx *c, Id p, struct buf *b)
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
static void fmt_dep(const struct ctx *c, Id dep, const char *ea, struct buf *b, int depth)
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

static const char *ea_of(const struct ctx *c, Id p)
{
	Solvable *s = pool_id2solvable(c->pool, p);

	return s->arch == ARCH_ALL ? c->archs.v[0] : pool_id2str(c->pool, s->arch);
}

static int is_same_lock(const struct ctx *c, Id dep)
{
	const char *n;

	while (ISRELDEP(dep))
		dep = GETRELDEP(c->pool, dep)->name;
	n = pool_id2str(c->pool, dep);
	return str_ends_with(n, ":#same");
}

/* For a versioned relation nothing satisfies: the candidates the name does have, if any. */
static void fmt_existing(const struct ctx *c, Id dep, struct buf *b)
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

static void fmt_rule(const struct ctx *c, Solver *solv, Id rid, struct buf *b)
{
	Id src = 0, tgt = 0, dep = 0, what = 0, how;
	SolverRuleinfo type = solver_ruleinfo(solv, rid, &src, &tgt, &dep);
	int job;

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
	if ((type & SOLVER_RULE_TYPEMASK) == SOLVER_RULE_JOB) {
		job = solver_rule2jobidx(solv, rid);
		how = solver_rule2job(solv, rid, &what);
		if (job >= 0 && (size_t)job / 2 < c->job_what.n)
			buf_addf(b, "%s '%s'",
				 (how & SOLVER_JOBMASK) == SOLVER_LOCK
					 ? "the recipe excludes"
					 : "the recipe asks for",
				 c->job_what.v[job / 2]);
		else
			buf_adds(b, "a request of the recipe");
		return;
	}
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

static void report_problems(const struct ctx *c, Solver *solv)
{
	Id problem, n = solver_problem_count(solv);
	Queue rules;
	int i;

	queue_init(&rules);
	log_error("no installable package set satisfies the recipe (%d problem%s):", n,
		  n == 1 ? "" : "s");
	for (problem = 1; problem <= n; problem++) {
		struct strv lines = { 0 };

		solver_findallproblemrules(solv, problem, &rules);
		for (i = 0; i < rules.count; i++) {
			struct buf b = { 0 };

			fmt_rule(c, solv, rules.elements[i], &b);
			if (!strv_contains(&lines, b.p))
				strv_push(&lines, b.p);
			buf_release(&b);
		}
		log_grouped(problem, &lines);
		strv_release(&lines);
	}
	queue_free(&rules);
}

/* ---- the plan ---------------------------------------------------------------------------- */

static char *field_dup(const struct deb822 *d, const char *name)
{
	const char *v = deb822_get(d, name);

	return v ? xstrdup(v) : NULL;
}

static void fill_source(struct plan_entry *e, const char *src)
{
	const char *sp, *open, *close;

	if (!src || !*src) {
		e->source = xstrdup(e->name);
		e->source_version = xstrdup(e->version);
		return;
	}
	sp = strchr(src, ' ');
	e->source = sp ? xstrndup(src, (size_t)(sp - src)) : xstrdup(src);
	open = strchr(src, '(');
	close = open ? strchr(open, ')') : NULL;
	e->source_version = close ? xstrndup(open + 1, (size_t)(close - open - 1))
				  : xstrdup(e->version);
}

static int fill_remote(const struct srcfile *sf, const struct deb822 *d, struct plan_entry *e)
{
	const char *fn = deb822_get(d, "Filename"), *sha = deb822_get(d, "SHA256");
	const char *size = deb822_get(d, "Size");
	char *end;

	if (!fn || !sha || !size || !sha256_hex_valid(sha) || strstr(fn, "..") || fn[0] == '/') {
		log_error("%s:%lu: '%s' lacks a valid Filename, Size or SHA256 field", d->file,
			  d->stanza_line, e->name);
		return -MKI_E_PARSE;
	}
	errno = 0;
	e->size = strtoull(size, &end, 10);
	if (errno || *end || end == size) {
		log_error("%s:%lu: '%s' has an invalid Size '%s'", d->file, d->stanza_line, e->name,
			  size);
		return -MKI_E_PARSE;
	}
	memcpy(e->sha256, sha, 65);
	/* Filename is a path; "1%3a2.0" in it must reach the server as written (apt quotes too). */
	e->url = url_join(sf->rel->src->uri, fn);
	return 0;
}

static int fill_local(const struct srcfile *sf, struct plan_entry *e)
{
	struct stat st;
	int ret;

	if (stat(sf->path, &st)) {
		log_error("cannot read local package '%s': %s", sf->path, strerror(errno));
		return -errno;
	}
	if ((ret = hash_file_hex(sf->path, HASH_SHA256, e->sha256))) {
		log_error("cannot read local package '%s': %s", sf->path, strerror(-ret));
		return ret;
	}
	e->size = (uint64_t)st.st_size;
	e->path = xstrdup(sf->path);
	return 0;
}

static int fill_entry(const struct srcfile *sf, const struct deb822 *d, struct plan_entry *e)
{
	const char *ess = deb822_get(d, "Essential"), *ma = deb822_get(d, "Multi-Arch");

	e->name = field_dup(d, "Package");
	e->arch = field_dup(d, "Architecture");
	e->version = field_dup(d, "Version");
	e->multi_arch = xstrdup(ma && (!strcmp(ma, "same") || !strcmp(ma, "foreign") ||
				       !strcmp(ma, "allowed")) ? ma : "no");
	e->essential = ess && !strcasecmp(ess, "yes");
	e->priority = field_dup(d, "Priority");
	e->section = field_dup(d, "Section");
	e->maintainer = field_dup(d, "Maintainer");
	e->installed_size = field_dup(d, "Installed-Size");
	fill_source(e, deb822_get(d, "Source"));
	return sf->rel ? fill_remote(sf, d, e) : fill_local(sf, e);
}

/* Read the stanza of solvable p again (the index is verified and does not change). */
static int read_entry(struct ctx *c, Id p, struct plan_entry *e)
{
	const struct pkgref *ref = &c->refs[p];
	const struct srcfile *sf = &c->files[ref->file];
	struct deb822 d;
	int ret;

	ret = sf->rel ? deb822_open(&d, sf->path) : deb822_open_mem(&d, sf->path, sf->text,
								     sf->text_len);
	if (ret) {
		log_error("cannot read index '%s' again: %s", sf->path, strerror(-ret));
		return ret;
	}
	deb822_set_limits(&d, c->lim, sf->rel ? -MKI_E_LIMIT_REPO : -MKI_E_LIMIT_PKG);
	ret = deb822_seek(&d, ref->offset, ref->line);
	if (!ret && (ret = deb822_next(&d)) == 0)
		ret = -MKI_E_PARSE;
	if (ret > 0)
		ret = fill_entry(sf, &d, e);
	if (ret == -MKI_E_PARSE && !e->name)
		log_error("%s:%u: index changed while it was being read", sf->path, ref->line);
	deb822_close(&d);
	return ret;
}

/* ---- order ------------------------------------------------------------------------------- */

struct node {
	Id p;
	int tier;      /* 0: Essential, Pre-Depends targets and what they need; 1: the rest */
	int placed;
	size_t waits, waits_pre; /* Depends and Pre-Depends not placed yet */
};

static int key_cmp(const struct ctx *c, const struct node *a, const struct node *b)
{
	Solvable *x = pool_id2solvable(c->pool, a->p), *y = pool_id2solvable(c->pool, b->p);
	int r;

	if (a->tier != b->tier)
		return a->tier - b->tier;
	if ((r = strcmp(pool_id2str(c->pool, x->name), pool_id2str(c->pool, y->name))))
		return r;
	return strcmp(pool_id2str(c->pool, x->arch), pool_id2str(c->pool, y->arch));
}

/* Entries' depends (plan indices) from the chosen set, Pre-Depends first; idx: solvable -> i+1. */
static void collect_depends(struct ctx *c, struct plan *pl, const size_t *idx, struct node *nodes)
{
	Pool *pool = c->pool;
	Id p2, pp, *dp;
	size_t i, j, k, alloc;
	int pass, pre;

	for (i = 0; i < pl->n; i++) {
		Solvable *s = pool_id2solvable(pool, nodes[i].p);
		struct plan_entry *e = &pl->v[i];

		if (!s->requires)
			continue;
		alloc = 0;
		for (pass = 1; pass >= 0; pass--) {
			pre = 0;
			for (dp = s->repo->idarraydata + s->requires; *dp; dp++) {
				if (*dp == SOLVABLE_PREREQMARKER) {
					pre = 1;
					continue;
				}
				if (pre != pass)
					continue;
				FOR_PROVIDES(p2, pp, *dp) {
					if (!idx[p2] || idx[p2] - 1 == i)
						continue;
					j = idx[p2] - 1;
					for (k = 0; k < e->n_depends && e->depends[k] != j; k++)
						;
					if (k < e->n_depends)
						continue;
					pl->v[j].pre_depended |= pre;
					ALLOC_GROW(e->depends, e->n_depends + 1, alloc);
					e->depends[e->n_depends++] = j;
				}
			}
			if (pass)
				e->n_pre_depends = e->n_depends;
		}
	}
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
static size_t pick_member(const struct ctx *c, const struct plan *pl, const struct node *nodes,
			  const size_t *comp, size_t k)
{
	size_t i, best = (size_t)-1;

	for (i = 0; i < pl->n; i++) {
		const struct node *a = &nodes[i], *b = best == (size_t)-1 ? NULL : &nodes[best];

		if (a->placed || comp[i] != k)
			continue;
		if (!b || (!!a->waits_pre != !!b->waits_pre ? !a->waits_pre
		    : a->waits + a->waits_pre != b->waits + b->waits_pre
			  ? a->waits + a->waits_pre < b->waits + b->waits_pre
			  : key_cmp(c, a, b) < 0))
			best = i;
	}
	return best;
}

/* The ready component (no unplaced dependency outside it) with the smallest member key. */
static size_t pick_comp(const struct ctx *c, const struct plan *pl, const struct node *nodes,
			const size_t *comp, const size_t *comp_waits)
{
	size_t i, best = (size_t)-1;

	for (i = 0; i < pl->n; i++)
		if (!nodes[i].placed && !comp_waits[comp[i]] &&
		    (best == (size_t)-1 || key_cmp(c, &nodes[i], &nodes[best]) < 0))
			best = i;
	return comp[best];
}

/*
 * Dependencies first: the graph's components in topological order, ties broken by the smallest
 * (tier, name, arch); inside a dependency cycle, Pre-Depends are honoured first.
 */
static size_t *topo_order(const struct ctx *c, const struct plan *pl, struct node *nodes)
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
		size_t cur = pick_comp(c, pl, nodes, comp, comp_waits);

		while ((m = pick_member(c, pl, nodes, comp, cur)) != (size_t)-1) {
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

static int chosen_cmp(const void *a, const void *b, void *arg)
{
	const struct ctx *c = arg;
	Id x = *(const Id *)a, y = *(const Id *)b;
	const struct pkgref *rx = &c->refs[x], *ry = &c->refs[y];

	if (rx->file != ry->file)
		return rx->file < ry->file ? -1 : 1;
	return rx->offset < ry->offset ? -1 : rx->offset > ry->offset;
}

static void report_older(const struct ctx *c, Id p)
{
	Solvable *s = pool_id2solvable(c->pool, p);

	if (c->best[p])
		return;
	log_warn("'%s:%s' %s is not the newest version available (allow_older is set)",
		 pool_id2str(c->pool, s->name), pool_id2str(c->pool, s->arch),
		 pool_id2str(c->pool, s->evr));
}

static int build_plan(struct ctx *c, Solver *solv, struct plan *pl)
{
	Queue all, dq;
	struct node *nodes = NULL;
	size_t *idx = xcalloc((size_t)c->pool->nsolvables, sizeof(*idx)), *order, i;
	int ret = 0;

	queue_init(&all);
	queue_init(&dq);
	solver_get_decisionqueue(solv, &all);
	for (i = 0; i < (size_t)all.count; i++)
		if (all.elements[i] > 0 && all.elements[i] != SYSTEMSOLVABLE)
			queue_push(&dq, all.elements[i]);
	queue_free(&all);
	solv_sort(dq.elements, (size_t)dq.count, sizeof(Id), chosen_cmp, c);
	pl->v = xcalloc((size_t)dq.count + 1, sizeof(*pl->v));
	pl->alloc = (size_t)dq.count + 1;
	nodes = xcalloc((size_t)dq.count + 1, sizeof(*nodes));
	for (i = 0; !ret && i < (size_t)dq.count; i++) {
		nodes[i].p = dq.elements[i];
		idx[dq.elements[i]] = i + 1;
		pl->n = i + 1;
		ret = read_entry(c, dq.elements[i], &pl->v[i]);
		report_older(c, dq.elements[i]);
	}
	if (!ret) {
		collect_depends(c, pl, idx, nodes);
		mark_tiers(pl, nodes);
		order = topo_order(c, pl, nodes);
		apply_order(pl, order);
		free(order);
	}
	queue_free(&dq);
	free(nodes);
	free(idx);
	return ret;
}

/* --locked: the plan must be exactly the lock, byte for byte. */
static int check_lock(const struct ctx *c, const struct plan *pl)
{
	size_t i, j;
	int ret = 0;

	for (i = 0; i < pl->n; i++) {
		const struct plan_entry *e = &pl->v[i];

		for (j = 0; j < c->lock.n_pkgs; j++) {
			const struct lock_pkg *lp = &c->lock.pkgs[j];

			if (strcmp(lp->name, e->name) || strcmp(lp->arch, e->arch))
				continue;
			if (strcmp(lp->sha256, e->sha256) || lp->size != e->size) {
				log_error("'%s:%s=%s' differs from the lock: sha256 %s, locked %s",
					  e->name, e->arch, e->version, e->sha256, lp->sha256);
				ret = -MKI_E_LOCK;
			}
			break;
		}
	}
	if (!ret && pl->n != c->lock.n_pkgs) {
		log_error("the lock lists %zu packages but only %zu can be installed from the indexes",
			  c->lock.n_pkgs, pl->n);
		ret = -MKI_E_LOCK;
	}
	return ret;
}

/* What apt would install for the request (resolve_policy.c), into `chosen`. */
static void apt_choice(const struct ctx *c, Queue *chosen)
{
	Pool *pool = c->pool;
	struct resolve_policy pol = { .pool = pool, .considered = &c->considered,
				      .n_archs = c->archs.n, .recommends = c->r->recommends };
	uint8_t *rank = xcalloc((size_t)pool->nsolvables, 1);
	Id *archs = xcalloc(c->archs.n, sizeof(*archs)), p;
	Map excluded;
	Queue roots;
	size_t i;

	for (i = 0; i < c->archs.n; i++)
		archs[i] = pool_str2id(pool, c->archs.v[i], 1);
	map_init(&excluded, pool->nsolvables);
	FOR_POOL_SOLVABLES(p) {
		uint8_t f = (size_t)p < c->alloc_refs ? c->refs[p].flags : 0;

		rank[p] = f & F_ESSENTIAL ? 0 : f & F_REQUIRED ? 1 : f & F_IMPORTANT ? 2 : 3;
		if (c->r->excludes.n &&
		    strv_contains(&c->r->excludes, pool_id2str(pool, pool_id2solvable(pool, p)->name)))
			MAPSET(&excluded, p);
	}
	pol.rank = rank;
	pol.arch_ids = archs;
	pol.excluded = &excluded;
	queue_init(&roots);
	resolve_policy_roots(&pol, &c->jobs, &roots);
	resolve_policy_walk(&pol, &roots, chosen);
	queue_free(&roots);
	map_free(&excluded);
	free(archs);
	free(rank);
}

static Solver *solver_new(const struct ctx *c)
{
	Solver *solv = solver_create(c->pool);

	solver_set_flag(solv, SOLVER_FLAG_IGNORE_RECOMMENDED, !c->r->recommends || c->locked);
	solver_set_flag(solv, SOLVER_FLAG_NO_INFARCHCHECK, 1);
	return solv;
}

/*
 * libsolv verifies apt's choice (the chosen set installed as jobs of their own). Where that set is
 * not installable - apt's problem resolver would then give up or remove things - libsolv searches
 * itself, still steered towards apt's choices, and finds a valid set if there is one (README:
 * "How packages are chosen"). Returns the solver that succeeded, or the failed one.
 */
static Solver *solve_as_apt(const struct ctx *c, int *failed)
{
	Queue chosen, jobs;
	Solver *solv = NULL;
	int pass, i;

	queue_init(&chosen);
	if (!c->locked)
		apt_choice(c, &chosen);
	for (pass = chosen.count ? 0 : 1; pass < 2; pass++) {
		queue_init_clone(&jobs, &c->jobs);
		for (i = 0; i < chosen.count; i++)
			queue_push2(&jobs, (pass ? SOLVER_FAVOR : SOLVER_INSTALL) | SOLVER_SOLVABLE,
				    chosen.elements[i]);
		if (solv)
			solver_free(solv);
		solv = solver_new(c);
		*failed = solver_solve(solv, &jobs) != 0;
		queue_free(&jobs);
		if (!*failed)
			break;
		if (!pass)
			log_debug("resolve: apt's choice (%d packages) is not installable; searching",
				  chosen.count);
	}
	queue_free(&chosen);
	return solv;
}

static int solve(struct ctx *c, struct plan *out)
{
	int failed, ret;
	Solver *solv = solve_as_apt(c, &failed);

	if (failed) {
		report_problems(c, solv);
		ret = -MKI_E_RESOLVE;
	} else {
		ret = build_plan(c, solv, out);
	}
	solver_free(solv);
	if (!ret && c->locked)
		ret = check_lock(c, out);
	return ret;
}

static int open_lock(struct ctx *c, const struct settings *st)
{
	int ret;

	if ((ret = lockfile_read(&c->lock, st->lock_file)))
		return ret == -MKI_E_LOCK ? ret : -MKI_E_LOCK;
	if (strcmp(c->lock.recipe, c->r->digest)) {
		log_error("the recipe changed since '%s' was written (digest %.12s, lock %.12s): "
			  "run 'mkimage --lock' again", st->lock_file, c->r->digest, c->lock.recipe);
		return -MKI_E_LOCK;
	}
	c->locked = 1;
	return 0;
}

static int check_archs(const struct ctx *c)
{
	size_t i;

	for (i = 0; i < c->archs.n; i++)
		if (!arch_find(c->archs.v[i])) {
			log_error("unknown architecture '%s' in the recipe", c->archs.v[i]);
			return -MKI_E_RESOLVE;
		}
	return 0;
}

static void ctx_release(struct ctx *c)
{
	size_t i;

	if (c->pool) {
		c->pool->considered = NULL;
		pool_free(c->pool);
	}
	map_free(&c->considered);
	queue_free(&c->jobs);
	strv_release(&c->job_what);
	strv_release(&c->archs);
	for (i = 0; i < c->n_files; i++) {
		free(c->files[i].path);
		free(c->files[i].text);
	}
	free(c->files);
	free(c->refs);
	free(c->best);
	lockfile_release(&c->lock);
}

int resolve_plan(struct plan *out, const struct recipe *r, const struct indexes *ix,
		 const struct settings *st)
{
	struct ctx c = { .r = r, .ix = ix, .lim = st ? &st->limits : NULL };
	double t0 = log_now();
	int ret;

	memset(out, 0, sizeof(*out));
	queue_init(&c.jobs);
	recipe_all_archs(r, &c.archs);
	if ((ret = check_archs(&c)) || (st && st->locked && (ret = open_lock(&c, st))))
		goto out;
	c.pool = pool_new(&c);
	if ((ret = load_all(&c)) || (ret = choose_candidates(&c)))
		goto out;
	pool_createwhatprovides(c.pool);
	ret = c.locked ? build_locked_jobs(&c) : build_jobs(&c);
	if (ret)
		goto out;
	log_debug("resolve: %d packages loaded, %d jobs, %.3f s", c.pool->nsolvables - 2,
		  c.jobs.count / 2, log_now() - t0);
	if ((ret = solve(&c, out)))
		goto out;
	out->primary = xstrdup(c.archs.v[0]);
	for (size_t i = 0; i < c.archs.n; i++)
		strv_push(&out->archs, c.archs.v[i]);
	log_info("resolved %zu packages in %.2f s", out->n, log_now() - t0);
out:
	if (ret)
		plan_release(out);
	ctx_release(&c);
	return ret;
}

/* ---- the lock ---------------------------------------------------------------------------- */

/* What --locked needs to find the sources again: components and the keyring's fingerprints. */
static int lock_source_keys(struct lockfile *lk, const struct indexes *ix)
{
	size_t i, k;
	int ret = 0;

	for (i = 0; i < ix->n_releases && !ret; i++) {
		const struct source *src = ix->releases[i].src;

		for (k = 0; k < src->components.n; k++)
			strv_push(&lk->sources[i].components, src->components.v[k]);
		if (src->keyring)
			ret = keyfpr_list(src->keyring, &lk->sources[i].keys);
	}
	return ret;
}

int resolve_write_lock(const struct plan *p, const struct recipe *r, const struct indexes *ix,
		       const char *file)
{
	struct lockfile lk = { 0 };
	size_t i;
	int ret;

	memcpy(lk.recipe, r->digest, sizeof(lk.recipe));
	for (i = 0; i < p->archs.n; i++)
		strv_push(&lk.archs, p->archs.v[i]);
	lk.sources = xcalloc(ix->n_releases + 1, sizeof(*lk.sources));
	for (i = 0; i < ix->n_releases; i++) {
		const struct index_release *rel = &ix->releases[i];

		lk.sources[i].uri = xstrdup(rel->src->uri);
		lk.sources[i].suite = xstrdup(rel->src->suite);
		lk.sources[i].date = rel->date ? xstrdup(rel->date) : NULL;
		memcpy(lk.sources[i].sha256, rel->inrelease_sha256, 65);
	}
	lk.n_sources = lk.alloc_sources = ix->n_releases;
	ret = lock_source_keys(&lk, ix);
	if (ret) {
		lockfile_release(&lk);
		return ret;
	}
	lk.pkgs = xcalloc(p->n + 1, sizeof(*lk.pkgs));
	for (i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->v[i];

		lk.pkgs[i].name = xstrdup(e->name);
		lk.pkgs[i].arch = xstrdup(e->arch);
		lk.pkgs[i].version = xstrdup(e->version);
		if (e->source && strcmp(e->source, e->name))
			lk.pkgs[i].source = xstrdup(e->source);
		memcpy(lk.pkgs[i].sha256, e->sha256, 65);
		lk.pkgs[i].size = e->size;
		lk.pkgs[i].local = !e->url;
	}
	lk.n_pkgs = lk.alloc_pkgs = p->n;
	ret = lockfile_write(&lk, file);
	lockfile_release(&lk);
	return ret;
}
