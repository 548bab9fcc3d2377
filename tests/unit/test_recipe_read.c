/*
 * The readers and the walker (recipe_read.c): values of each kind, and a table of the test's own
 * run over a libconfig tree - read, written back in the normalized form, released.
 */
#include <libconfig.h>

#include "recipe_fixture.h"
#include "recipe/recipe_parse.h"

START_TEST(hostnames)
{
	ck_assert_int_eq(recipe_valid_hostname("arm-board"), 1);
	ck_assert_int_eq(recipe_valid_hostname("board1.example.org"), 1);
	ck_assert_int_eq(recipe_valid_hostname("B0ARD"), 1);
	ck_assert_int_eq(recipe_valid_hostname(""), 0);
	ck_assert_int_eq(recipe_valid_hostname("-board"), 0);
	ck_assert_int_eq(recipe_valid_hostname("board-"), 0);
	ck_assert_int_eq(recipe_valid_hostname("bo_ard"), 0);
	ck_assert_int_eq(recipe_valid_hostname("a..b"), 0);
	ck_assert_int_eq(recipe_valid_hostname("a.-b"), 0);
	ck_assert_int_eq(recipe_valid_hostname("a-.b"), 0);
	ck_assert_int_eq(recipe_valid_hostname("board."), 0);
	ck_assert_int_eq(recipe_valid_hostname("with space"), 0);
	ck_assert_int_eq(recipe_valid_hostname("0123456789012345678901234567890123456789"
					       "012345678901234567890123"), 0); /* 64, one label */
	ck_assert_int_eq(recipe_valid_hostname("0123456789012345678901234567890123456789"
					       "0123456789.1234567890123"), 1); /* 64 */
	ck_assert_int_eq(recipe_valid_hostname("0123456789012345678901234567890123456789"
					       "0123456789.12345678901234"), 0); /* 65 */
}
END_TEST

START_TEST(package_specs)
{
	struct recipe_package p;
	const char *why;

	ck_assert_int_eq(recipe_parse_package("libc6:armel=2.36-9", &p, &why), 0);
	ck_assert_str_eq(p.name, "libc6");
	ck_assert_str_eq(p.arch, "armel");
	ck_assert_str_eq(p.version, "2.36-9");
	free(p.name);
	free(p.arch);
	free(p.version);
	ck_assert_int_eq(recipe_parse_package("zlib1g=1:1.2.13.dfsg-1", &p, &why), 0);
	ck_assert_ptr_null(p.arch);
	ck_assert_str_eq(p.version, "1:1.2.13.dfsg-1");
	free(p.name);
	free(p.version);
	ck_assert_int_eq(recipe_parse_package("Hello", &p, &why), -MKI_E_RECIPE);
	ck_assert_int_eq(recipe_parse_package("hello=", &p, &why), -MKI_E_RECIPE);
	ck_assert_int_eq(recipe_parse_package("x", &p, &why), -MKI_E_RECIPE);
}
END_TEST

