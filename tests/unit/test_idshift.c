#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/idshift.h"
#include "sandbox/sandbox.h"
#include "sandbox/idshift_internal.h"
#include "sandbox/sandbox_int.h"
#include "sandboxed.h"

/* A root build whose uid and gid ranges differ, as root's /etc/subuid and /etc/subgid may. */
static const struct sandbox_info root_split = { .ids = SANDBOX_IDS_ROOT, .sub_uid = 500000,
	.sub_gid = 700000, .sub_count = 1000 };
static const struct sandbox_info user_small = { .ids = SANDBOX_IDS_FULL, .outer_uid = 1000,
	.outer_gid = 1000, .sub_uid = 100000, .sub_gid = 200000, .sub_count = 1000 };

START_TEST(root_build_shifts_each_range_by_its_own_base)
{
	ck_assert_uint_eq(idshift_shift_to_tree(&root_split, 0, 0), 500000);
	ck_assert_uint_eq(idshift_shift_to_tree(&root_split, 0, 1), 700000);
	ck_assert_uint_eq(idshift_shift_to_tree(&root_split, 999, 1), 700999);
	ck_assert_int_eq(idshift_shift_to_inside(&root_split, 500999, 0), 999);
	ck_assert_int_eq(idshift_shift_to_inside(&root_split, 700000, 1), 0);
	/* the last id of the range, and the first beyond it */
	ck_assert_int_eq(idshift_shift_to_inside(&root_split, 500000 + 999, 0), 999);
	ck_assert_int_eq(idshift_shift_to_inside(&root_split, 500000 + 1000, 0), -1);
	ck_assert_int_eq(idshift_shift_to_inside(&root_split, 700000 + 1000, 1), -1);
	/* below the base: host root wrote it; a uid in the gid range is just a low uid */
	ck_assert_int_eq(idshift_shift_to_inside(&root_split, 499999, 0), 499999);
	ck_assert_int_eq(idshift_shift_to_inside(&root_split, 600000, 1), 600000);
	/* a shift and back is the identity over the whole range */
	for (unsigned long id = 0; id < 1000; id += 37) {
		unsigned long tree = idshift_shift_to_tree(&root_split, id, 1);

		ck_assert_int_eq(idshift_shift_to_inside(&root_split, tree, 1), (long)id);
	}
}
END_TEST

START_TEST(only_root_builds_shift)
{
	ck_assert_uint_eq(idshift_shift_to_tree(&user_small, 5, 1), 5);
	ck_assert_int_eq(idshift_shift_to_inside(&user_small, 100005, 0), 100005);
	ck_assert_uint_eq(idshift_shift_to_tree(NULL, 5, 0), 5);
}
END_TEST

START_TEST(nested_maps_follow_the_range)
{
	char *m;

	m = idshift_nested_map(&root_split, 0, 0);
	ck_assert_str_eq(m, "0 500000 1000\n");
	free(m);
	m = idshift_nested_map(&root_split, 1, 0);
	ck_assert_str_eq(m, "0 700000 1000\n");
	free(m);
	m = idshift_nested_map(&root_split, 1, 1);
	ck_assert_str_eq(m, "0 0 4294967295\n");
	free(m);
	/* a user build never maps the outer ids: the build namespace's own, as two extents */
	m = idshift_nested_map(&user_small, 1, 0);
	ck_assert_str_eq(m, "0 0 1\n1 1 1000\n");
	free(m);
	m = idshift_nested_map(&user_small, 0, 1);
	ck_assert_str_eq(m, "0 0 1\n1 1 1000\n");
	free(m);
}
END_TEST

