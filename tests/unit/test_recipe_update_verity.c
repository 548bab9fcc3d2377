/*
 * The update group of a verified root (recipe_update_verity.c): each slot is [boot,] data and
 * hash partition, slot A's holding the image, the others empty and at least as large; the
 * children found from the slot. Integration tests 120 and 121 build and boot them.
 */
#include "recipe_fixture.h"

#define KEYS "compatible = \"a\"; version = \"1\"; cert = \"c.pem\"; key = \"k.pem\"; " \
	"keyring = \"ca.pem\";"
#define SEL "{ name = \"select\"; type = \"linux\"; format = \"vfat\"; size = \"16M\"; " \
	"contents = \"/boot/select\"; }, "
#define BOOT_A "{ name = \"boot-a\"; type = \"linux\"; size = \"64M\"; contents = \"/boot\"; }, "
#define ROOT_A "{ name = \"root-a\"; type = \"root\"; size = \"1G\"; contents = \"root\"; " \
	"format = \"squashfs\"; }, { name = \"root-a-verity\"; type = \"root-verity\"; " \
	"size = \"16M\"; contents = \"verity:root-a\"; }, "
#define ROOT_B(size, hash) "{ name = \"root-b\"; type = \"root\"; size = \"" size "\"; }, " \
	"{ name = \"root-b-verity\"; type = \"root-verity\"; size = \"" hash "\"; }"
#define BOOT_B(size) "{ name = \"boot-b\"; type = \"linux\"; size = \"" size "\"; }, "

/* The recipe with disk partitions PARTS (bootloader LOADER) and the update group; its code. */
static int load(struct recipe *r, const char *loader, const char *parts)
{
	char *cmd = xasprintf("cd %s && echo c >c.pem && echo k >k.pem && echo ca >ca.pem", dir);
	char *text = xasprintf(MINIMAL "disk = { bootloader = \"%s\"; partitions = ( %s ); };\n"
			       "update = { " KEYS " };", loader, parts), *p;
	int ret;

	ck_assert_int_eq(system(cmd), 0);
	p = write_recipe(text);
	ret = recipe_load(r, p, &unit_checks);
	free(text);
	free(cmd);
	free(p);
	return ret;
}

START_TEST(slots_and_children)
{
	struct recipe r;

	ck_assert_int_eq(load(&r, "extlinux", SEL BOOT_A ROOT_A BOOT_B("64M") ROOT_B("1G", "16M")),
			 0);
	ck_assert(r.update.verity);
	ck_assert(recipe_update_boots(&r));
	ck_assert_uint_eq(r.update.root, 2);
	ck_assert_int_eq(recipe_update_child(&r, 2, UPDATE_PART_HASH), 3);
	ck_assert_int_eq(recipe_update_child(&r, 2, UPDATE_PART_BOOT), 1);
	ck_assert_int_eq(recipe_update_child(&r, 5, UPDATE_PART_BOOT), 4);
	recipe_release(&r);
	/* no boot loader: the bundle alone, data and hash */
	ck_assert_int_eq(load(&r, "none", ROOT_A ROOT_B("1G", "16M")), 0);
	ck_assert(r.update.verity && !recipe_update_boots(&r));
	ck_assert_int_eq(recipe_update_child(&r, 0, UPDATE_PART_HASH), 1);
	ck_assert_int_eq(recipe_update_child(&r, 0, UPDATE_PART_BOOT), -1);
	recipe_release(&r);
}
END_TEST

START_TEST(refused)
{
	static const char *const bad[][2] = {
		{ "none", ROOT_A ROOT_B("512M", "16M") },                 /* data slot too small */
		{ "none", ROOT_A ROOT_B("1G", "8M") },                    /* hash slot too small */
		{ "none", ROOT_A "{ name = \"root-b\"; type = \"root\"; size = \"1G\"; }" },
		{ "none", ROOT_A "{ name = \"root-b-verity\"; type = \"root-verity\"; size = "
			  "\"16M\"; }, { name = \"root-b\"; type = \"root\"; size = \"1G\"; }" },
		{ "extlinux", SEL ROOT_A BOOT_B("64M") ROOT_B("1G", "16M") }, /* A has no boot */
		{ "extlinux", SEL BOOT_A ROOT_A ROOT_B("1G", "16M") },        /* B has no boot */
		{ "extlinux", SEL BOOT_A ROOT_A BOOT_B("32M") ROOT_B("1G", "16M") },
		{ "extlinux", SEL BOOT_A ROOT_A "{ name = \"boot-b\"; type = \"linux\"; size = "
			      "\"64M\"; format = \"ext4\"; }, " ROOT_B("1G", "16M") },
		{ "extlinux", BOOT_A ROOT_A BOOT_B("64M") ROOT_B("1G", "16M") }, /* no selection */
	};
	struct recipe r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(load(&r, bad[i][0], bad[i][1]) == -MKI_E_RECIPE, "accepted: %s",
			      bad[i][1]);
}
END_TEST

Suite *recipe_update_verity_suite(void)
{
	Suite *s = suite_create("recipe_update_verity");
	TCase *tc = tcase_create("recipe_update_verity");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, slots_and_children);
	tcase_add_test(tc, refused);
	suite_add_tcase(s, tc);
	return s;
}
