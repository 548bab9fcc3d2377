/*
 * The update group (recipe_update.c): the root slots by default and by name, checked against
 * the disk's layout; what is required; the private key kept out of the digest. Each message a
 * build prints is checked by integration test 128.
 */
#include "recipe_fixture.h"

#define AB "disk = { partitions = ( { name = \"boot\"; type = \"linux\"; contents = \"/boot\"; }, " \
	"{ name = \"root-a\"; type = \"root\"; size = \"1G\"; contents = \"root\"; }, " \
	"{ name = \"root-b\"; type = \"root\"; size = \"%s\"; }, " \
	"{ name = \"data\"; type = \"linux\"; size = \"64M\"; format = \"ext4\"; } ); };\n"
#define KEYS "cert = \"c.pem\"; key = \"k.pem\"; keyring = \"ca.pem\";"

/* The recipe `text` (taken) loaded beside the key files KEYS names; 0 or the load's code. */
static int load_text(struct recipe *r, char *text)
{
	char *cmd = xasprintf("cd %s && echo c >c.pem && echo k >k.pem && echo ca >ca.pem", dir);
	char *p;
	int ret;

	ck_assert_int_eq(system(cmd), 0);
	p = write_recipe(text);
	ret = recipe_load(r, p, &unit_checks);
	free(cmd);
	free(text);
	free(p);
	return ret;
}

/* A recipe with the A/B disk (root-b of size B) and `update`; 0 or the load's code. */
static int load(struct recipe *r, const char *b, const char *update)
{
	return load_text(r, xasprintf(MINIMAL AB "%s", b, update));
}

START_TEST(default_slots)
{
	struct recipe r;
	size_t v[4];

	ck_assert_int_eq(load(&r, "1G", "update = { compatible = \"acme\"; version = \"1\"; "
			      KEYS " };"), 0);
	ck_assert(r.update.set);
	ck_assert_str_eq(r.update.format, "rauc");
	ck_assert_uint_eq(r.update.slots.n, 2);
	ck_assert_str_eq(r.update.slots.v[0], "root-a");
	ck_assert_str_eq(r.update.slots.v[1], "root-b");
	ck_assert_uint_eq(r.update.root, 1);
	ck_assert_uint_eq(recipe_update_slots(&r, v, 4), 2);
	ck_assert_uint_eq(v[0], 1);
	ck_assert_uint_eq(v[1], 2);
	recipe_release(&r);
	ck_assert_int_eq(load(&r, "1G", ""), 0);
	ck_assert(!r.update.set);
	ck_assert_uint_eq(recipe_update_slots(&r, v, 4), 0);
	recipe_release(&r);
}
END_TEST

START_TEST(refused)
{
	static const struct {
		const char *b, *update;
	} bad[] = {
		{ "1G", "update = { version = \"1\"; " KEYS " };" },
		{ "1G", "update = { compatible = \"acme\"; " KEYS " };" },
		{ "1G", "update = { compatible = \"acme\"; version = \"1\"; key = \"k.pem\"; keyring = \"ca.pem\"; };" },
		{ "1G", "update = { compatible = \"acme\"; version = \"1\"; cert = \"c.pem\"; key = \"missing.pem\"; keyring = \"ca.pem\"; };" },
		{ "1G", "update = { compatible = \" acme\"; version = \"1\"; " KEYS " };" },
		{ "1G", "update = { compatible = \"a\\nb\"; version = \"1\"; " KEYS " };" },
		{ "1G", "update = { format = \"swupdate\"; compatible = \"a\"; version = \"1\"; " KEYS " };" },
		{ "1G", "update = { compatible = \"a\"; version = \"1\"; slots = [ \"root-a\", \"root-c\" ]; " KEYS " };" },
		{ "1G", "update = { compatible = \"a\"; version = \"1\"; slots = [ \"root-a\" ]; " KEYS " };" },
		{ "1G", "update = { compatible = \"a\"; version = \"1\"; slots = [ \"root-b\", \"data\" ]; " KEYS " };" },
		{ "1G", "update = { compatible = \"a\"; version = \"1\"; slots = [ \"root-a\", \"root-a\" ]; " KEYS " };" },
		{ "1G", "update = { compatible = \"a\"; version = \"1\"; slots = [ \"root-a\", \"boot\" ]; " KEYS " };" },
		{ "512M", "update = { compatible = \"a\"; version = \"1\"; " KEYS " };" },
		{ "auto", "update = { compatible = \"a\"; version = \"1\"; " KEYS " };" },
	};
	struct recipe r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(load(&r, bad[i].b, bad[i].update) == -MKI_E_RECIPE, "accepted: %s",
			      bad[i].update);
}
END_TEST

