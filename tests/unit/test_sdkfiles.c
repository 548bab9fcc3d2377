/*
 * The SDK's ready-to-use files (configure/sdkfiles.c): each names its target's triplet and finds
 * the SDK relative to itself (no absolute path of the machine that made it); sdk/hostlibs links
 * the SDK's host libraries but never the C library's.
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/sdkfiles.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/x.h"

static char dir[] = "/tmp/mkimage-sdkfiles-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	log_set_level(LOG_QUIET);
}

static void teardown(void)
{
	fsutil_remove_tree(dir);
}

/*
 * No absolute path but the interpreter's: every other path starts at the SDK's root (" / " is
 * Meson's join).
 */
static void assert_relative(const char *text)
{
	const char *p;

	for (p = strstr(text, " /"); p; p = strstr(p + 1, " /"))
		ck_assert_msg(!strncmp(p, " /bin/sh", 8) || !strncmp(p, " / ", 3),
			      "absolute path in: %.40s", p);
	ck_assert_ptr_null(strstr(text, "\"/"));
	ck_assert_ptr_null(strstr(text, "'/"));
	ck_assert_ptr_null(strstr(text, "=/"));
}

START_TEST(texts_name_the_target_relative_to_the_sdk)
{
	const struct arch *armhf = arch_find("armhf");
	struct buf b = { 0 };

	sdkfiles_env(armhf, "2.36", &b);
	ck_assert_ptr_nonnull(strstr(b.p, "export CC=arm-linux-gnueabihf-gcc "));
	ck_assert_ptr_nonnull(strstr(b.p, "$MKIMAGE_SDK/sdk/cmake/arm-linux-gnueabihf.cmake"));
	ck_assert_ptr_nonnull(strstr(b.p, "printf '%s\\n' 2.36 "));
	assert_relative(b.p);
	buf_release(&b);
	sdkfiles_cmake(armhf, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "set(CMAKE_SYSROOT \"${MKIMAGE_SDK}\")"));
	ck_assert_ptr_nonnull(strstr(b.p, "set(CMAKE_LIBRARY_ARCHITECTURE arm-linux-gnueabihf)"));
	ck_assert_ptr_nonnull(strstr(b.p, "${CMAKE_CURRENT_LIST_DIR}/../.."));
	assert_relative(b.p);
	buf_release(&b);
	sdkfiles_meson(armhf, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "c = 'arm-linux-gnueabihf-gcc'"));
	ck_assert_ptr_nonnull(strstr(b.p, "pkg-config = 'arm-linux-gnueabihf-pkg-config'"));
	ck_assert_ptr_nonnull(strstr(b.p, "cpu_family = 'arm'"));
	ck_assert_ptr_nonnull(strstr(b.p, "endian = 'little'"));
	assert_relative(b.p);
	buf_release(&b);
	sdkfiles_wrapper(armhf, "gcc", 1, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "exec \"$sdk/usr/bin/arm-linux-gnueabihf-gcc\" "
				     "--sysroot=\"$sdk\" \"$@\""));
	assert_relative(b.p);
	buf_release(&b);
	sdkfiles_wrapper(armhf, "ld", 0, &b);
	ck_assert_ptr_null(strstr(b.p, "--sysroot"));
	buf_release(&b);
	sdkfiles_pkgconfig(arch_find("armel"), &b);
	ck_assert_ptr_nonnull(strstr(b.p, "PKG_CONFIG_LIBDIR=$sdk/usr/lib/arm-linux-gnueabi/pkgconfig:"));
	ck_assert_ptr_nonnull(strstr(b.p, "PKG_CONFIG_SYSROOT_DIR=$sdk\n"));
	assert_relative(b.p);
	buf_release(&b);
}
END_TEST

START_TEST(meson_families_and_libc_names)
{
	char *t = sdkfiles_relative_target("usr/lib/t/libz.so", "/lib/t/libz.so.1");

	ck_assert_str_eq(t, "../../../lib/t/libz.so.1");
	free(t);
	t = sdkfiles_relative_target("lib64", "/usr/lib64");
	ck_assert_str_eq(t, "usr/lib64");
	free(t);
	t = sdkfiles_relative_target("etc/x", "/");
	ck_assert_str_eq(t, "../");
	free(t);
	t = sdkfiles_relative_target("x", "/");
	ck_assert_str_eq(t, ".");
	free(t);
	ck_assert_str_eq(sdkfiles_meson_cpu_family(arch_find("i386")), "x86");
	ck_assert_str_eq(sdkfiles_meson_cpu_family(arch_find("ppc64el")), "ppc64");
	ck_assert_str_eq(sdkfiles_meson_cpu_family(arch_find("arm64")), "aarch64");
	ck_assert_int_eq(sdkfiles_is_libc("libc.so.6"), 1);
	ck_assert_int_eq(sdkfiles_is_libc("libm.so.6"), 1);
	ck_assert_int_eq(sdkfiles_is_libc("ld-linux-x86-64.so.2"), 1);
	ck_assert_int_eq(sdkfiles_is_libc("libnss_files.so.2"), 1);
	ck_assert_int_eq(sdkfiles_is_libc("libmpc.so.3"), 0);
	ck_assert_int_eq(sdkfiles_is_libc("libmpfr.so.6"), 0);
	ck_assert_int_eq(sdkfiles_is_libc("libbfd-2.40-armhf.so"), 0);
}
END_TEST

