#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/settings.h"
#include "lib/str.h"
#include "repo/indexes.h"
#include "repo/indexes_ctx.h"

static const char signed_msg[] = "-----BEGIN PGP SIGNED MESSAGE-----\n"
				 "Hash: SHA256\n"
				 "\n"
				 "Origin: Debian\n"
				 "- -----dash escaped\n"
				 "Suite: bookworm\n"
				 "-----BEGIN PGP SIGNATURE-----\n"
				 "\n"
				 "iQ==\n"
				 "-----END PGP SIGNATURE-----\n";

START_TEST(signed_text_extracted)
{
	struct buf b = { 0 };

	ck_assert_int_eq(indexes_signed_text(signed_msg, strlen(signed_msg), &b), 0);
	ck_assert_str_eq(b.p, "Origin: Debian\n-----dash escaped\nSuite: bookworm\n");
	buf_release(&b);
}
END_TEST

START_TEST(signed_text_refuses_outside_data)
{
	struct buf b = { 0 }, msg = { 0 };

	buf_adds(&msg, "Suite: evil\n");
	buf_adds(&msg, signed_msg);
	ck_assert_int_eq(indexes_signed_text(msg.p, msg.len, &b), -MKI_E_PARSE);
	msg.len = 0;
	buf_adds(&msg, signed_msg);
	buf_adds(&msg, "Suite: evil\n");
	ck_assert_int_eq(indexes_signed_text(msg.p, msg.len, &b), -MKI_E_PARSE);
	/* A bare dash line inside the signed part is not valid dash-escaping. */
	msg.len = 0;
	buf_adds(&msg, "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n-x\n"
		       "-----BEGIN PGP SIGNATURE-----\n-----END PGP SIGNATURE-----\n");
	ck_assert_int_eq(indexes_signed_text(msg.p, msg.len, &b), -MKI_E_PARSE);
	/* Unterminated signature. */
	ck_assert_int_eq(indexes_signed_text(signed_msg, strlen(signed_msg) - 28, &b), -MKI_E_PARSE);
	buf_release(&b);
	buf_release(&msg);
}
END_TEST

START_TEST(dates)
{
	int64_t t;

	ck_assert_int_eq(indexes_parse_date("Sat, 10 Jun 2023 08:46:48 UTC", &t), 0);
	ck_assert_int_eq(t, 1686386808);
	ck_assert_int_eq(indexes_parse_date("Sat, 10 Jun 2023 10:46:48 +0200", &t), 0);
	ck_assert_int_eq(t, 1686386808);
	ck_assert_int_eq(indexes_parse_date("Sat, 10 Jun 2023 08:46:48", &t), 0);
	ck_assert_int_eq(t, 1686386808);
	ck_assert_int_eq(indexes_parse_date("yesterday", &t), -MKI_E_PARSE);
	ck_assert_int_eq(indexes_parse_date("Sat, 10 Jun 2023 08:46:48 CEST", &t), -MKI_E_PARSE);
}
END_TEST

static const char release_text[] =
	"Origin: Debian\n"
	"Suite: stable\n"
	"Codename: bookworm\n"
	"Date: Sat, 10 Jun 2023 08:46:48 UTC\n"
	"Acquire-By-Hash: yes\n"
	"Architectures: all amd64  armhf\n"
	"Components: main updates/contrib\n"
	"No-Support-for-Architecture-all: Packages\n"
	"MD5Sum:\n"
	" 0123 12 main/binary-armhf/Packages\n"
	"SHA256:\n"
	" 5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef 1234 "
	"main/binary-armhf/Packages.xz\n"
	" e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 0 "
	"main/binary-armhf/Packages\n";

/* The fields the stage reads, the SHA256 list only (not MD5Sum), words split. */
START_TEST(release_fields_and_sha256_list)
{
	struct release_info ri = { 0 };
	const struct rel_entry *e;
	int line = 0;

	ck_assert_int_eq(indexes_parse_release(release_text, &ri, &line), 0);
	ck_assert_str_eq(ri.suite, "stable");
	ck_assert_str_eq(ri.codename, "bookworm");
	ck_assert_str_eq(ri.date, "Sat, 10 Jun 2023 08:46:48 UTC");
	ck_assert_ptr_null(ri.valid_until);
	ck_assert_int_eq(ri.by_hash, 1);
	ck_assert_int_eq(ri.no_all, 1);
	ck_assert_uint_eq(ri.archs.n, 3);
	ck_assert_str_eq(ri.archs.v[2], "armhf");
	ck_assert_uint_eq(ri.comps.n, 2);
	ck_assert_str_eq(ri.comps.v[1], "updates/contrib");
	ck_assert_uint_eq(ri.n, 2);
	e = indexes_rel_find(&ri, "main/binary-armhf/Packages.xz");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->size, 1234);
	ck_assert_str_eq(e->sha256,
			 "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef");
	ck_assert_ptr_null(indexes_rel_find(&ri, "main/binary-armel/Packages.xz"));
	indexes_info_release(&ri);
}
END_TEST

/* A second stanza, a line without a colon or a bad SHA256 entry: refused with its line. */
START_TEST(release_refuses_malformed_lines)
{
	static const struct { const char *text; int line; } bad[] = {
		{ "Suite: a\n\nSuite: b\n", 2 },
		{ "Suite: a\nno colon here\n", 2 },
		{ "SHA256:\n nothex 12 main/x\n", 2 },
		{ "SHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 x "
		  "main/x\n", 2 },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct release_info ri = { 0 };
		int line = 0;

		ck_assert_int_eq(indexes_parse_release(bad[i].text, &ri, &line), -MKI_E_PARSE);
		ck_assert_int_eq(line, bad[i].line);
		indexes_info_release(&ri);
	}
}
END_TEST

static int no_download(struct fetch_item *items, size_t n, const struct settings *st,
		       const char *step, struct fetch_stats *stats)
{
	ck_abort_msg("nothing may be downloaded");
	return 0;
}

/*
 * The work directory cannot be made: the stage returns mkdir's own error, not the ENOTTY that
 * logging to a non-terminal stderr used to leave in errno.
 */
START_TEST(unwritable_work_dir_gives_its_errno)
{
	char uri[] = "http://127.0.0.1:9", suite[] = "bookworm", origin[] = "test";
	char cache[] = "/nonexistent-mki/cache", work[] = "/nonexistent-mki/work", arch[] = "armhf";
	struct source src = { .uri = uri, .suite = suite, .trusted = 1, .origin = origin };
	struct sources s = { .v = &src, .n = 1 };
	struct recipe r = { .arch = arch };
	struct settings st = { .cache_dir = cache, .work_dir = work };
	struct indexes ix;
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	ck_assert_int_eq(indexes_fetch(&ix, &s, &r, &st, no_download), -ENOENT);
	close(fd);
}
END_TEST

Suite *indexes_suite(void)
{
	Suite *s = suite_create("indexes");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, signed_text_extracted);
	tcase_add_test(tc, signed_text_refuses_outside_data);
	tcase_add_test(tc, dates);
	tcase_add_test(tc, release_fields_and_sha256_list);
	tcase_add_test(tc, release_refuses_malformed_lines);
	tcase_add_test(tc, unwritable_work_dir_gives_its_errno);
	suite_add_tcase(s, tc);
	return s;
}
