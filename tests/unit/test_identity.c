#include <check.h>
#include <string.h>

#include "configure/identity.h"

START_TEST(fstab)
{
	struct buf b = { 0 };

	identity_fstab("arm-board", &b);
	ck_assert_ptr_nonnull(strstr(b.p, "\nLABEL=arm-board\t/\text4\terrors=remount-ro\t0\t1\n"));
	buf_release(&b);
	identity_fstab("my root\\x", &b);
	ck_assert_ptr_nonnull(strstr(b.p, "\nLABEL=my\\040root\\134x\t/\t"));
	buf_release(&b);
	identity_fstab("a\033[2J\r\x7f", &b); /* control bytes escaped: mount reads the label back */
	ck_assert_ptr_nonnull(strstr(b.p, "\nLABEL=a\\033[2J\\015\\177\t/\t"));
	buf_release(&b);
}
END_TEST

START_TEST(hosts)
{
	struct buf b = { 0 };

	identity_hosts(NULL, "board", &b);
	ck_assert(!strncmp(b.p, "127.0.0.1\tlocalhost\n127.0.1.1\tboard\n\n", 37));
	ck_assert_ptr_nonnull(strstr(b.p, "::1     localhost ip6-localhost ip6-loopback\n"));
	buf_release(&b);
	/* an old name is replaced where it was, comments and other lines kept */
	identity_hosts("# mine\n127.0.0.1 localhost\n127.0.1.1 old old.local\n10.0.0.1 nas", "new",
		       &b);
	ck_assert_str_eq(b.p, "# mine\n127.0.0.1 localhost\n127.0.1.1\tnew\n10.0.0.1 nas\n");
	buf_release(&b);
	/* without a 127.0.0.1 line the name goes first */
	identity_hosts("::1 localhost\n", "x", &b);
	ck_assert_str_eq(b.p, "127.0.1.1\tx\n::1 localhost\n");
	buf_release(&b);
	/* 127.0.1.10 is another address */
	identity_hosts("127.0.0.1\tlocalhost\n127.0.1.10\tother\n", "x", &b);
	ck_assert_str_eq(b.p, "127.0.0.1\tlocalhost\n127.0.1.1\tx\n127.0.1.10\tother\n");
	buf_release(&b);
	/* hosts(5) lets a line start with blanks; CRLF and control bytes of other lines stay */
	identity_hosts(" 127.0.0.1 localhost\r\n\t127.0.1.1\told\r\n10.0.0.1 \033x\r\n", "x", &b);
	ck_assert_str_eq(b.p, " 127.0.0.1 localhost\r\n127.0.1.1\tx\n10.0.0.1 \033x\r\n");
	buf_release(&b);
}
END_TEST

Suite *identity_suite(void)
{
	Suite *s = suite_create("identity");
	TCase *tc = tcase_create("identity");

	tcase_add_test(tc, fstab);
	tcase_add_test(tc, hosts);
	suite_add_tcase(s, tc);
	return s;
}