static void touch(const char *rel)
{
	char *p = xasprintf("%s/root/%s", dir, rel);

	ck_assert_int_eq(fsutil_write_atomic(p, "x", 1), 0);
	free(p);
}

/* Written into a tree: every file, in the manifest; hostlibs without the C library. */
START_TEST(write_into_tree)
{
	const struct arch *host = arch_find(arch_host());
	struct staging s = { 0 };
	struct strv targets = { 0 };
	char *libdir, *p, link[256];
	const struct manifest_entry *e;
	ssize_t n;

	ck_assert_ptr_nonnull(host);
	libdir = xasprintf("%s/root/usr/lib/%s", dir, host->triplet);
	ck_assert_int_eq(fsutil_mkdirs(libdir), 0);
	p = xasprintf("usr/lib/%s/libmpc.so.3", host->triplet);
	touch(p);
	free(p);
	p = xasprintf("usr/lib/%s/libc.so.6", host->triplet);
	touch(p);
	free(p);
	s.root = xasprintf("%s/root", dir);
	manifest_init(&s.manifest);
	p = xasprintf("%s/libz.so", libdir);
	ck_assert_int_eq(symlink("/lib/x/libz.so.1", p), 0);
	free(p);
	p = xasprintf("usr/lib/%s/libz.so", host->triplet);
	manifest_add(&s.manifest, p)->type = MF_SYMLINK;
	manifest_get(&s.manifest, p)->target = xstrdup("/lib/x/libz.so.1");
	free(p);
	strv_push(&targets, "armhf");
	strv_push(&targets, "armel");
	ck_assert_int_eq(sdkfiles_write(&s, &targets, "2.36", 1700000000), 0);
	e = manifest_get(&s.manifest, "sdk/bin/arm-linux-gnueabi-pkg-config");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->type, MF_REG);
	ck_assert_uint_eq(e->mode, 0755);
	ck_assert_int_eq(e->mtime, 1700000000);
	ck_assert_ptr_nonnull(manifest_get(&s.manifest, "environment-setup-arm-linux-gnueabihf"));
	ck_assert_ptr_nonnull(manifest_get(&s.manifest, "sdk/meson/arm-linux-gnueabi.ini"));
	ck_assert_ptr_nonnull(manifest_get(&s.manifest, "sdk/cmake/arm-linux-gnueabihf.cmake"));
	ck_assert_ptr_null(manifest_get(&s.manifest, "sdk/hostlibs/libc.so.6"));
	e = manifest_get(&s.manifest, "sdk/hostlibs/libmpc.so.3");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->type, MF_SYMLINK);
	p = xasprintf("../../usr/lib/%s/libmpc.so.3", host->triplet);
	ck_assert_str_eq(e->target, p);
	free(p);
	p = xasprintf("%s/sdk/hostlibs/libmpc.so.3", s.root);
	n = readlink(p, link, sizeof(link) - 1);
	ck_assert_int_gt(n, 0);
	link[n] = 0;
	ck_assert_str_eq(link, e->target);
	free(p);
	p = xasprintf("usr/lib/%s/libz.so", host->triplet);
	ck_assert_str_eq(manifest_get(&s.manifest, p)->target, "../../../lib/x/libz.so.1");
	free(p);
	p = xasprintf("%s/libz.so", libdir);
	n = readlink(p, link, sizeof(link) - 1);
	ck_assert_int_gt(n, 0);
	link[n] = 0;
	ck_assert_str_eq(link, "../../../lib/x/libz.so.1");
	free(p);
	free(libdir);
	strv_release(&targets);
	manifest_release(&s.manifest);
	free(s.root);
}
END_TEST

Suite *sdkfiles_suite(void)
{
	Suite *s = suite_create("sdkfiles");
	TCase *tc = tcase_create("sdkfiles");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, texts_name_the_target_relative_to_the_sdk);
	tcase_add_test(tc, meson_families_and_libc_names);
	tcase_add_test(tc, write_into_tree);
	suite_add_tcase(s, tc);
	return s;
}
