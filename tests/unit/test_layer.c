/* The layer cache's key (layer.c); the file itself is in test_layerfile*.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/str.h"
#include "store/layer_internal.h"

/* ---- the key ---- */

struct key_case {
	struct plan_entry e[2];
	struct plan p;
	struct recipe r;
	struct settings st;
	struct recipe_hook hook;
	int single_id;
};

static void entry(struct plan_entry *e, const char *name, const char *arch, const char *version,
		  char digit)
{
	e->name = xstrdup(name);
	e->arch = xstrdup(arch);
	e->version = xstrdup(version);
	memset(e->sha256, digit, 64);
	e->sha256[64] = '\0';
}

static void key_case_init(struct key_case *k)
{
	memset(k, 0, sizeof(*k));
	entry(&k->e[0], "libc6", "armhf", "2.36-9", '1');
	k->e[0].multi_arch = xstrdup("same");
	entry(&k->e[1], "hello", "armel", "2.10-3", '2');
	k->p.v = k->e;
	k->p.n = 2;
	strv_push(&k->p.archs, "armhf");
	strv_push(&k->p.archs, "armel");
	k->r.name = xstrdup("board");
	k->r.arch = xstrdup("armhf");
	strv_push(&k->r.aux_archs, "armel");
	k->r.merged_usr = 1;
	k->r.minimize = 1;
	strv_push(&k->r.locales, "en");
	k->st.source_date_epoch = 1700000000;
}

static void key_case_release(struct key_case *k)
{
	for (int i = 0; i < 2; i++) {
		free(k->e[i].name);
		free(k->e[i].arch);
		free(k->e[i].version);
		free(k->e[i].multi_arch);
	}
	free(k->r.name);
	free(k->r.arch);
	free(k->r.hostname);
	strv_release(&k->p.archs);
	strv_release(&k->r.aux_archs);
	strv_release(&k->r.locales);
	strv_release(&k->r.path_exclude);
	strv_release(&k->r.path_include);
}

static void key_of(const struct key_case *k, char *hex)
{
	struct buf b = { 0 };

	layer_key_text(&k->p, NULL, &k->r, &k->st, k->single_id, &b);
	hash_sha256_hex(b.p, b.len, hex);
	buf_release(&b);
}

/* Each change to what unpack or configure reads gives another key. */
static void change(struct key_case *k, int i)
{
	switch (i) {
	case 0: k->e[0].sha256[0] = '3'; break;
	case 1: k->e[1].version[5] = '4'; break;
	case 2: k->p.n = 1; break;
	case 3: strv_push(&k->r.path_exclude, "/usr/share/doc/*"); break;
	case 4: strv_push(&k->r.path_include, "/usr/share/doc/*/copyright"); break;
	case 5: k->r.minimize = 0; break;
	case 6: strv_push(&k->r.locales, "de"); break;
	case 7: k->r.merged_usr = 0; break;
	case 8: k->st.no_native_tools = 1; break;
	case 9: k->st.source_date_epoch = 1700000001; break;
	case 10: k->single_id = 1; break;
	case 11: strv_push(&k->p.archs, "arm64"); break;
	case 12: k->r.arch[4] = 'l'; break;
	}
}

START_TEST(key_covers_what_configures_the_tree)
{
	char base[65], other[65];
	struct key_case k;

	key_case_init(&k);
	key_of(&k, base);
	key_case_release(&k);
	for (int i = 0; i <= 12; i++) {
		key_case_init(&k);
		change(&k, i);
		key_of(&k, other);
		ck_assert_msg(strcmp(base, other), "change %d keeps the key", i);
		key_case_release(&k);
	}
}
END_TEST

START_TEST(key_ignores_what_comes_after_configuration)
{
	char base[65], other[65];
	struct key_case k;

	key_case_init(&k);
	key_of(&k, base);
	k.r.hooks = &k.hook;
	k.r.n_hooks = 1;
	k.r.hostname = xstrdup("other");
	k.r.name[0] = 'B';
	k.r.recommends = 1;
	k.r.image.size = 1 << 30;
	k.r.script_timeout = 5;
	k.st.jobs = 3;
	key_of(&k, other);
	ck_assert_str_eq(base, other);
	key_case_release(&k);
}
END_TEST

Suite *layer_suite(void)
{
	Suite *s = suite_create("layer");
	TCase *tc = tcase_create("layer");

	tcase_add_test(tc, key_covers_what_configures_the_tree);
	tcase_add_test(tc, key_ignores_what_comes_after_configuration);
	suite_add_tcase(s, tc);
	return s;
}