/* disk.bootloader = "extlinux": the A/B selection's layout (DISK is the disk group's text). */
static int load_boot(struct recipe *r, const char *disk, const char *update)
{
	return load_text(r, xasprintf(MINIMAL "disk = { bootloader = \"extlinux\"; partitions = "
				      "( %s ); };\nupdate = { compatible = \"a\"; version = \"1\"; "
				      "%s };", disk, update));
}

#define SEL "{ name = \"boot\"; type = \"linux\"; format = \"vfat\"; size = \"16M\"; " \
	"contents = \"/boot/select\"; }, "
#define SLOTS "{ name = \"root-a\"; type = \"root\"; size = \"1G\"; contents = \"root\"; }, " \
	"{ name = \"root-b\"; type = \"root\"; size = \"1G\"; }"

START_TEST(boot_selection)
{
	static const char *const bad[][2] = {
		{ SLOTS, KEYS },                                            /* no /boot/select */
		{ "{ name = \"boot\"; type = \"linux\"; format = \"ext4\"; size = \"16M\"; "
		  "contents = \"/boot/select\"; }, " SLOTS, KEYS },        /* not FAT */
		{ SEL "{ name = \"k\"; type = \"linux\"; size = \"64M\"; contents = \"/boot\"; }, "
		  SLOTS, KEYS },                                            /* kernels outside slots */
		{ SEL SLOTS ", { name = \"root-c\"; type = \"root\"; size = \"1G\"; }", KEYS },
		{ SEL "{ name = \"root-a\"; type = \"root\"; size = \"1G\"; contents = \"root\"; "
		  "legacy_boot = true; }, { name = \"root-b\"; type = \"root\"; size = \"1G\"; }",
		  KEYS },                                                   /* U-Boot would skip it */
		{ SEL SLOTS, "boot_attempts = 0; " KEYS },
		{ SEL SLOTS, "boot_attempts = 10; " KEYS },
		{ SEL SLOTS, "sign = \"later\"; " KEYS },
		{ SEL SLOTS, "sign = \"offline\"; " KEYS },                 /* keys at the station */
		{ SEL SLOTS, "keyring = \"ca.pem\";" },                     /* no keys, no offline */
	};
	struct recipe r;
	size_t i;

	ck_assert_int_eq(load_boot(&r, SEL SLOTS, KEYS), 0);
	ck_assert(recipe_update_boots(&r));
	ck_assert_int_eq(r.update.select, 0);
	ck_assert_uint_eq(r.update.boot_attempts, 3);
	ck_assert(!r.update.sign_offline);
	recipe_release(&r);
	ck_assert_int_eq(load_boot(&r, SEL SLOTS, "boot_attempts = 1; sign = \"offline\"; "
				   "keyring = \"ca.pem\";"), 0);
	ck_assert(r.update.sign_offline && r.update.boot_attempts == 1);
	ck_assert_ptr_null(r.update.cert);
	recipe_release(&r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(load_boot(&r, bad[i][0], bad[i][1]) == -MKI_E_RECIPE, "accepted: %s %s",
			      bad[i][0], bad[i][1]);
}
END_TEST

/* disk.bootloader = "systemd-boot": the ESP is the selection (bootcfg_ab_sdboot.c). */
static int load_sdboot(struct recipe *r, const char *disk)
{
	return load_text(r, xasprintf(MINIMAL "disk = { bootloader = \"systemd-boot\"; "
				      "partitions = ( %s ); };\nupdate = { compatible = \"a\"; "
				      "version = \"1\"; " KEYS " };", disk));
}

#define ESP "{ name = \"esp\"; type = \"esp\"; size = \"256M\"; contents = \"/boot/efi\"; }, "

START_TEST(sdboot_selection)
{
	static const char *const bad[] = {
		"{ name = \"esp\"; type = \"esp\"; contents = \"/boot/efi\"; }, " SLOTS, /* auto */
		ESP "{ name = \"k\"; type = \"linux\"; size = \"64M\"; contents = \"/boot\"; }, "
		SLOTS,                                       /* kernels outside the slots */
		ESP SLOTS ", { name = \"root-c\"; type = \"root\"; size = \"1G\"; }",
		ESP "{ name = \"root-b\"; type = \"root\"; size = \"1G\"; }, "
		"{ name = \"root-a\"; type = \"root\"; size = \"1G\"; contents = \"root\"; }",
	};
	struct recipe r;
	size_t i;

	ck_assert_int_eq(load_sdboot(&r, ESP SLOTS), 0);
	ck_assert(recipe_update_boots(&r));
	ck_assert_int_eq(r.update.select, 0);
	recipe_release(&r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(load_sdboot(&r, bad[i]) == -MKI_E_RECIPE, "accepted: %s", bad[i]);
}
END_TEST

/* No boot loader: the bundle alone, no selection. */
START_TEST(boot_loaders)
{
	struct recipe r;

	ck_assert_int_eq(load(&r, "1G", "update = { compatible = \"a\"; version = \"1\"; " KEYS
			      " };"), 0);
	ck_assert(!recipe_update_boots(&r));
	recipe_release(&r);
}
END_TEST

/* No disk: nothing to update. */
START_TEST(needs_a_disk)
{
	struct recipe r;

	ck_assert_int_eq(load_text(&r, xstrdup(MINIMAL "update = { compatible = \"a\"; version = "
					       "\"1\"; " KEYS " };")), -MKI_E_RECIPE);
}
END_TEST

/* The private key is where the signature comes from, not what is built: not in the digest. */
START_TEST(key_outside_digest)
{
	struct recipe r;
	struct buf all = { 0 }, tree = { 0 };
	char digest[65], *cmd;

	ck_assert_int_eq(load(&r, "1G", "update = { compatible = \"acme\"; version = \"1\"; "
			      KEYS " };"), 0);
	memcpy(digest, r.digest, sizeof(digest));
	recipe_format(&r, &all);
	ck_assert_ptr_nonnull(strstr(all.p, "key = "));
	ck_assert_ptr_nonnull(strstr(all.p, "compatible = \"acme\""));
	recipe_format_tree(&r, &tree);
	ck_assert_ptr_null(strstr(tree.p ? tree.p : "", "update"));
	recipe_release(&r);
	cmd = xasprintf("cd %s && echo other >k2.pem", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	ck_assert_int_eq(load(&r, "1G", "update = { compatible = \"acme\"; version = \"1\"; "
			      "cert = \"c.pem\"; key = \"k2.pem\"; keyring = \"ca.pem\"; };"), 0);
	ck_assert_str_eq(r.digest, digest);
	recipe_release(&r);
	ck_assert_int_eq(load(&r, "1G", "update = { compatible = \"acme\"; version = \"2\"; "
			      KEYS " };"), 0);
	ck_assert_str_ne(r.digest, digest);
	recipe_release(&r);
	buf_release(&all);
	buf_release(&tree);
}
END_TEST

Suite *recipe_update_suite(void)
{
	Suite *s = suite_create("recipe_update");
	TCase *tc = tcase_create("recipe_update");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, default_slots);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, needs_a_disk);
	tcase_add_test(tc, key_outside_digest);
	tcase_add_test(tc, boot_selection);
	tcase_add_test(tc, boot_loaders);
	tcase_add_test(tc, sdboot_selection);
	suite_add_tcase(s, tc);
	return s;
}
