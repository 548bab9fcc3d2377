#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debian/arch.h"
#include "debian/arch_internal.h"

/* Ask dpkg-architecture itself; the table must agree with it for every entry. */
static void dpkg_query(const char *arch, const char *var, char *out, size_t n)
{
	char cmd[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "dpkg-architecture -a%s -q%s 2>/dev/null", arch, var);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	out[0] = 0;
	if (!fgets(out, (int)n, p))
		out[0] = 0;
	out[strcspn(out, "\n")] = 0;
	pclose(p);
}

START_TEST(table_matches_dpkg)
{
	const struct arch *a;
	char got[128];
	int n = 0;

	for (a = arch_table(); a->name; a++, n++) {
		dpkg_query(a->name, "DEB_HOST_MULTIARCH", got, sizeof(got));
		ck_assert_msg(!strcmp(got, a->triplet), "%s: triplet %s, dpkg says %s", a->name,
			      a->triplet, got);
		dpkg_query(a->name, "DEB_HOST_GNU_CPU", got, sizeof(got));
		ck_assert_msg(!strcmp(got, a->gnu_cpu), "%s: cpu %s, dpkg says %s", a->name, a->gnu_cpu,
			      got);
		dpkg_query(a->name, "DEB_HOST_ARCH_BITS", got, sizeof(got));
		ck_assert_int_eq(atoi(got), a->bits);
		dpkg_query(a->name, "DEB_HOST_ARCH_ENDIAN", got, sizeof(got));
		ck_assert_str_eq(got, a->elf_data == 1 ? "little" : "big");
	}
	ck_assert_int_ge(n, 11);
}
END_TEST

START_TEST(lookup_and_suggest)
{
	ck_assert_str_eq(arch_find("armel")->triplet, "arm-linux-gnueabi");
	ck_assert_str_eq(arch_by_triplet("arm-linux-gnueabihf")->name, "armhf");
	ck_assert_ptr_null(arch_find("all"));
	ck_assert_ptr_null(arch_find("armhff"));
	ck_assert_str_eq(arch_suggest("armhff"), "armhf");
	ck_assert_str_eq(arch_suggest("amd46"), "amd64");
	ck_assert_ptr_null(arch_suggest("zzzzzzzzz"));
}
END_TEST

/* Other tools' names map to Debian's, each to one that exists; Debian's own names map to none. */
START_TEST(other_tools_names)
{
	static const char *const pairs[][2] = {
		{ "armv7", "armhf" },	    { "armv7l", "armhf" },
		{ "armv7hl", "armhf" },	    { "arm-linux-gnueabihf", "armhf" },
		{ "armv7l-linux-gnueabihf", "armhf" }, { "armv7-unknown-linux-gnueabihf", "armhf" },
		{ "armv5", "armel" },	    { "armv5tel", "armel" },
		{ "arm-linux-gnueabi", "armel" }, { "armv7-linux-gnueabi", "armel" },
		{ "aarch64", "arm64" },	    { "arm64-v8a", "arm64" },
		{ "aarch64-linux-gnu", "arm64" }, { "aarch64-unknown-linux-gnu", "arm64" },
		{ "x86_64", "amd64" },	    { "x86-64", "amd64" },
		{ "x86_64-linux-gnu", "amd64" }, { "x86_64-pc-linux-gnu", "amd64" },
		{ "i686", "i386" },	    { "i586", "i386" },
		{ "i686-linux-gnu", "i386" }, { "i386-linux-gnu", "i386" },
		{ "riscv64-linux-gnu", "riscv64" }, { "ppc64le", "ppc64el" },
		{ "x86_64-linux-gnux32", "x32" },
	};
	const struct arch *a;
	size_t i;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		ck_assert_msg(arch_debian_name(pairs[i][0]) != NULL, "%s", pairs[i][0]);
		ck_assert_str_eq(arch_debian_name(pairs[i][0]), pairs[i][1]);
		ck_assert_ptr_nonnull(arch_find(arch_debian_name(pairs[i][0])));
	}
	for (a = arch_table(); a->name; a++)
		ck_assert_ptr_null(arch_debian_name(a->name));
	ck_assert_ptr_null(arch_debian_name("arm"));
	ck_assert_ptr_null(arch_debian_name("armhff"));
	ck_assert_ptr_null(arch_debian_name("sparc99-linux-gnu"));
	ck_assert_ptr_null(arch_debian_name(""));
}
END_TEST

START_TEST(armel_armhf_differ_only_in_float_abi)
{
	const struct arch *hf = arch_find("armhf"), *el = arch_find("armel");

	ck_assert_int_eq(hf->elf_machine, el->elf_machine);
	ck_assert_int_eq(hf->eflags_mask, el->eflags_mask);
	ck_assert_int_ne(hf->eflags_value, el->eflags_value);
	ck_assert_str_eq(hf->qemu, "qemu-arm");
}
END_TEST

START_TEST(host_is_native)
{
	const struct arch *h = arch_find(arch_host());

	ck_assert_ptr_nonnull(h);
	ck_assert(arch_runs_natively(h));
	ck_assert(!arch_runs_natively(arch_find("s390x")) || !strcmp(arch_host(), "s390x"));
}
END_TEST

Suite *arch_suite(void)
{
	Suite *s = suite_create("arch");
	TCase *tc = tcase_create("core");

	/* dpkg-architecture is a perl program run ~80 times: slow on a loaded CI machine. */
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, table_matches_dpkg);
	tcase_add_test(tc, lookup_and_suggest);
	tcase_add_test(tc, other_tools_names);
	tcase_add_test(tc, armel_armhf_differ_only_in_float_abi);
	tcase_add_test(tc, host_is_native);
	suite_add_tcase(s, tc);
	return s;
}
