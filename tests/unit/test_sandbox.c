#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debian/arch.h"
#include "sandbox/sandbox.h"
#include "sandbox/idshift_internal.h"
#include "sandbox/sandbox_int.h"

static const struct sandbox_info root_build = { .ids = SANDBOX_IDS_ROOT,
	.sub_uid = SANDBOX_ROOT_RANGE, .sub_gid = 3000000, .sub_count = SANDBOX_ROOT_COUNT };
static const struct sandbox_info user_build = { .ids = SANDBOX_IDS_FULL, .outer_uid = 1000,
	.sub_uid = 100000, .sub_gid = 100000, .sub_count = 65536 };
static const struct sandbox_info single_build = { .ids = SANDBOX_IDS_SINGLE, .outer_uid = 1000 };

static void map_is(const struct sandbox_info *si, int gid, int host, const char *want)
{
	char *m = idshift_nested_map(si, gid, host);

	ck_assert_str_eq(m, want);
	free(m);
}

START_TEST(nested_maps)
{
	/* root: the commands are an unprivileged range, never host root ... */
	map_is(&root_build, 0, 0, "0 2147352576 65536\n");
	map_is(&root_build, 1, 0, "0 3000000 65536\n");
	/* ... but a trusted outside hook keeps root's identity */
	map_is(&root_build, 0, 1, "0 0 4294967295\n");
	/* user: the build namespace's two extents (the user, its range), each within one extent */
	map_is(&user_build, 0, 0, "0 0 1\n1 1 65536\n");
	map_is(&user_build, 1, 1, "0 0 1\n1 1 65536\n");
	map_is(&single_build, 0, 0, "0 0 1\n");
	map_is(&single_build, 1, 0, "0 0 1\n");
}
END_TEST

START_TEST(shift_root_build)
{
	ck_assert_uint_eq(idshift_shift_to_tree(&root_build, 0, 0), 2147352576u);
	ck_assert_uint_eq(idshift_shift_to_tree(&root_build, 42, 1), 3000042u);
	ck_assert_int_eq(idshift_shift_to_inside(&root_build, 2147352576u + 65534, 0), 65534);
	ck_assert_int_eq(idshift_shift_to_inside(&root_build, 3000042u, 1), 42);
	/* set by host root (mkimage, an outside hook): unchanged */
	ck_assert_int_eq(idshift_shift_to_inside(&root_build, 0, 0), 0);
	ck_assert_int_eq(idshift_shift_to_inside(&root_build, 42, 1), 42);
	/* above the commands' range: nobody inside could have set it */
	ck_assert_int_eq(idshift_shift_to_inside(&root_build, 2147352576u + 65536, 0), -1);
	ck_assert_int_eq(idshift_shift_to_inside(&root_build, 4294967294u, 1), -1);
}
END_TEST

START_TEST(shift_identity)
{
	ck_assert_uint_eq(idshift_shift_to_tree(&user_build, 42, 0), 42);
	ck_assert_int_eq(idshift_shift_to_inside(&user_build, 65534, 1), 65534);
	ck_assert_uint_eq(idshift_shift_to_tree(&single_build, 0, 1), 0);
	/* not in a sandbox at all (tools): nothing is shifted */
	ck_assert_uint_eq(idshift_tree_uid(7), 7);
	ck_assert_int_eq(idshift_inside_gid(7), 7);
}
END_TEST

START_TEST(caps_v3_to_v2)
{
	/* cap_net_raw, effective, as a command of a root build leaves it: v3, rootid = base */
	unsigned char v3[24] = { 0x01, 0x00, 0x00, 0x03, 0x00, 0x20, 0x00, 0x00, 0, 0, 0, 0,
				 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0xfe, 0x7f };
	unsigned char want[20] = { 0x01, 0x00, 0x00, 0x02, 0x00, 0x20, 0x00, 0x00 };
	unsigned char other[24];

	memcpy(other, v3, sizeof(v3));
	other[20] = 1; /* a rootid of some deeper namespace: left alone */
	ck_assert_uint_eq(idshift_caps_to_inside(&root_build, other, sizeof(other)), 24);
	ck_assert_uint_eq(idshift_caps_to_inside(&user_build, v3, sizeof(v3)), 24);
	ck_assert_uint_eq(idshift_caps_to_inside(&root_build, v3, sizeof(v3)), 20);
	ck_assert_mem_eq(v3, want, 20);
	/* already v2: unchanged */
	ck_assert_uint_eq(idshift_caps_to_inside(&root_build, v3, 20), 20);
}
END_TEST

