/*
 * The disk section: type names resolve to the Discoverable Partitions GUID of the primary
 * architecture, formats and labels default by type and contents, a disk changes the digest
 * and a recipe without one keeps it. Each error's message is checked by integration test 95.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "image/format.h"
#include "lib/err.h"
#include "lib/log.h"
#include "recipe/recipe.h"
#include "recipe/recipe_internal.h"

static const struct recipe_checks checks = { NULL, format_recipe_check };

#define HEAD "name = \"t\"; architecture = \"%s\"; packages = { install = [ \"hello\" ]; };\n"

static int parse(struct recipe *r, const char *arch, const char *disk)
{
	char *text = xasprintf(HEAD "%s", arch, disk);
	int ret;

	log_set_level(LOG_QUIET);
	memset(r, 0, sizeof(*r));
	ret = recipe_parse_text(r, text, "r.cfg", "/tmp", &checks);
	free(text);
	return ret;
}

#define LAYOUT "disk = { partitions = ( { name = \"esp\"; type = \"esp\"; contents = \"/boot/efi\"; }, " \
	"{ name = \"root\"; type = \"root\"; contents = \"root\"; }, " \
	"{ name = \"b\"; type = \"root\"; }, { name = \"d\"; type = \"linux\"; format = \"ext4\"; } ); };"

START_TEST(types_and_defaults)
{
	struct recipe r;
	const struct recipe_partition *p;

	ck_assert_int_eq(parse(&r, "arm64", LAYOUT), 0);
	ck_assert(r.disk.set);
	ck_assert_uint_eq(r.disk.n_partitions, 4);
	p = r.disk.partitions;
	ck_assert_str_eq(p[0].type_guid, "c12a7328-f81f-11d2-ba4b-00a0c93ec93b");
	ck_assert_int_eq(p[0].format, PART_FS_VFAT);
	ck_assert_str_eq(p[0].path, "boot/efi");
	ck_assert_str_eq(p[0].label, "esp");
	ck_assert_str_eq(p[1].type_guid, "b921b045-1df0-41c3-af44-4c6f280d3fae"); /* root-arm64 */
	ck_assert_int_eq(p[1].format, PART_FS_EXT4);
	ck_assert_ptr_null(p[1].label); /* image.label */
	ck_assert_int_eq(p[2].contents, PART_EMPTY);
	ck_assert_int_eq(p[2].format, PART_FS_NONE); /* slot B: the update agent's to fill */
	ck_assert_int_eq(p[3].format, PART_FS_EXT4);
	ck_assert(p[3].table_entry);
	ck_assert_int_eq(r.disk.bmap, 1);
	ck_assert_str_eq(r.disk.cmdline, "ro rootwait");
	recipe_release(&r);
	ck_assert_int_eq(parse(&r, "armhf", LAYOUT), 0);
	ck_assert_str_eq(r.disk.partitions[1].type_guid, "69dad710-2ce4-4e3c-b16c-21a1d49abed3");
	recipe_release(&r);
	ck_assert_int_eq(parse(&r, "amd64", LAYOUT), 0);
	ck_assert_str_eq(r.disk.partitions[1].type_guid, "4f68bce3-e8cd-4db1-96e7-fbcaf984b709");
	recipe_release(&r);
}
END_TEST

START_TEST(mbr_ids_and_guids)
{
	struct recipe r;

	ck_assert_int_eq(parse(&r, "armhf", "disk = { table = \"mbr\"; partitions = ( "
			       "{ name = \"r\"; type = \"root\"; contents = \"root\"; legacy_boot = true; }, "
			       "{ name = \"x\"; type = \"0x0c\"; format = \"vfat\"; } ); };"), 0);
	ck_assert_uint_eq(r.disk.partitions[0].mbr_type, 0x83);
	ck_assert_uint_eq(r.disk.partitions[1].mbr_type, 0x0c);
	ck_assert(r.disk.partitions[0].legacy_boot);
	recipe_release(&r);
	ck_assert_int_eq(parse(&r, "armhf", "disk = { partitions = ( { name = \"r\"; type = "
			       "\"0FC63DAF-8483-4772-8E79-3D69D8477DE4\"; contents = \"root\"; } ); };"), 0);
	ck_assert_str_eq(r.disk.partitions[0].type_guid, "0fc63daf-8483-4772-8e79-3d69d8477de4");
	recipe_release(&r);
}
END_TEST

START_TEST(digest)
{
	struct recipe a, b;

	ck_assert_int_eq(parse(&a, "armhf", ""), 0);
	ck_assert_int_eq(parse(&b, "armhf", LAYOUT), 0);
	ck_assert(!a.disk.set);
	ck_assert_str_ne(a.digest, b.digest);
	recipe_release(&b);
	ck_assert_int_eq(parse(&b, "armhf", "disk = { output = \"/elsewhere/x.img\"; partitions = ( "
			       "{ name = \"r\"; type = \"root\"; contents = \"root\"; } ); };"), 0);
	ck_assert_str_eq(b.disk.output, "/elsewhere/x.img");
	ck_assert_int_eq(b.disk.partitions[0].size, 0);
	recipe_release(&b);
	recipe_release(&a);
}
END_TEST

