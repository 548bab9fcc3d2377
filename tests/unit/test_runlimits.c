#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/log.h"
#include "lib/runlimits.h"
#include "lib/runlimits_internal.h"
#include "lib/str.h"

static uint64_t parse(enum limit_id id, const char *s)
{
	uint64_t v = 0;

	ck_assert_msg(!runlimits_parse_value(id, s, &v), "'%s' refused", s);
	return v;
}

static void refused(enum limit_id id, const char *s)
{
	uint64_t v = 12345;

	ck_assert_msg(runlimits_parse_value(id, s, &v) == -MKI_E_USAGE, "'%s' accepted", s);
	ck_assert_uint_eq(v, 12345); /* untouched */
}

START_TEST(sizes)
{
	ck_assert_uint_eq(parse(LIMIT_DEB_DATA, "1"), 1);
	ck_assert_uint_eq(parse(LIMIT_DEB_DATA, "4096"), 4096);
	ck_assert_uint_eq(parse(LIMIT_DEB_DATA, "1k"), 1024);
	ck_assert_uint_eq(parse(LIMIT_DEB_DATA, "512M"), 512ull << 20);
	ck_assert_uint_eq(parse(LIMIT_DEB_DATA, "512MB"), 512ull << 20);
	ck_assert_uint_eq(parse(LIMIT_DEB_DATA, "512MiB"), 512ull << 20);
	ck_assert_uint_eq(parse(LIMIT_DEB_DATA, "4G"), 4ull << 30);
	ck_assert_uint_eq(parse(LIMIT_DEB_DATA, "4g"), 4ull << 30);
	ck_assert_uint_eq(parse(LIMIT_DEB_DATA, "2T"), 2ull << 40);
	ck_assert_uint_eq(parse(LIMIT_LINE, "64K"), 65536);
	/* The same units for other settings (MKIMAGE_REGISTRY_MIN_RATE). */
	{
		uint64_t v = 0;

		ck_assert_int_eq(runlimits_parse_size("100M", &v), 0);
		ck_assert_uint_eq(v, 100ull << 20);
		ck_assert_int_eq(runlimits_parse_size("1", &v), 0);
		ck_assert_uint_eq(v, 1);
	}
}
END_TEST

START_TEST(counts)
{
	ck_assert_uint_eq(parse(LIMIT_DEB_ENTRIES, "1"), 1);
	ck_assert_uint_eq(parse(LIMIT_DEB_ENTRIES, "1000000"), 1000000);
	ck_assert_uint_eq(parse(LIMIT_RELATIONS, "200000"), 200000);
	ck_assert_uint_eq(parse(LIMIT_FIELDS, "1000000000"), 1000000000);
}
END_TEST

START_TEST(bad_values)
{
	static const char *const bad_sizes[] = { "", "0", "0M", "-1", "+1", " 1", "1 ", "M",
		"1X", "1MM", "1Mi", "1.5G", "0x10", "1e6", "99999999999999999999",
		"5000000T", "18446744073709551615", NULL };
	static const char *const bad_counts[] = { "", "0", "-5", "1k", "1M", "10 000", "1.0",
		"1000000001", NULL };
	int i;

	for (i = 0; bad_sizes[i]; i++) {
		uint64_t v = 12345;

		refused(LIMIT_INDEX_UNPACKED, bad_sizes[i]);
		ck_assert_msg(runlimits_parse_size(bad_sizes[i], &v) == -MKI_E_USAGE && v == 12345,
			      "'%s' accepted as a size", bad_sizes[i]);
	}
	for (i = 0; bad_counts[i]; i++)
		refused(LIMIT_DEB_ENTRIES, bad_counts[i]);
}
END_TEST