START_TEST(sizes)
{
	uint64_t v;

	ck_assert_int_eq(recipe_parse_size("512M", &v), 0);
	ck_assert_uint_eq(v, 512ull << 20);
	ck_assert_int_eq(recipe_parse_size("2GiB", &v), 0);
	ck_assert_uint_eq(v, 2ull << 30);
	ck_assert_int_eq(recipe_parse_size("4096", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_ne(recipe_parse_size("12Q", &v), 0);
	ck_assert_int_ne(recipe_parse_size("-1", &v), 0);
	ck_assert_int_ne(recipe_parse_size("99999999999T", &v), 0);
}
END_TEST

/* A table of two sections: a name and a list of items, each with a count and a flag. */
struct wt_item {
	int line;
	unsigned count;
	int on;
};

struct wt_top {
	char *name;
	struct wt_item *items;
	size_t n_items;
};

static const struct recipe_key wt_keys[] = {
	{ RECIPE_IN_TOP, "name", RECIPE_STRING, "x", .doc = "a name",
	  .offset = offsetof(struct wt_top, name) },
	{ RECIPE_IN_TOP, "items", RECIPE_LIST, .doc = "items", .hint = "( { count = 1; } )",
	  .offset = offsetof(struct wt_top, items), .count = offsetof(struct wt_top, n_items),
	  .sub = RECIPE_IN_SOURCES },
	{ RECIPE_IN_SOURCES, "count", RECIPE_UINT, "1", .doc = "a count", .max = 9,
	  .offset = offsetof(struct wt_item, count) },
	{ RECIPE_IN_SOURCES, "on", RECIPE_BOOL, "false", .doc = "a flag",
	  .offset = offsetof(struct wt_item, on) },
	{ 0 }
};

static const struct recipe_section_info wt_sections[RECIPE_N_SECTIONS] = {
	[RECIPE_IN_SOURCES] = { "items", "an item", "each item must be a group",
				sizeof(struct wt_item), offsetof(struct wt_item, line), NULL },
};

static const struct recipe_table wt_table = { wt_keys, wt_sections };

/* Read `text` with wt_table into `top`: the walker's return. */
static int wt_read(const char *text, struct wt_top *top)
{
	struct recipe r = { 0 };
	struct recipe_ctx c = { &r, "t.cfg", NULL, &wt_table };
	config_t cfg;
	int ret;

	memset(top, 0, sizeof(*top));
	config_init(&cfg);
	ck_assert_int_eq(config_read_string(&cfg, text), CONFIG_TRUE);
	ret = recipe_check_keys(&c, config_root_setting(&cfg), RECIPE_IN_TOP);
	if (!ret)
		ret = recipe_read_keys(&c, config_root_setting(&cfg), RECIPE_IN_TOP, top);
	config_destroy(&cfg);
	return ret;
}

START_TEST(walker_runs_the_table_it_is_given)
{
	struct wt_top top;
	struct buf b = { 0 };

	ck_assert_int_eq(wt_read("items = ( { count = 3; on = true; }, { } );", &top), 0);
	ck_assert_str_eq(top.name, "x");
	ck_assert_uint_eq(top.n_items, 2);
	ck_assert_uint_eq(top.items[0].count, 3);
	ck_assert_int_eq(top.items[0].on, 1);
	ck_assert_uint_eq(top.items[1].count, 1);
	ck_assert_int_eq(top.items[1].on, 0);
	ck_assert_int_eq(top.items[0].line, 1);
	recipe_walk_format(&wt_table, (const struct recipe *)&top, &b, 0);
	ck_assert_str_eq(b.p, "name = \"x\";\nitems = (\n  { count = 3; on = true; },\n"
			      "  { count = 1; on = false; }\n);\n");
	buf_release(&b);
	recipe_walk_release(&wt_table, RECIPE_IN_TOP, &top); /* the list too */
}
END_TEST

START_TEST(walker_refuses_what_the_table_lacks)
{
	struct wt_top top;

	ck_assert_int_eq(wt_read("nmae = \"y\";", &top), -MKI_E_RECIPE);
	ck_assert_int_eq(wt_read("items = ( { count = 10; } );", &top), -MKI_E_RECIPE);
	recipe_walk_release(&wt_table, RECIPE_IN_TOP, &top);
	ck_assert_int_eq(wt_read("items = ( 1 );", &top), -MKI_E_RECIPE);
	recipe_walk_release(&wt_table, RECIPE_IN_TOP, &top);
}
END_TEST

Suite *recipe_read_suite(void)
{
	Suite *s = suite_create("recipe_read");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, hostnames);
	tcase_add_test(tc, package_specs);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, walker_runs_the_table_it_is_given);
	tcase_add_test(tc, walker_refuses_what_the_table_lacks);
	suite_add_tcase(s, tc);
	return s;
}
