/* apt's choices (resolve_policy.c) on a small hand-built pool, names already rewritten the way
 * resolve.c rewrites them (N:arch). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <solv/pool.h>
#include <solv/poolarch.h>
#include <solv/repo.h>

#include "resolve/resolve_policy.h"

struct fix {
	Pool *pool;
	Repo *repo;
	Map considered;
	Id archs[2];
	uint8_t rank[64];
	struct resolve_policy pol;
};

/* "a:armhf|b:armhf" -> REL_OR of the names, left-nested as resolve.c builds it */
static Id dep(Pool *pool, const char *text)
{
	char buf[128], *alt, *save = NULL;
	Id acc = 0, id;

	snprintf(buf, sizeof(buf), "%s", text);
	for (alt = strtok_r(buf, "|", &save); alt; alt = strtok_r(NULL, "|", &save)) {
		id = pool_str2id(pool, alt, 1);
		acc = acc ? pool_rel2id(pool, acc, id, REL_OR, 1) : id;
	}
	return acc;
}

/* name arch: provides name:arch plus `prov` (space-separated N:arch), requires `req` (comma) */
static Id add(struct fix *f, const char *name, const char *arch, const char *prov, const char *req,
	      const char *conf)
{
	Solvable *s = pool_id2solvable(f->pool, repo_add_solvable(f->repo));
	char own[64], buf[128], *t, *save = NULL;

	s->name = pool_str2id(f->pool, name, 1);
	s->arch = pool_str2id(f->pool, arch, 1);
	s->evr = pool_str2id(f->pool, "1.0", 1);
	snprintf(own, sizeof(own), "%s:%s", name, arch);
	s->provides = repo_addid_dep(f->repo, s->provides, pool_str2id(f->pool, own, 1), 0);
	snprintf(buf, sizeof(buf), "%s", prov ? prov : "");
	for (t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		s->provides = repo_addid_dep(f->repo, s->provides, pool_str2id(f->pool, t, 1), 0);
	snprintf(buf, sizeof(buf), "%s", req ? req : "");
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		s->requires = repo_addid_dep(f->repo, s->requires, dep(f->pool, t), 0);
	if (conf)
		s->conflicts = repo_addid_dep(f->repo, s->conflicts, pool_str2id(f->pool, conf, 1), 0);
	return (Id)(s - f->pool->solvables);
}

static void fix_init(struct fix *f)
{
	memset(f, 0, sizeof(*f));
	f->pool = pool_create();
	pool_setdisttype(f->pool, DISTTYPE_DEB);
	pool_setarchpolicy(f->pool, "armhf:armel");
	f->repo = repo_create(f->pool, "test");
	f->archs[0] = pool_str2id(f->pool, "armhf", 1);
	f->archs[1] = pool_str2id(f->pool, "armel", 1);
	memset(f->rank, 3, sizeof(f->rank));
}

/* Walk from `root`; returns the marked set as "name:arch " words. */
static char *walk(struct fix *f, Id root, int recommends)
{
	Queue roots, out;
	static char res[512];
	int i;

	pool_createwhatprovides(f->pool);
	map_init(&f->considered, f->pool->nsolvables);
	map_setall(&f->considered);
	f->pol = (struct resolve_policy){ .pool = f->pool, .considered = &f->considered,
					  .arch_ids = f->archs, .n_archs = 2, .rank = f->rank,
					  .recommends = recommends };
	queue_init(&roots);
	queue_init(&out);
	queue_push(&roots, root);
	resolve_policy_walk(&f->pol, &roots, &out);
	res[0] = 0;
	for (i = 0; i < out.count; i++) {
		Solvable *s = pool_id2solvable(f->pool, out.elements[i]);
		size_t n = strlen(res);

		snprintf(res + n, sizeof(res) - n, "%s:%s ", pool_id2str(f->pool, s->name),
			 pool_id2str(f->pool, s->arch));
	}
	queue_free(&roots);
	queue_free(&out);
	map_free(&f->considered);
	pool_free(f->pool);
	return res;
}

START_TEST(first_alternative_per_relation)
{
	struct fix f;
	Id root;

	fix_init(&f);
	root = add(&f, "fonts", "armhf", NULL, "aa:armhf|zz:armhf", NULL);
	add(&f, "other", "armhf", NULL, "zz:armhf|aa:armhf", NULL);
	add(&f, "zz", "armhf", NULL, NULL, NULL);
	add(&f, "aa", "armhf", NULL, NULL, NULL);
	ck_assert_str_eq(walk(&f, root, 0), "fonts:armhf aa:armhf ");
}
END_TEST

START_TEST(real_package_over_provider)
{
	struct fix f;
	Id root;

	fix_init(&f);
	root = add(&f, "user", "armhf", NULL, "libsys:armhf", NULL);
	add(&f, "aaa-alt", "armhf", "libsys:armhf", NULL, NULL); /* sorts first by name */
	add(&f, "libsys", "armhf", NULL, NULL, NULL);
	ck_assert_str_eq(walk(&f, root, 0), "user:armhf libsys:armhf ");
}
END_TEST

START_TEST(primary_arch_for_foreign)
{
	struct fix f;
	Id root;

	fix_init(&f);
	root = add(&f, "eltool", "armel", NULL, "tool:armel", NULL);
	/* Multi-Arch: foreign: each copy provides tool:X for every arch */
	add(&f, "tool", "armel", "tool:armhf", NULL, NULL);
	add(&f, "tool", "armhf", "tool:armel", NULL, NULL);
	ck_assert_str_eq(walk(&f, root, 0), "eltool:armel tool:armhf ");
}
END_TEST

START_TEST(conflicting_alternative_passed_over)
{
	struct fix f;
	Id root;

	fix_init(&f);
	root = add(&f, "want", "armhf", NULL, "hater:armhf,bad:armhf|good:armhf", NULL);
	add(&f, "hater", "armhf", NULL, NULL, "bad:armhf");
	add(&f, "bad", "armhf", NULL, NULL, NULL);
	add(&f, "good", "armhf", NULL, NULL, NULL);
	ck_assert_str_eq(walk(&f, root, 0), "want:armhf hater:armhf good:armhf ");
}
END_TEST

START_TEST(later_conflicts_unmark)
{
	struct fix f;
	Id root;

	/* apt: b3's own Conflicts unmark h3 (chosen before, not requested); w3 then takes g3 */
	fix_init(&f);
	root = add(&f, "w3", "armhf", NULL, "h3:armhf|g3:armhf,b3:armhf|o3:armhf", NULL);
	add(&f, "h3", "armhf", NULL, NULL, NULL);
	add(&f, "g3", "armhf", NULL, NULL, NULL);
	add(&f, "b3", "armhf", NULL, NULL, "h3:armhf");
	add(&f, "o3", "armhf", NULL, NULL, NULL);
	ck_assert_str_eq(walk(&f, root, 0), "w3:armhf b3:armhf g3:armhf ");
}
END_TEST

START_TEST(failed_solution_discarded)
{
	struct fix f;
	Id root;

	/* bad's hater conflicts with the request: bad is discarded, good taken, and helper (marked
	 * for bad) left out as nothing needs it */
	fix_init(&f);
	root = add(&f, "want", "armhf", NULL, "bad:armhf|good:armhf", NULL);
	add(&f, "bad", "armhf", NULL, "helper:armhf,hater:armhf", NULL);
	add(&f, "helper", "armhf", NULL, NULL, NULL);
	add(&f, "hater", "armhf", NULL, NULL, "want:armhf");
	add(&f, "good", "armhf", NULL, NULL, NULL);
	ck_assert_str_eq(walk(&f, root, 0), "want:armhf good:armhf ");
}
END_TEST

START_TEST(essential_provider_first)
{
	struct fix f;
	Id root, ess;

	fix_init(&f);
	root = add(&f, "user", "armhf", NULL, "awk:armhf", NULL);
	add(&f, "aawk", "armhf", "awk:armhf", NULL, NULL);
	ess = add(&f, "mawk", "armhf", "awk:armhf", NULL, NULL);
	f.rank[ess] = 0;
	ck_assert_str_eq(walk(&f, root, 0), "user:armhf mawk:armhf ");
}
END_TEST

Suite *resolve_policy_suite(void)
{
	Suite *s = suite_create("resolve_policy");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, first_alternative_per_relation);
	tcase_add_test(tc, real_package_over_provider);
	tcase_add_test(tc, primary_arch_for_foreign);
	tcase_add_test(tc, conflicting_alternative_passed_over);
	tcase_add_test(tc, essential_provider_first);
	tcase_add_test(tc, later_conflicts_unmark);
	tcase_add_test(tc, failed_solution_discarded);
	suite_add_tcase(s, tc);
	return s;
}