START_TEST(set_by_name)
{
	struct limits l;

	log_set_level(LOG_QUIET);
	runlimits_init(&l);
	ck_assert_int_eq(runlimits_set(&l, "deb-data=2G"), 0);
	ck_assert_uint_eq(l.v[LIMIT_DEB_DATA], 2ull << 30);
	ck_assert_int_eq(runlimits_set(&l, "deb-entries=10000"), 0);
	ck_assert_uint_eq(runlimits_get(&l, LIMIT_DEB_ENTRIES), 10000);
	/* the last one wins */
	ck_assert_int_eq(runlimits_set(&l, "deb-entries=20000"), 0);
	ck_assert_uint_eq(runlimits_get(&l, LIMIT_DEB_ENTRIES), 20000);
	ck_assert_int_eq(runlimits_set(&l, "deb-dat=2G"), -MKI_E_USAGE);
	ck_assert_int_eq(runlimits_set(&l, "nosuch=1"), -MKI_E_USAGE);
	ck_assert_int_eq(runlimits_set(&l, "deb-data"), -MKI_E_USAGE);
	ck_assert_int_eq(runlimits_set(&l, "=1"), -MKI_E_USAGE);
	ck_assert_int_eq(runlimits_set(&l, "deb-data=0"), -MKI_E_USAGE);
	ck_assert_int_eq(runlimits_set(&l, "Deb-Data=1G"), -MKI_E_USAGE); /* names are exact */
	ck_assert_uint_eq(l.v[LIMIT_DEB_DATA], 2ull << 30);            /* failures change nothing */
	ck_assert_int_eq(runlimits_find("staging-entries"), LIMIT_STAGING_ENTRIES);
	ck_assert_int_eq(runlimits_find("staging"), -1);
}
END_TEST

START_TEST(defaults_and_zero)
{
	struct limits l, zero;
	int i;

	runlimits_init(&l);
	memset(&zero, 0, sizeof(zero));
	for (i = 0; i < LIMIT_N; i++) {
		ck_assert_uint_gt(l.v[i], 0);
		ck_assert_uint_eq(runlimits_get(&zero, (enum limit_id)i), l.v[i]);
		ck_assert_uint_eq(runlimits_get(NULL, (enum limit_id)i), l.v[i]);
		ck_assert_int_eq(runlimits_find(runlimits_name((enum limit_id)i)), i);
	}
	/* margins over bookworm, as mkimage(7), LIMITS, states them */
	ck_assert_uint_ge(l.v[LIMIT_INDEX_UNPACKED], 1ull << 30);
	ck_assert_uint_ge(l.v[LIMIT_DEB_DATA], 32ull << 30);
	ck_assert_uint_ge(l.v[LIMIT_RELATIONS], 10000);
}
END_TEST

START_TEST(format_round_trips)
{
	static const uint64_t vals[] = { 1, 1000, 1024, 1536, 64ull << 20, 3ull << 30,
					  (1ull << 40) + 1, 5ull << 40 };
	struct buf help = { 0 };
	size_t i;

	ck_assert_str_eq(runlimits_format(LIMIT_DEB_DATA, 32ull << 30).s, "32G");
	ck_assert_str_eq(runlimits_format(LIMIT_DEB_DATA, 1536).s, "1536");
	ck_assert_str_eq(runlimits_format(LIMIT_DEB_DATA, 1536 * 1024).s, "1536K");
	ck_assert_str_eq(runlimits_format(LIMIT_DEB_ENTRIES, 1024).s, "1024"); /* counts stay plain */
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		ck_assert_uint_eq(parse(LIMIT_DEB_DATA, runlimits_format(LIMIT_DEB_DATA, vals[i]).s),
				  vals[i]);
	ck_assert_str_eq(runlimits_hint(NULL, LIMIT_DEB_ENTRIES).s,
			 "limit 'deb-entries' is 500000; raise it with --limit deb-entries=COUNT "
			 "if the source is trusted");
	runlimits_help(&help);
	for (i = 0; i < LIMIT_N; i++)
		ck_assert_ptr_nonnull(strstr(help.p, runlimits_name((enum limit_id)i)));
	buf_release(&help);
}
END_TEST

Suite *runlimits_suite(void)
{
	Suite *s = suite_create("runlimits");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sizes);
	tcase_add_test(tc, counts);
	tcase_add_test(tc, bad_values);
	tcase_add_test(tc, set_by_name);
	tcase_add_test(tc, defaults_and_zero);
	tcase_add_test(tc, format_round_trips);
	suite_add_tcase(s, tc);
	return s;
}
