#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/settings.h"

static void quiet(void)
{
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	close(fd);
}

START_TEST(defaults)
{
	struct settings st = { 0 };

	unsetenv("MKIMAGE_APT_ROOT");
	unsetenv("MKIMAGE_STALL_TIMEOUT");
	unsetenv("MKI_TEST_STREAM_BYTES");
	unsetenv("MKIMAGE_REGISTRY_GRACE");
	unsetenv("MKIMAGE_REGISTRY_MIN_RATE");
	unsetenv("MKIMAGE_REGISTRY_TOKEN_HOSTS");
	st.jobs = 3;
	settings_read_env(&st);
	ck_assert_str_eq(st.apt_root, "/etc/apt");
	ck_assert_int_eq(st.stall_timeout, 30);
	ck_assert_int_eq(st.registry_grace, 60);
	ck_assert_uint_eq(st.registry_min_rate, 1u << 20);
	ck_assert_ptr_null(st.registry_token_hosts);
	ck_assert_uint_eq(st.stream_over, 32ull << 20);
	ck_assert_uint_eq(st.jobs, 3); /* the command line's fields are left alone */
	settings_release_env(&st);
	ck_assert_ptr_null(st.apt_root);
}
END_TEST

START_TEST(from_environment)
{
	struct settings st = { 0 };

	setenv("MKIMAGE_APT_ROOT", "/srv/apt", 1);
	setenv("MKIMAGE_STALL_TIMEOUT", "3600", 1);
	setenv("MKI_TEST_STREAM_BYTES", "1", 1);
	setenv("MKIMAGE_REGISTRY_GRACE", "5", 1);
	setenv("MKIMAGE_REGISTRY_MIN_RATE", "100M", 1);
	setenv("MKIMAGE_REGISTRY_TOKEN_HOSTS", "auth.example,http://127.0.0.1:5001", 1);
	settings_read_env(&st);
	ck_assert_str_eq(st.apt_root, "/srv/apt");
	ck_assert_int_eq(st.stall_timeout, 3600);
	ck_assert_int_eq(st.registry_grace, 5);
	ck_assert_uint_eq(st.registry_min_rate, 100u << 20);
	ck_assert_str_eq(st.registry_token_hosts, "auth.example,http://127.0.0.1:5001");
	ck_assert_uint_eq(st.stream_over, 1);
	/* Read again: the new values replace the old ones (nothing leaks under ASan). */
	setenv("MKIMAGE_APT_ROOT", "", 1);
	setenv("MKIMAGE_STALL_TIMEOUT", "1", 1);
	setenv("MKIMAGE_REGISTRY_MIN_RATE", "512", 1);
	setenv("MKIMAGE_REGISTRY_TOKEN_HOSTS", "", 1);
	settings_read_env(&st);
	ck_assert_str_eq(st.apt_root, "/etc/apt");
	ck_assert_int_eq(st.stall_timeout, 1);
	ck_assert_uint_eq(st.registry_min_rate, 512);
	ck_assert_ptr_null(st.registry_token_hosts);
	settings_release_env(&st);
}
END_TEST

/* An invalid stall timeout is one warning and the default. */
static const char *const bad_stalls[] = { "0", "3601", "-5", "10s", "ten", "5 " };

START_TEST(bad_stall_timeout)
{
	struct settings st = { 0 };
	unsigned warnings;

	quiet();
	warnings = log_warning_count();
	setenv("MKIMAGE_STALL_TIMEOUT", bad_stalls[_i], 1);
	settings_read_env(&st);
	ck_assert_int_eq(st.stall_timeout, 30);
	ck_assert_uint_eq(log_warning_count(), warnings + 1);
	settings_release_env(&st);
}
END_TEST

/* An invalid registry bound is one warning and the default, the other bound left alone. */
static const struct {
	const char *grace, *rate;
} bad_bounds[] = {
	{ "0", "1M" }, { "3601", "1M" }, { "1m", "1M" }, { "", "0" }, { "", "-1" }, { "", "1 M" },
	{ "", "fast" }, { "", "1X" }, { "", "1Mbit" },
};

START_TEST(bad_registry_bounds)
{
	struct settings st = { 0 };
	unsigned warnings;

	quiet();
	warnings = log_warning_count();
	setenv("MKIMAGE_REGISTRY_GRACE", bad_bounds[_i].grace, 1);
	setenv("MKIMAGE_REGISTRY_MIN_RATE", bad_bounds[_i].rate, 1);
	settings_read_env(&st);
	ck_assert_int_eq(st.registry_grace, 60);
	ck_assert_uint_eq(st.registry_min_rate, 1u << 20);
	ck_assert_uint_eq(log_warning_count(), warnings + 1);
	settings_release_env(&st);
}
END_TEST

Suite *settings_suite(void)
{
	Suite *s = suite_create("settings");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, defaults);
	tcase_add_test(tc, from_environment);
	tcase_add_loop_test(tc, bad_stall_timeout, 0, sizeof(bad_stalls) / sizeof(bad_stalls[0]));
	tcase_add_loop_test(tc, bad_registry_bounds, 0, sizeof(bad_bounds) / sizeof(bad_bounds[0]));
	suite_add_tcase(s, tc);
	return s;
}