START_TEST(sizes_and_efi_names)
{
	struct recipe r;

	ck_assert_int_eq(parse(&r, "amd64", "disk = { size = \"2G\"; partitions = ( "
			       "{ name = \"r\"; type = \"root\"; contents = \"root\"; min_size = \"1G\"; }, "
			       "{ name = \"d\"; type = \"linux\"; size = \"grow\"; } ); };"), 0);
	ck_assert_uint_eq(r.disk.size, 2ull << 30);
	ck_assert_uint_eq(r.disk.partitions[0].min_size, 1ull << 30);
	ck_assert(r.disk.partitions[1].grow);
	recipe_release(&r);
	ck_assert_str_eq(recipe_disk_efi_arch("amd64"), "x64");
	ck_assert_str_eq(recipe_disk_efi_arch("arm64"), "aa64");
	ck_assert_ptr_null(recipe_disk_efi_arch("s390x"));
}
END_TEST

#define VERITY(data, hash) "disk = { partitions = ( " \
	"{ name = \"root\"; type = \"linux\"; contents = \"root\"; }, " data ", " hash " ); };"

/* "verity:NAME" keeps its data partition's index; root-verity is the architecture's type. */
START_TEST(verity)
{
	struct recipe r;
	struct buf b = { 0 };
	const struct recipe_partition *p;

	ck_assert_int_eq(parse(&r, "arm64", VERITY("{ name = \"d\"; type = \"root\"; "
			       "contents = \"file:/x.img\"; }", "{ name = \"h\"; type = "
			       "\"root-verity\"; contents = \"verity:d\"; }")), 0);
	p = r.disk.partitions;
	ck_assert_int_eq(p[2].contents, PART_VERITY);
	ck_assert_str_eq(p[2].path, "d");
	ck_assert_uint_eq(p[2].verity_of, 1);
	ck_assert_int_eq(p[2].format, PART_FS_NONE);
	ck_assert_str_eq(p[2].type_guid, "df3300ce-d69f-4c92-978c-9bfb0f38d820");
	recipe_format(&r, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "contents = \"verity:d\""));
	buf_release(&b);
	recipe_release(&r);
	ck_assert_int_eq(parse(&r, "amd64", VERITY("{ name = \"d\"; type = \"raw\"; "
			       "contents = \"file:/x.img\"; }", "{ name = \"h\"; type = "
			       "\"root-verity\"; contents = \"verity:d\"; }")), 0);
	ck_assert_str_eq(r.disk.partitions[2].type_guid, "2c7357ed-ebd2-46d9-aec1-23d437ec2bf5");
	recipe_release(&r);
	/* missing, itself a tree, after its tree, writable, empty, twice */
	ck_assert_int_eq(parse(&r, "amd64", VERITY("{ name = \"d\"; type = \"raw\"; }",
			       "{ name = \"h\"; type = \"raw\"; contents = \"verity:e\"; }")),
			 -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "amd64", VERITY("{ name = \"d\"; type = \"raw\"; "
			       "contents = \"verity:root\"; }", "{ name = \"h\"; type = "
			       "\"raw\"; contents = \"verity:d\"; }")), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "amd64", VERITY("{ name = \"h\"; type = \"raw\"; "
			       "contents = \"verity:d\"; }", "{ name = \"d\"; type = \"raw\"; "
			       "contents = \"file:/x\"; }")), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "amd64", VERITY("{ name = \"d\"; type = \"linux\"; "
			       "contents = \"/srv\"; }", "{ name = \"h\"; type = \"raw\"; "
			       "contents = \"verity:d\"; }")), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "amd64", VERITY("{ name = \"d\"; type = \"raw\"; }",
			       "{ name = \"h\"; type = \"raw\"; contents = \"verity:d\"; }")),
			 -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "amd64", VERITY("{ name = \"d\"; type = \"raw\"; contents = "
			       "\"file:/x\"; }, { name = \"h\"; type = \"raw\"; contents = "
			       "\"verity:d\"; }", "{ name = \"h2\"; type = \"raw\"; contents = "
			       "\"verity:d\"; }")), -MKI_E_RECIPE);
	ck_assert_int_eq(parse(&r, "amd64", VERITY("{ name = \"d\"; type = \"raw\"; contents = "
			       "\"file:/x\"; }", "{ name = \"h\"; type = \"raw\"; format = "
			       "\"ext4\"; contents = \"verity:d\"; }")), -MKI_E_RECIPE);
}
END_TEST

Suite *recipe_disk_suite(void)
{
	Suite *s = suite_create("recipe_disk");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, types_and_defaults);
	tcase_add_test(tc, mbr_ids_and_guids);
	tcase_add_test(tc, digest);
	tcase_add_test(tc, sizes_and_efi_names);
	tcase_add_test(tc, verity);
	suite_add_tcase(s, tc);
	return s;
}