/* v3 -> v2 keeps every capability bit and the effective flag; only the revision changes. */
START_TEST(caps_keep_their_bits)
{
	unsigned char v3[24] = { 0x01, 0x00, 0x00, 0x03, 0x00, 0x30, 0x00, 0x00, 0x04, 0, 0, 0,
				 0x01, 0x00, 0x00, 0x00, 0x02, 0, 0, 0, 0x20, 0xa1, 0x07, 0x00 };
	unsigned char want[24];

	memcpy(want, v3, sizeof(v3));
	want[3] = 0x02;
	ck_assert_uint_eq(idshift_caps_to_inside(&root_split, v3, 24), 20); /* rootid 500000 */
	ck_assert_mem_eq(v3, want, 20);
}
END_TEST

START_TEST(caps_left_alone)
{
	unsigned char v3[24] = { 0x00, 0x00, 0x00, 0x03, 0x00, 0x20, 0, 0, 0, 0, 0, 0,
				 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0xa1, 0x07, 0x00 };
	unsigned char copy[24];

	memcpy(copy, v3, sizeof(v3));
	/* another rootid, another length, another revision: untouched */
	v3[22] = 0x0a; /* rootid 0x0aa120: some other namespace's */
	ck_assert_uint_eq(idshift_caps_to_inside(&root_split, v3, 24), 24);
	v3[22] = 0x07;
	ck_assert_uint_eq(idshift_caps_to_inside(&root_split, v3, 23), 23);
	v3[3] = 0x02;
	ck_assert_uint_eq(idshift_caps_to_inside(&root_split, v3, 24), 24);
	v3[3] = 0x03;
	ck_assert_mem_eq(v3, copy, 24);
	ck_assert_uint_eq(idshift_caps_to_inside(&user_small, v3, 24), 24);
	ck_assert_uint_eq(idshift_caps_to_inside(NULL, v3, 24), 24);
	ck_assert_mem_eq(v3, copy, 24);
}
END_TEST

/* Outside any sandbox (the tools): what is on disk is what a command sees. */
START_TEST(no_sandbox_no_shift)
{
	ck_assert_ptr_null(sandbox_get());
	ck_assert_uint_eq(idshift_tree_uid(0), 0);
	ck_assert_uint_eq(idshift_tree_gid(42), 42);
	ck_assert_int_eq(idshift_inside_uid(2147352576u), 2147352576);
	ck_assert_int_eq(idshift_inside_gid(65534), 65534);
}
END_TEST

/* In the build namespace, the process-wide helpers shift by what sandbox_enter() chose. */
START_TEST(entered_sandbox_shifts_as_it_chose)
{
	const struct sandbox_info *si;

	unit_sandbox_enter();
	si = sandbox_get();
	ck_assert_ptr_nonnull(si);
	if (si->ids == SANDBOX_IDS_ROOT) {
		ck_assert_uint_eq(idshift_tree_uid(0), si->sub_uid);
		ck_assert_uint_eq(idshift_tree_gid(5), si->sub_gid + 5);
		ck_assert_int_eq(idshift_inside_uid(si->sub_uid + 65534), 65534);
		ck_assert_int_eq(idshift_inside_gid(si->sub_gid + si->sub_count), -1);
		ck_assert_int_eq(idshift_inside_uid(0), 0);
	} else {
		ck_assert_uint_eq(idshift_tree_uid(7), 7);
		ck_assert_uint_eq(idshift_tree_gid(5), 5);
		ck_assert_int_eq(idshift_inside_uid(65534), 65534);
	}
}
END_TEST

Suite *idshift_suite(void)
{
	Suite *s = suite_create("idshift");
	TCase *tc = tcase_create("idshift");

	tcase_add_test(tc, root_build_shifts_each_range_by_its_own_base);
	tcase_add_test(tc, only_root_builds_shift);
	tcase_add_test(tc, nested_maps_follow_the_range);
	tcase_add_test(tc, caps_keep_their_bits);
	tcase_add_test(tc, caps_left_alone);
	tcase_add_test(tc, no_sandbox_no_shift);
	UNIT_ADD_SANDBOXED(tc, entered_sandbox_shifts_as_it_chose);
	suite_add_tcase(s, tc);
	return s;
}
