/*
 * A recipe naming a board (recipe/recipe_board.c) gets the disk's defaults from its profile and
 * is held to its rules. The messages are checked by integration test 130.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "image/format.h"
#include "lib/err.h"
#include "lib/log.h"
#include "recipe/board.h"
#include "recipe/recipe.h"
#include "recipe/recipe_internal.h"

static const struct recipe_checks checks = { NULL, format_recipe_check };

#define MIB (1024 * 1024ull)
#define HEAD "name = \"t\"; architecture = \"armhf\"; packages = { install = [ \"hello\" ]; };\n"
#define ROOT "{ name = \"root\"; type = \"root\"; contents = \"root\"; }"

#define HEAD64 "name = \"t\"; architecture = \"arm64\"; packages = { install = [ \"hello\" ]; };\n"
#define FAT "{ name = \"firmware\"; type = \"0x0c\"; contents = \"/boot/firmware\"; " \
	    "format = \"vfat\"; size = \"256M\"; }"

static int parse_head(struct recipe *r, const char *head, const char *text)
{
	char *all = xasprintf("%s%s", head, text);
	int ret;

	log_set_level(LOG_QUIET);
	memset(r, 0, sizeof(*r));
	ret = recipe_parse_text(r, all, "r.cfg", "/tmp", &checks);
	free(all);
	return ret;
}

static int parse(struct recipe *r, const char *text)
{
	return parse_head(r, HEAD, text);
}

#define PI(disk) parse_head(&r, HEAD64, "board = \"raspberry-pi\"; disk = { " disk " };")

START_TEST(recipe_gets_the_defaults)
{
	struct recipe r;
	const struct recipe_partition *p;

	ck_assert_int_eq(parse(&r, "board = \"firefly-rk3288\"; disk = { partitions = ( " ROOT
				   " ); };"), 0);
	ck_assert_uint_eq(r.disk.n_partitions, 3);
	p = r.disk.partitions;
	ck_assert_str_eq(p[0].name, "idbloader");
	ck_assert_uint_eq(p[0].offset, 64 * 512);
	ck_assert_str_eq(p[0].path, "usr/lib/u-boot/firefly-rk3288/idbloader.img");
	ck_assert(!p[0].table_entry && p[0].contents == PART_FILE && p[0].format == PART_FS_NONE);
	ck_assert_str_eq(p[1].name, "u-boot");
	ck_assert_uint_eq(p[1].offset, 16384 * 512);
	ck_assert_str_eq(p[2].name, "root");
	ck_assert_str_eq(r.disk.console, "ttyS2,115200");
	ck_assert_int_eq(r.disk.table, DISK_GPT);
	ck_assert_int_eq(r.disk.size_round, BOARD_ROUND_MIB);
	recipe_release(&r);

	ck_assert_int_eq(parse(&r, "board = \"beaglebone-black\"; disk = { partitions = ( " ROOT
				   " ); };"), 0);
	ck_assert_int_eq(r.disk.table, DISK_MBR); /* the board's table */
	ck_assert_str_eq(r.disk.partitions[0].name, "mlo");
	recipe_release(&r);

	ck_assert_int_eq(parse(&r, "board = \"orangepi-pc\"; disk = { console = \"ttyS0\"; "
				   "size = \"512M\"; partitions = ( " ROOT " ); };"), 0);
	ck_assert_str_eq(r.disk.console, "ttyS0");
	ck_assert_int_eq(r.disk.size_round, BOARD_ROUND_POW2);
	ck_assert_uint_eq(r.disk.partitions[0].size, MIB - 8192);
	recipe_release(&r);
}
END_TEST