START_TEST(tail_lines)
{
	ck_assert_str_eq(sandbox_tail("a\nb\nc\n", 2), "b\nc\n");
	ck_assert_str_eq(sandbox_tail("a\nb\nc", 1), "c");
	ck_assert_str_eq(sandbox_tail("a\nb\nc\n", 10), "a\nb\nc\n");
	ck_assert_str_eq(sandbox_tail("", 3), "");
	ck_assert_str_eq(sandbox_tail(NULL, 3), "");
}
END_TEST

/* The entry binfmt_misc accepts for arm (armel and armhf), and the big-endian layout. */
START_TEST(binfmt_lines)
{
	char *l = sandbox_binfmt_line(arch_find("armhf"), "/usr/bin/qemu-arm-static");

	ck_assert_str_eq(l, ":mkimage-qemu-arm:M::"
			    "\\x7f\\x45\\x4c\\x46\\x01\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
			    "\\x00\\x00\\x02\\x00\\x28\\x00:"
			    "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff"
			    "\\xff\\xff\\xfe\\xff\\xff\\xff:/usr/bin/qemu-arm-static:FP");
	free(l);
	l = sandbox_binfmt_line(arch_find("riscv64"), "/q");
	ck_assert_ptr_nonnull(strstr(l, "\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01"));
	ck_assert_ptr_nonnull(strstr(l, "\\x02\\x00\\xf3\\x00:"));
	free(l);
	l = sandbox_binfmt_line(arch_find("s390x"), "/q");
	ck_assert_ptr_nonnull(strstr(l, "\\x02\\x02\\x01\\x00"));
	ck_assert_ptr_nonnull(strstr(l, "\\x00\\x02\\x00\\x16:")); /* e_type 2, e_machine 22, BE */
	ck_assert_ptr_nonnull(strstr(l, "\\xff\\xfe\\xff\\xff:/q:FP"));
	free(l);
}
END_TEST

/* The maps the helper writes (or hands newuidmap/newgidmap) for each kind of build. */
START_TEST(outer_maps)
{
	static const struct sandbox_info user = { .ids = SANDBOX_IDS_FULL, .outer_uid = 1000,
		.outer_gid = 1001, .sub_uid = 100000, .sub_gid = 200000, .sub_count = 65536 };
	char *m;

	m = sandbox_idmap_text(&user, 0);
	ck_assert_str_eq(m, "0 1000 1\n1 100000 65536\n");
	free(m);
	m = sandbox_idmap_text(&user, 1);
	ck_assert_str_eq(m, "0 1001 1\n1 200000 65536\n");
	free(m);
	m = sandbox_idmap_text(&root_build, 1);
	ck_assert_str_eq(m, "0 0 4294967295\n"); /* root keeps its identity; commands are shifted */
	free(m);
	m = sandbox_idmap_text(&single_build, 0);
	ck_assert_str_eq(m, "0 1000 1\n");
	free(m);
}
END_TEST

static void subid_file(char *path, const char *text)
{
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
}

START_TEST(subid_lookup)
{
	char path[] = "/tmp/mki-unit-subid-XXXXXX";
	unsigned long start = 0, count = 0;

	subid_file(path, "# comment\nbob:x:5\nalice:100000:0\nalice:165536:65536\n"
			 "1002:300000:1000\ncarol:12:34:56\n");
	/* the first usable line for the name: a zero count is skipped */
	ck_assert_int_eq(sandbox_find_subid(path, "alice", 1001, &start, &count), 1);
	ck_assert_uint_eq(start, 165536);
	ck_assert_uint_eq(count, 65536);
	/* by uid when the name has none */
	ck_assert_int_eq(sandbox_find_subid(path, "dave", 1002, &start, &count), 1);
	ck_assert_uint_eq(start, 300000);
	ck_assert_uint_eq(count, 1000);
	ck_assert_int_eq(sandbox_find_subid(path, "bob", 1003, &start, &count), 0); /* malformed */
	ck_assert_int_eq(sandbox_find_subid(path, NULL, 9, &start, &count), 0);
	ck_assert_int_eq(sandbox_find_subid("/nonexistent", "alice", 1, &start, &count), 0);
	unlink(path);
}
END_TEST

Suite *sandbox_suite(void)
{
	Suite *s = suite_create("sandbox");
	TCase *tc = tcase_create("ids");

	tcase_add_test(tc, nested_maps);
	tcase_add_test(tc, shift_root_build);
	tcase_add_test(tc, shift_identity);
	tcase_add_test(tc, caps_v3_to_v2);
	tcase_add_test(tc, tail_lines);
	tcase_add_test(tc, binfmt_lines);
	tcase_add_test(tc, outer_maps);
	tcase_add_test(tc, subid_lookup);
	suite_add_tcase(s, tc);
	return s;
}
