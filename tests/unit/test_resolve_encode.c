/*
 * resolve_encode.c: Packages stanzas into libsolv solvables with Debian multiarch rewritten as
 * apt does (see the table at the top of resolve_encode.c), checked relation by relation on tiny
 * indexes written at test time: each case a stanza and the requires, provides and conflicts its
 * solvable must carry.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/log.h"
#include "resolve/resolve_ctx.h"

struct fx {
	char dir[64], uri[32], suite[16], comp[8];
	struct source src;
	struct index_release rel;
	struct index_file files[2];
	struct indexes ix;
	struct recipe r;
	struct resolve_ctx c;
};

static void fx_init(struct fx *f, const char *armhf, const char *armel)
{
	const char *texts[2] = { armhf, armel }, *archs[2] = { "armhf", "armel" };
	size_t i;

	memset(f, 0, sizeof(*f));
	log_set_level(LOG_QUIET);
	snprintf(f->dir, sizeof(f->dir), "/tmp/mki-unit-encode.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->uri, sizeof(f->uri), "http://127.0.0.1/debian");
	snprintf(f->suite, sizeof(f->suite), "bookworm");
	snprintf(f->comp, sizeof(f->comp), "main");
	f->src.uri = f->uri;
	f->src.suite = f->suite;
	f->rel.src = &f->src;
	f->ix.releases = &f->rel;
	f->ix.n_releases = 1;
	f->ix.files = f->files;
	for (i = 0; i < 2; i++) {
		struct index_file *x = &f->files[f->ix.n_files++];
		FILE *out;

		x->component = f->comp;
		x->arch = xstrdup(archs[i]);
		x->path = xasprintf("%s/Packages_%s", f->dir, archs[i]);
		ck_assert_ptr_nonnull(out = fopen(x->path, "w"));
		fputs(texts[i] ? texts[i] : "", out);
		fclose(out);
	}
	f->c.r = &f->r;
	f->c.ix = &f->ix;
	strv_push(&f->c.archs, "armhf");
	strv_push(&f->c.archs, "armel");
	f->c.pool = resolve_pool_new(&f->c);
}

static void fx_release(struct fx *f)
{
	size_t i;

	pool_free(f->c.pool);
	for (i = 0; i < f->c.n_files; i++) {
		free(f->c.files[i].path);
		free(f->c.files[i].text);
	}
	free(f->c.files);
	free(f->c.refs);
	strv_release(&f->c.archs);
	for (i = 0; i < f->ix.n_files; i++) {
		unlink(f->files[i].path);
		free(f->files[i].path);
		free(f->files[i].arch);
	}
	rmdir(f->dir);
}

/* The solvable name:arch, or NULL. */
static Solvable *find(const struct fx *f, const char *name, const char *arch)
{
	Pool *pool = f->c.pool;
	Id p;

	for (p = 2; p < pool->nsolvables; p++) {
		Solvable *s = pool_id2solvable(pool, p);

		if (s->repo && !strcmp(pool_id2str(pool, s->name), name) &&
		    !strcmp(pool_id2str(pool, s->arch), arch))
			return s;
	}
	return NULL;
}

/* The dependencies of `s` at `off`, "; "-separated, markers left out. */
static char *deps(const struct fx *f, const Solvable *s, Offset off)
{
	struct buf b = { 0 };
	Id *ids;

	buf_adds(&b, "");
	if (!off)
		return buf_detach(&b);
	for (ids = s->repo->idarraydata + off; *ids; ids++)
		if (*ids != SOLVABLE_PREREQMARKER)
			buf_addf(&b, "%s%s", b.len ? "; " : "", pool_dep2str(f->c.pool, *ids));
	return buf_detach(&b);
}

#define STANZA(name, arch, extra) \
	"Package: " name "\nVersion: 1.0\nArchitecture: " arch "\n" extra "\n"

static const struct {
	const char *armhf, *armel; /* the two indexes */
	const char *name, *arch;   /* the solvable checked */
	const char *requires, *provides, *conflicts;
} cases[] = {
	/* depends: N -> N:ea; N:any stays; N:native -> N:primary; N:X stays; alternatives OR */
	{ STANZA("a", "armhf", "Depends: b (>= 2), c:any, d:native, e:armel, f | g (<< 3)\n"), NULL,
	  "a", "armhf",
	  "b:armhf >= 2; c:any; d:armhf; e:armel; f:armhf | g:armhf << 3",
	  "a = 1.0; a:armhf = 1.0", "" },
	/* Architecture: all: the effective arch is the primary one */
	{ STANZA("doc", "all", "Pre-Depends: dpkg\nRecommends: x\n"), NULL, "doc", "all",
	  "dpkg:armhf", "doc = 1.0; doc:armhf = 1.0", "" },
	/* M-A foreign provides N:X for every arch; M-A allowed N:any */
	{ STANZA("tool", "armhf", "Multi-Arch: foreign\nProvides: virt (= 2), plain\n"), NULL,
	  "tool", "armhf", "",
	  "tool = 1.0; tool:armhf = 1.0; tool:armel = 1.0; virt = 2; virt:armhf = 2; "
	  "virt:armel = 2; plain; plain:armhf; plain:armel", "" },
	{ STANZA("py", "armhf", "Multi-Arch: allowed\n"), NULL, "py", "armhf", "",
	  "py = 1.0; py:armhf = 1.0; py:any = 1.0", "" },
	/* conflicts: plain name across archs unless an arch is named */
	{ STANZA("k", "armhf", "Conflicts: x, y (<< 2), z:armel\nBreaks: w:any (>= 1)\n"), NULL,
	  "k", "armhf", "", "k = 1.0; k:armhf = 1.0", "x; y << 2; z:armel; w >= 1" },
	/* M-A same: one version for all copies, its own other-arch copies never conflict */
	{ NULL, STANZA("libz", "armel", "Multi-Arch: same\nConflicts: old\n"), "libz", "armel",
	  "", "libz = 1.0; libz:armel = 1.0; libz:#same = 1.0",
	  "libz:#same << 1.0; libz:#same >> 1.0; old - libz:#same" },
	/* an arch's index lists only that arch and all: other stanzas are not read from it */
	{ STANZA("stray", "armel", ""), NULL, "stray", "armel", NULL, NULL, NULL },
};