START_TEST(recipe_held_to_the_rules)
{
	struct recipe r;

	/* unknown, another architecture, no disk */
	ck_assert_int_eq(parse(&r, "board = \"orangepi\"; disk = { partitions = ( " ROOT " ); };"),
			 -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "board = \"raspberry-pi\"; disk = { partitions = ( " ROOT
				   " ); };"), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "board = \"orangepi-pc\";"), -MKI_E_RECIPE);
	/* a table the ROM does not read, a console elsewhere, a size QEMU's card refuses */
	ck_assert_int_eq(parse(&r, "board = \"beaglebone-black\"; disk = { table = \"gpt\"; "
				   "partitions = ( " ROOT " ); };"), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "board = \"orangepi-pc\"; disk = { console = \"ttyAMA0\"; "
				   "partitions = ( " ROOT " ); };"), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "board = \"orangepi-pc\"; disk = { size = \"768M\"; "
				   "partitions = ( " ROOT " ); };"), -MKI_E_RECIPE);
	/* a partition in a loader's slot; the slot's name taken by something else */
	ck_assert_int_eq(parse(&r, "board = \"firefly-rk3288\"; disk = { partitions = ( " ROOT
				   ", { name = \"x\"; type = \"linux\"; offset = \"9M\"; size = \"1M\"; }"
				   " ); };"), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "board = \"orangepi-pc\"; disk = { partitions = ( { name = "
				   "\"spl\"; type = \"raw\"; contents = \"file:/x\"; in_table = false; "
				   "offset = \"8K\"; }, " ROOT " ); };"), -MKI_E_RECIPE);
	/* the board's own slot, spelled out as the normalized form does, is the board's */
	ck_assert_int_eq(parse(&r, "board = \"orangepi-pc\"; disk = { partitions = ( { name = "
				   "\"spl\"; type = \"raw\"; contents = \"file:/usr/lib/u-boot/"
				   "orangepi_plus/u-boot-sunxi-with-spl.bin\"; in_table = false; "
				   "offset = \"8K\"; }, " ROOT " ); };"), 0);
	ck_assert_uint_eq(r.disk.n_partitions, 2);
	recipe_release(&r);
}
END_TEST

/*
 * The Raspberry Pi: its firmware's FAT partition first on an MBR, holding /boot/firmware; no
 * boot loader, no disk.cmdline (raspi-firmware's hooks write cmdline.txt), no verified root.
 */
START_TEST(raspberry_pi)
{
	struct recipe r;

	ck_assert_int_eq(PI("partitions = ( " FAT ", " ROOT " );"), 0);
	ck_assert_int_eq(r.disk.table, DISK_MBR);
	ck_assert_str_eq(r.disk.console, "ttyS1,115200");
	ck_assert_uint_eq(r.disk.n_partitions, 2); /* nothing outside the table */
	ck_assert_int_eq(r.disk.bootloader, DISK_BOOT_NONE);
	ck_assert_ptr_null(r.disk.cmdline); /* raspi-firmware's hooks write cmdline.txt */
	recipe_release(&r);
	ck_assert_int_eq(PI("table = \"gpt\"; partitions = ( " FAT ", " ROOT " );"), -MKI_E_RECIPE);
	ck_assert_int_eq(PI("partitions = ( " ROOT " );"), -MKI_E_RECIPE);
	ck_assert_int_eq(PI("partitions = ( " ROOT ", " FAT " );"), -MKI_E_RECIPE);
	ck_assert_int_eq(PI("partitions = ( { name = \"firmware\"; type = \"0x83\"; contents = "
			    "\"/boot/firmware\"; format = \"vfat\"; }, " ROOT " );"), -MKI_E_RECIPE);
	ck_assert_int_eq(PI("partitions = ( { name = \"firmware\"; type = \"0x0c\"; contents = "
			    "\"/boot\"; format = \"vfat\"; }, " ROOT " );"), -MKI_E_RECIPE);
	ck_assert_int_eq(PI("bootloader = \"extlinux\"; partitions = ( " FAT ", " ROOT " );"),
			 -MKI_E_RECIPE);
	ck_assert_int_eq(PI("cmdline = \"quiet\"; partitions = ( " FAT ", " ROOT " );"),
			 -MKI_E_RECIPE);
	ck_assert_int_eq(PI("console = \"ttyAMA0\"; partitions = ( " FAT ", " ROOT " );"),
			 -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "board = \"raspberry-pi\"; disk = { partitions = ( " FAT ", "
				   ROOT " ); };"), -MKI_E_RECIPE); /* armhf */
}
END_TEST

Suite *recipe_board_suite(void)
{
	Suite *s = suite_create("recipe_board");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, recipe_gets_the_defaults);
	tcase_add_test(tc, recipe_held_to_the_rules);
	tcase_add_test(tc, raspberry_pi);
	suite_add_tcase(s, tc);
	return s;
}
