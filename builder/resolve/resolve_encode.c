/*
 * Resolve, encoding: Packages stanzas -> libsolv solvables.
 *
 * libsolv 0.7 knows nothing of Debian multiarch, so dependencies are rewritten at load time the
 * way apt does internally. "ea" is a package's effective architecture: its own, or the primary
 * one for Architecture: all.
 *   provides  N = V (plain, only for conflicts), N:ea = V, N:X = V for every arch X if M-A foreign,
 *             N:any = V if M-A allowed, and the same for every Provides entry
 *   depends   N -> N:ea, N:any stays, N:native -> N:primary, N:X stays
 *   conflicts plain N (every arch); for M-A same "dep WITHOUT N:#same" so a package's own
 *             other-arch copies never conflict with it
 *   M-A same  provides N:#same = V and conflicts with N:#same != V: all copies share one version;
 *             a MULTIVERSION job lifts libsolv's one-package-per-name rule for them
 * Packages' text is not kept: each solvable remembers where its stanza is (struct pkgref), and
 * resolve.c reads the chosen ones again at the end.
 */
#include <stdlib.h>
#include <string.h>

#include <solv/poolarch.h>

#include "debian/deb822.h"
#include "debian/debcontrol.h"
#include "debian/relation.h"
#include "lib/err.h"
#include "lib/log.h"
#include "resolve_ctx.h"

/* libsolv's flags for a relation operator. */
static int solv_flags(enum relation_op op)
{
	static const int flags[] = {
		[RELATION_ANY] = 0, [RELATION_LT] = REL_LT, [RELATION_LE] = REL_LT | REL_EQ,
		[RELATION_EQ] = REL_EQ, [RELATION_GE] = REL_GT | REL_EQ, [RELATION_GT] = REL_GT,
	};

	return flags[op];
}

Id resolve_name_arch_id(Pool *pool, const char *n, size_t nlen, const char *arch)
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

static Id with_version(Pool *pool, Id name, const struct relation *r)
{
	if (r->op == RELATION_ANY)
		return name;
	return pool_rel2id(pool, name, pool_strn2id(pool, r->version, (unsigned)r->version_len, 1),
			   solv_flags(r->op), 1);
}

/* The arch a dependency qualifier selects, for positive dependencies. */
static Id dep_name(struct resolve_ctx *c, const struct relation *r, const char *ea)
{
	char q[RELATION_ARCH_MAX];

	if (!r->arch)
		return resolve_name_arch_id(c->pool, r->name, r->name_len, ea);
	snprintf(q, sizeof(q), "%.*s", (int)r->arch_len, r->arch);
	if (!strcmp(q, "native"))
		return resolve_name_arch_id(c->pool, r->name, r->name_len, c->archs.v[0]);
	return resolve_name_arch_id(c->pool, r->name, r->name_len, q);
}

/* Conflicts/Breaks: plain name across archs, unless an arch is named. */
static Id neg_name(struct resolve_ctx *c, const struct relation *r)
{
	if (!r->arch || (r->arch_len == 3 && !memcmp(r->arch, "any", 3)))
		return pool_strn2id(c->pool, r->name, (unsigned)r->name_len, 1);
	return dep_name(c, r, c->archs.v[0]);
}

struct pkgctx {
	struct resolve_ctx *c;
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
	uint64_t max = runlimits_get(pc->c->lim, LIMIT_RELATIONS);

	if (++*n <= max)
		return 0;
	log_error("%s:%lu: the %s of '%s' has more than %llu entries: refused (%s)", pc->file,
		  pc->line, field, pool_id2str(pc->c->pool, pc->s->name), (unsigned long long)max,
		  runlimits_hint(pc->c->lim, LIMIT_RELATIONS).s);
	return pc->limit_err;
}

/*
 * A relation the reader refused. It counts towards the limit first, as every relation read
 * does, so the limit and the parse error are reported in the same order whatever the input.
 */
static int bad_relation(const struct pkgctx *pc, const char *field, const char *v, size_t *n)
{
	int ret = count_relation(pc, field, n);

	return ret ? ret : bad_dep(pc, field, v);
}

