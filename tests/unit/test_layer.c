/* The layer cache's key (layer.c); the file itself is in test_layerfile*.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "image/format.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/str.h"
#include "recipe/recipe_internal.h"
#include "layer/layer_internal.h"

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
		free(k->e[i].priority);
	}
	free(k->r.name);
	free(k->r.arch);
	free(k->r.hostname);
	strv_release(&k->p.archs);
	strv_release(&k->r.aux_archs);
	strv_release(&k->r.locales);
	strv_release(&k->r.path_exclude);
	strv_release(&k->r.path_include);
	strv_release(&k->st.emulated_tools);
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
	/* the essential set, configured first: the index's Essential and Priority fields */
	case 13: k->e[0].essential = 1; break;
	case 14: k->e[1].priority = xstrdup("required"); break;
	/* the initramfs built once or dpkg's way */
	case 15: k->st.no_initramfs_once = 1; break;
	/* --no-native-tools=PROGRAM: a build compared against the native one never restores it */
	case 16: strv_push(&k->st.emulated_tools, "dracut-install"); break;
	}
}

START_TEST(key_covers_what_configures_the_tree)
{
	char base[65], other[65];
	struct key_case k;

	key_case_init(&k);
	key_of(&k, base);
	key_case_release(&k);
	for (int i = 0; i <= 16; i++) {
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

/*
 * Every key of the recipe's table, changed in turn from a recipe that sets one element of each
 * list: a key marked as changing the configured tree changes the layer key, any other leaves it
 * alone. A key added to the table is covered without a line here; a new type needs a change.
 */
#define TABLE_RECIPE \
	"name = \"board\"; architecture = \"armhf\"; auxiliary_architectures = [ \"arm64\" ];\n" \
	"sources = ( { uri = \"http://127.0.0.1/debian\"; keyring = \"k.gpg\"; } );\n" \
	"packages = { install = [ \"hello\" ]; local = [ \"x.deb\" ]; minimize = true;\n" \
	"  path_exclude = [ \"/usr/share/doc/*\" ]; locales = [ \"en\" ]; };\n" \
	"hooks = ( { script = \"h.sh\"; } );\n" \
	"overlays = ( { source = \"ov\"; destination = \"/\"; } );\n" \
	"image = { devices = ( { path = \"/dev/console\"; type = \"char\"; } ); };\n" \
	"disk = { partitions = ( { name = \"boot\"; type = \"linux\"; contents = \"/boot\"; },\n" \
	"  { name = \"root\"; type = \"root\"; contents = \"root\"; size = \"1G\"; },\n" \
	"  { name = \"root-b\"; type = \"root\"; size = \"1G\"; } ); };\n" \
	"update = { compatible = \"board\"; version = \"1\"; cert = \"k.gpg\"; key = \"k.gpg\";\n" \
	"  keyring = \"k.gpg\"; };\n"

static void table_recipe(struct recipe *r, const char *dir)
{
	static const struct recipe_checks checks = { NULL, format_recipe_check };

	ck_assert_int_eq(recipe_parse_text(r, TABLE_RECIPE, "r.cfg", dir, &checks), 0);
}

static void recipe_key_of(const struct recipe *r, char *hex)
{
	struct plan p = { 0 };
	struct settings st = { 0 };
	struct buf b = { 0 };

	st.source_date_epoch = 1700000000;
	layer_key_text(&p, NULL, r, &st, 0, &b);
	hash_sha256_hex(b.p, b.len, hex);
	buf_release(&b);
}

/* Change the value of `k` in `base`; for a list, empty it and return its length to restore. */
static size_t change_key(const struct recipe_key *k, void *base)
{
	void *v = (char *)base + k->offset;
	struct recipe_package *pkg;
	size_t n;

	switch (k->type) {
	case RECIPE_STRING:
	case RECIPE_PATH:
		free(*(char **)v);
		*(char **)v = xstrdup("changed");
		return 0;
	case RECIPE_BOOL: *(int *)v = !*(int *)v; return 0;
	case RECIPE_ENUM: *(int *)v ^= 1; return 0;
	case RECIPE_UINT:
	case RECIPE_MODE:
	case RECIPE_OWNER: ++*(unsigned *)v; return 0;
	case RECIPE_SIZE: ++*(uint64_t *)v; return 0;
	case RECIPE_DEVTYPE: *(char *)v = *(char *)v == 'c' ? 'b' : 'c'; return 0;
	case RECIPE_STRV:
	case RECIPE_PATHS: strv_push(v, "changed"); return 0;
	case RECIPE_PKGSPECS:
		pkg = *(struct recipe_package **)v;
		free(pkg[0].name);
		pkg[0].name = xstrdup("changed");
		return 0;
	case RECIPE_LIST:
		n = *(size_t *)((char *)base + k->count);
		*(size_t *)((char *)base + k->count) = 0;
		return n;
	default:
		ck_abort_msg("no change for the type of '%s': add one", k->name);
		return 0;
	}
}

START_TEST(key_follows_the_recipe_table)
{
	char dir[] = "/tmp/mki-layer-XXXXXX", base_key[65], key[65];
	const struct recipe_key *k;
	struct buf before = { 0 }, after = { 0 };
	struct recipe r;
	char *cmd;
	size_t n;
	int tree = 0, other = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	cmd = xasprintf("cd %s && echo k >k.gpg && echo s >h.sh && echo d >x.deb && mkdir ov", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	log_set_level(LOG_QUIET);
	table_recipe(&r, dir);
	recipe_key_of(&r, base_key);
	recipe_format(&r, &before);
	recipe_release(&r);
	for (k = recipe_keys; k->name; k++) {
		void *base;

		if (k->type == RECIPE_GROUP) { /* no value of its own: its keys are rows too */
			ck_assert_msg(!k->tree, "group '%s' cannot be marked", k->name);
			continue;
		}
		table_recipe(&r, dir);
		base = recipe_section_base(&r, k->section);
		ck_assert_msg(base, "the test recipe has no '%s': add one", recipe_section_name(k->section));
		n = change_key(k, base);
		recipe_key_of(&r, key);
		recipe_format(&r, &after);
		/* The change is real: the normalized form sees it. */
		ck_assert_msg(strcmp(before.p, after.p), "changing '%s' changes nothing", k->name);
		if (k->tree)
			ck_assert_msg(strcmp(base_key, key), "'%s' is not in the layer key", k->name);
		else
			ck_assert_msg(!strcmp(base_key, key), "'%s' changes the layer key", k->name);
		tree += k->tree;
		other += !k->tree;
		if (k->type == RECIPE_LIST)
			*(size_t *)((char *)base + k->count) = n;
		buf_release(&after);
		recipe_release(&r);
	}
	ck_assert_int_ge(tree, 7);
	ck_assert_int_ge(other, 40);
	buf_release(&before);
	cmd = xasprintf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}
END_TEST

Suite *layer_suite(void)
{
	Suite *s = suite_create("layer");
	TCase *tc = tcase_create("layer");

	tcase_add_test(tc, key_covers_what_configures_the_tree);
	tcase_add_test(tc, key_ignores_what_comes_after_configuration);
	tcase_add_test(tc, key_follows_the_recipe_table);
	suite_add_tcase(s, tc);
	return s;
}
