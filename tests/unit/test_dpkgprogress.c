/* dpkg's --status-fd lines as progress: what is taken, what is ignored (hostile input). */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configure/dpkgprogress.h"
#include "lib/str.h"

struct fixture {
	struct plan_entry e[5];
	struct plan p;
	struct dpkgprogress d;
	int null, saved;
};

static void setup(struct fixture *f, int initramfs)
{
	static const char *const names[] = { "libc6", "libc6", "initramfs-tools",
					     "linux-image-6.1.0-9-armmp", "busybox" };
	static const char *const archs[] = { "armhf", "armel", "all", "armhf", "armhf" };

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 5; i++) {
		f->e[i].name = (char *)(uintptr_t)(i == 2 && !initramfs ? "dracut" : names[i]);
		f->e[i].arch = (char *)(uintptr_t)archs[i];
	}
	f->p.v = f->e;
	f->p.n = 5;
	/* without a terminal each item is a line on stderr: keep them out of the test's output */
	f->null = open("/dev/null", O_WRONLY);
	f->saved = dup(2);
	dup2(f->null, 2);
	dpkgprogress_init(&f->d, &f->p);
}

static void teardown(struct fixture *f)
{
	dpkgprogress_release(&f->d);
	dup2(f->saved, 2);
	close(f->saved);
	close(f->null);
}

/* Package N of M and its name; each package counted once; "NAME:ARCH" is that arch's entry. */
START_TEST(counts_packages_once)
{
	struct fixture f;

	setup(&f, 1);
	ck_assert_uint_eq(f.d.bar.total, 5);
	ck_assert_int_eq(dpkgprogress_line(&f.d, "status: libc6:armhf: half-configured"), 1);
	ck_assert_str_eq(f.d.bar.item, "libc6");
	ck_assert_uint_eq(f.d.bar.done, 1);
	ck_assert_int_eq(dpkgprogress_line(&f.d, "status: libc6:armhf: half-configured"), 0);
	ck_assert_int_eq(dpkgprogress_line(&f.d, "status: libc6:armhf: installed"), 1);
	ck_assert_int_eq(dpkgprogress_line(&f.d, "status: libc6:armhf: installed"), 0);
	ck_assert_int_eq(dpkgprogress_line(&f.d, "status: libc6:armel: installed"), 1);
	ck_assert_int_eq(dpkgprogress_line(&f.d, "status: busybox: half-configured"), 1);
	ck_assert_str_eq(f.d.bar.item, "busybox");
	ck_assert_uint_eq(f.d.started, 3);
	ck_assert_uint_eq(f.d.configured, 2);
	ck_assert_uint_eq(f.d.bar.done, 3);
	teardown(&f);
}
END_TEST

/* A kernel's postinst with initramfs-tools in the plan builds an initramfs: it is named. */
START_TEST(names_initramfs)
{
	struct fixture f;

	setup(&f, 1);
	ck_assert_int_eq(dpkgprogress_line(&f.d, "status: linux-image-6.1.0-9-armmp: half-configured"), 1);
	ck_assert_str_eq(f.d.bar.item, "linux-image-6.1.0-9-armmp: update-initramfs for 6.1.0-9-armmp");
	ck_assert_int_eq(dpkgprogress_line(&f.d, "processing: trigproc: initramfs-tools"), 1);
	ck_assert_str_eq(f.d.bar.item, "triggers: update-initramfs");
	ck_assert_int_eq(dpkgprogress_line(&f.d, "processing: trigproc: initramfs-tools"), 0);
	ck_assert_int_eq(dpkgprogress_line(&f.d, "processing: trigproc: busybox"), 1);
	ck_assert_str_eq(f.d.bar.item, "triggers: busybox");
	teardown(&f);
	setup(&f, 0);
	ck_assert_int_eq(dpkgprogress_line(&f.d, "status: linux-image-6.1.0-9-armmp: half-configured"), 1);
	ck_assert_str_eq(f.d.bar.item, "linux-image-6.1.0-9-armmp");
	teardown(&f);
}
END_TEST

/* What the tree's dpkg could write instead: nothing of it is taken or shown. */
START_TEST(ignores_hostile_lines)
{
	static const char *const bad[] = {
		"status: nosuchpkg: half-configured",
		"status: libc6:mips: half-configured",
		"status: Libc6: half-configured",
		"status: libc6\x1b[2J: half-configured",
		"status: libc6 : error : something failed",
		"status: libc6:armhf: unpacked",
		"status: :armhf: half-configured",
		"status: libc6:: half-configured",
		"status: -libc6: half-configured",
		"processing: trigproc: busybox extra",
		"processing: configure: libc6:armhf",
		"status: libc6:armhf half-configured",
		"",
		"random text",
	};
	struct fixture f;
	char *longname = xasprintf("status: %0200d: half-configured", 0);

	setup(&f, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(dpkgprogress_line(&f.d, bad[i]) == 0, "took '%s'", bad[i]);
	ck_assert_int_eq(dpkgprogress_line(&f.d, longname), 0);
	ck_assert_uint_eq(f.d.started, 0);
	ck_assert_uint_eq(f.d.configured, 0);
	ck_assert_str_eq(f.d.bar.item, "");
	free(longname);
	teardown(&f);
}
END_TEST

Suite *dpkgprogress_suite(void)
{
	Suite *s = suite_create("dpkgprogress");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, counts_packages_once);
	tcase_add_test(tc, names_initramfs);
	tcase_add_test(tc, ignores_hostile_lines);
	suite_add_tcase(s, tc);
	return s;
}
