/* The key table (recipe_keys.c): every row documented, once, its default what the parser gives. */
#include "recipe_fixture.h"

/*
 * The key table is the reference: every key has a doc and a name unique in its section, and a
 * default it states is what the parser gives a recipe that leaves the key out.
 */
START_TEST(table_defaults_are_the_parsers)
{
	const struct recipe_key *k, *o;
	struct recipe r;
	char *p, *cmd;

	cmd = xasprintf("cd %s && echo k >k.gpg && echo s >h.sh && mkdir -p ov", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	p = write_recipe(MINIMAL "sources = ( { uri = \"http://127.0.0.1/d\"; keyring = \"k.gpg\"; } );"
			 "hooks = ( { script = \"h.sh\"; } );"
			 "overlays = ( { source = \"ov\"; destination = \"/\"; } );"
			 "image = { devices = ( { path = \"/dev/null\"; type = \"char\"; } ); };"
			 "disk = { partitions = ( { name = \"r\"; type = \"root\"; contents = \"root\"; } ); };");
	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	for (k = recipe_keys; k->name; k++) {
		struct buf b = { 0 };
		void *base = recipe_section_base(&r, k->section);

		ck_assert_msg(k->doc && k->doc[0], "'%s' has no doc", k->name);
		for (o = recipe_keys; o < k; o++)
			ck_assert_msg(o->section != k->section || strcmp(o->name, k->name),
				      "'%s' twice", k->name);
		if (!k->def)
			continue;
		ck_assert_ptr_nonnull(base);
		recipe_format_value(k, base, &b);
		/* Strings are shown quoted, the default as a recipe would hold it. */
		if (b.p[0] == '"') {
			ck_assert_uint_eq(b.p[b.len - 1], '"');
			b.p[--b.len] = 0;
		}
		ck_assert_msg(!strcmp(b.p + (b.p[0] == '"'), k->def), "'%s' defaults to %s, not %s",
			      k->name, b.p + (b.p[0] == '"'), k->def);
		buf_release(&b);
	}
	recipe_release(&r);
	free(p);
}
END_TEST

/* host_twins: true by default and then not shown, so older recipes keep their digest. */
START_TEST(host_twins_key)
{
	struct recipe r;
	struct buf b = { 0 };
	char digest[65], *p = write_recipe(MINIMAL);

	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	free(p);
	ck_assert_int_eq(r.host_twins, 1);
	recipe_format(&r, &b);
	ck_assert_ptr_null(strstr(b.p, "host_twins"));
	memcpy(digest, r.digest, 65);
	recipe_release(&r);
	buf_release(&b);
	p = write_recipe(MINIMAL "host_twins = false;\n");
	ck_assert_int_eq(recipe_load(&r, p, &unit_checks), 0);
	free(p);
	ck_assert_int_eq(r.host_twins, 0);
	recipe_format(&r, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "\nhost_twins = false;\n"));
	ck_assert_str_ne(r.digest, digest);
	recipe_release(&r);
	buf_release(&b);
}
END_TEST

Suite *recipe_keys_suite(void)
{
	Suite *s = suite_create("recipe_keys");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, table_defaults_are_the_parsers);
	tcase_add_test(tc, host_twins_key);
	suite_add_tcase(s, tc);
	return s;
}