START_TEST(encodes_as_apt_does)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx f;
		Solvable *s;
		char *got;

		fx_init(&f, cases[i].armhf, cases[i].armel);
		ck_assert_int_eq(resolve_load_all(&f.c), 0);
		s = find(&f, cases[i].name, cases[i].arch);
		if (!cases[i].requires) {
			ck_assert_msg(!s, "case %zu: '%s' loaded", i, cases[i].name);
			fx_release(&f);
			continue;
		}
		ck_assert_msg(s != NULL, "case %zu: '%s' not loaded", i, cases[i].name);
		got = deps(&f, s, s->requires);
		ck_assert_msg(!strcmp(got, cases[i].requires), "case %zu requires: %s", i, got);
		free(got);
		got = deps(&f, s, s->provides);
		ck_assert_msg(!strcmp(got, cases[i].provides), "case %zu provides: %s", i, got);
		free(got);
		got = deps(&f, s, s->conflicts);
		ck_assert_msg(!strcmp(got, cases[i].conflicts), "case %zu conflicts: %s", i, got);
		free(got);
		fx_release(&f);
	}
}
END_TEST

/* Where the stanza is, for reading it again at the end (resolve.c). */
START_TEST(remembers_the_stanza)
{
	struct fx f;
	Solvable *s;
	Id p;

	fx_init(&f, STANZA("a", "armhf", "") STANZA("b", "armhf", "Essential: yes\n"), NULL);
	ck_assert_int_eq(resolve_load_all(&f.c), 0);
	s = find(&f, "b", "armhf");
	ck_assert_ptr_nonnull(s);
	p = pool_solvable2id(f.c.pool, s);
	ck_assert_uint_eq(f.c.refs[p].line, 5);
	ck_assert_int_eq(f.c.refs[p].offset, (off_t)strlen(STANZA("a", "armhf", "")));
	ck_assert_int_eq(f.c.refs[p].flags & F_ESSENTIAL, F_ESSENTIAL);
	fx_release(&f);
}
END_TEST

/* Malformed relations and stanzas: parse errors; too many relations: the repository's limit. */
START_TEST(refusals)
{
	static const struct {
		const char *stanza;
		int ret;
	} t[] = {
		{ STANZA("a", "armhf", "Depends: b (>= )\n"), -MKI_E_PARSE },
		{ STANZA("a", "armhf", "Depends: b |\n"), -MKI_E_PARSE },
		{ STANZA("a", "armhf", "Conflicts: b | c\n"), -MKI_E_PARSE },
		{ STANZA("a", "armhf", "Provides: v (>= 1)\n"), -MKI_E_PARSE },
		{ STANZA("a", "armhf", "Breaks: b [armel\n"), -MKI_E_PARSE },
		{ "Package: a\nArchitecture: armhf\n\n", -MKI_E_PARSE },
		{ "Package: a b\nVersion: 1\nArchitecture: armhf\n\n", -MKI_E_PARSE },
		{ STANZA("a", "armhf", "Depends: b, , c,\n"), 0 }, /* empty groups carry nothing */
	};
	struct buf many = { 0 };
	struct limits l;
	struct fx f;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fx_init(&f, t[i].stanza, NULL);
		ck_assert_msg(resolve_load_all(&f.c) == t[i].ret, "case %zu", i);
		fx_release(&f);
	}
	runlimits_init(&l);
	l.v[LIMIT_RELATIONS] = 3;
	buf_adds(&many, STANZA("a", "armhf", "Depends: b | c | d | e\n"));
	fx_init(&f, many.p, NULL);
	f.c.lim = &l;
	ck_assert_int_eq(resolve_load_all(&f.c), -MKI_E_LIMIT_REPO);
	fx_release(&f);
	buf_release(&many);
}
END_TEST

Suite *resolve_encode_suite(void)
{
	Suite *s = suite_create("resolve_encode");
	TCase *tc = tcase_create("resolve_encode");

	tcase_add_test(tc, encodes_as_apt_does);
	tcase_add_test(tc, remembers_the_stanza);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return s;
}