/* Depends, Pre-Depends, Recommends: alternatives become REL_OR, in the order written. */
static int add_positive(struct pkgctx *pc, const char *field, const char *v, Offset *deps,
			Id marker)
{
	struct relation_iter it;
	struct relation r;
	Id id, acc = 0;
	size_t n = 0;
	int ret;

	relation_iter_init(&it, v, strlen(v));
	while ((ret = relation_next(&it, &r)) > 0) {
		if (!r.alt && acc) {
			*deps = repo_addid_dep(pc->s->repo, *deps, acc, marker);
			acc = 0;
		}
		if ((ret = count_relation(pc, field, &n)))
			return ret;
		id = with_version(pc->c->pool, dep_name(pc->c, &r, pc->ea), &r);
		acc = acc ? pool_rel2id(pc->c->pool, acc, id, REL_OR, 1) : id;
	}
	if (ret < 0)
		return bad_relation(pc, field, v, &n);
	if (acc)
		*deps = repo_addid_dep(pc->s->repo, *deps, acc, marker);
	return 0;
}

/* Conflicts, Breaks: no alternatives; each entry one conflict. */
static int add_negative(struct pkgctx *pc, const char *field, const char *v)
{
	struct relation_iter it;
	struct relation r;
	size_t n = 0;
	int ret;
	Id id;

	relation_iter_init(&it, v, strlen(v));
	while ((ret = relation_next(&it, &r)) > 0) {
		if (r.alt)
			return bad_dep(pc, field, v);
		if ((ret = count_relation(pc, field, &n)))
			return ret;
		id = with_version(pc->c->pool, neg_name(pc->c, &r), &r);
		if (pc->same_id)
			id = pool_rel2id(pc->c->pool, id, pc->same_id, REL_WITHOUT, 1);
		pc->s->conflicts = repo_addid_dep(pc->s->repo, pc->s->conflicts, id, 0);
	}
	if (ret < 0)
		return r.alt ? bad_dep(pc, field, v) : bad_relation(pc, field, v, &n);
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
	PROV(resolve_name_arch_id(pool, n, nlen, pc->ea));
	if (pc->ma == MA_FOREIGN)
		for (i = 0; i < pc->c->archs.n; i++)
			if (strcmp(pc->c->archs.v[i], pc->ea))
				PROV(resolve_name_arch_id(pool, n, nlen, pc->c->archs.v[i]));
	if (pc->ma == MA_ALLOWED)
		PROV(resolve_name_arch_id(pool, n, nlen, "any"));
#undef PROV
}

static int add_provides(struct pkgctx *pc, const char *v)
{
	struct relation_iter it;
	struct relation r;
	size_t n = 0;
	int ret;

	relation_iter_init(&it, v, strlen(v));
	while ((ret = relation_next(&it, &r)) > 0) {
		if (r.alt)
			return bad_dep(pc, "Provides", v);
		if ((ret = count_relation(pc, "Provides", &n)))
			return ret;
		if (r.op != RELATION_ANY && r.op != RELATION_EQ)
			return bad_dep(pc, "Provides", v);
		provide_name(pc, r.name, r.name_len,
			     r.op ? pool_strn2id(pc->c->pool, r.version, (unsigned)r.version_len, 1)
				  : 0);
	}
	if (ret < 0)
		return r.alt ? bad_dep(pc, "Provides", v) : bad_relation(pc, "Provides", v, &n);
	return 0;
}

static void add_same_lock(struct pkgctx *pc)
{
	Pool *pool = pc->c->pool;
	Solvable *s = pc->s;
	char n[MAX_NAME];

	snprintf(n, sizeof(n), "%s", pool_id2str(pool, s->name));
	pc->same_id = resolve_name_arch_id(pool, n, strlen(n), "#same");
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

static void set_ref(struct resolve_ctx *c, Id p, uint32_t file, const struct deb822 *d, enum ma ma,
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
static int add_stanza(struct resolve_ctx *c, Repo *repo, uint32_t file, const struct deb822 *d,
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

	if (!name || !ver || !arch || !valid_token(name) || !valid_token(ver) || !valid_token(arch))
		return log_errno(-MKI_E_PARSE,
				 "%s:%lu: stanza lacks a valid Package, Version or Architecture",
				 d->file, d->stanza_line);
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

static uint32_t add_file(struct resolve_ctx *c, const char *path, const struct index_release *rel)
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

static int load_index(struct resolve_ctx *c, size_t i)
{
	const struct index_file *f = &c->ix->files[i];
	struct deb822 d;
	uint32_t fi = add_file(c, f->path, &c->ix->releases[f->release]);
	Repo *repo;
	int ret, all = takes_all(c->ix, i, c->archs.v[0]);

	if ((ret = deb822_open(&d, f->path)))
		return log_errno(ret, "cannot read index '%s': %s", f->path, strerror(-ret));
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

static int load_local(struct resolve_ctx *c, const char *path)
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

int resolve_load_all(struct resolve_ctx *c)
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

Pool *resolve_pool_new(const struct resolve_ctx *c)
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
