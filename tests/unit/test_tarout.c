/*
 * The tar writer read back with libarchive: sorted "./" names, numeric owners, clamped mtimes,
 * hard links to the sorted-first name, symlinks, devices, xattrs, sparse maps; no sockets.
 */
#include <archive.h>
#include <archive_entry.h>

#include "image/sink.h"
#include "image/tarout.h"
#include "image_fixture.h"
#include "lib/err.h"

static struct fixture fx;
static char tar[] = "tar";

static void teardown(void)
{
	fx_teardown(&fx);
}

/* The fixture written as a tar archive into fx.out. */
static void write_tar(void)
{
	struct sink k;

	fx_setup(&fx, "tarout", tar);
	fx_tree(&fx);
	sink_init_file(&k, fx.out);
	ck_assert_int_eq(tarout_write(&fx.t, &fx.p, &k), 0);
	ck_assert_int_eq(sink_commit(&k), 0);
	sink_release(&k);
}

static struct archive *open_tar(void)
{
	struct archive *a = archive_read_new();

	archive_read_support_format_tar(a);
	ck_assert_int_eq(archive_read_open_filename(a, fx.out, 10240), ARCHIVE_OK);
	return a;
}

START_TEST(entries_in_order)
{
	static const char *const names[] = { "./", "./etc/", "./etc/data", "./etc/data2",
		"./etc/fifo", "./etc/link", "./var/", "./var/big", "./var/null", "./var/sparse" };
	struct archive_entry *ae;
	struct archive *a;
	size_t n = 0;

	write_tar();
	a = open_tar();
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		ck_assert_uint_lt(n, sizeof(names) / sizeof(*names));
		ck_assert_str_eq(archive_entry_pathname(ae), names[n]);
		n++;
	}
	ck_assert_uint_eq(n, sizeof(names) / sizeof(*names)); /* the socket is left out */
	archive_read_free(a);
}
END_TEST

/* The entry called `name`, with `a` left at it. */
static struct archive_entry *find(struct archive *a, const char *name)
{
	struct archive_entry *ae;

	while (archive_read_next_header(a, &ae) == ARCHIVE_OK)
		if (!strcmp(archive_entry_pathname(ae), name))
			return ae;
	ck_abort_msg("no entry '%s'", name);
	return NULL;
}

START_TEST(metadata)
{
	const char *xname;
	const void *xval;
	size_t xlen;
	struct archive *a;
	struct archive_entry *ae;

	write_tar();
	a = open_tar();
	ae = find(a, "./etc/"); /* libarchive ends a directory's name with a slash */
	ck_assert_uint_eq(archive_entry_uid(ae), 7);
	ck_assert_int_eq(archive_entry_mtime(ae), 50);
	ae = find(a, "./etc/data");
	ck_assert_uint_eq(archive_entry_mode(ae), AE_IFREG | 0640);
	ck_assert_uint_eq(archive_entry_uid(ae), 1000);
	xname = archive_entry_uname(ae); /* numeric owners only */
	ck_assert(!xname || !*xname);
	/* pax records it twice (SCHILY. and LIBARCHIVE.); the reader returns each */
	ck_assert_int_ge(archive_entry_xattr_reset(ae), 1);
	while (archive_entry_xattr_next(ae, &xname, &xval, &xlen) == ARCHIVE_OK) {
		ck_assert_str_eq(xname, "user.k");
		ck_assert_uint_eq(xlen, 2);
		ck_assert_int_eq(memcmp(xval, "v1", 2), 0);
	}
	ae = find(a, "./etc/data2");
	ck_assert_str_eq(archive_entry_hardlink(ae), "./etc/data");
	ck_assert_int_eq(archive_entry_size(ae), 0);
	ae = find(a, "./etc/link");
	ck_assert_str_eq(archive_entry_symlink(ae), "data");
	ae = find(a, "./var/big");
	ck_assert_uint_eq(archive_entry_filetype(ae), AE_IFBLK);
	ck_assert_uint_eq(archive_entry_rdevmajor(ae), 259);
	ck_assert_uint_eq(archive_entry_rdevminor(ae), 70000);
	ae = find(a, "./var/sparse");
	ck_assert_int_eq(archive_entry_mtime(ae), FX_SDE); /* clamped */
	ck_assert_int_eq(archive_entry_size(ae), 4 * FX_BS + 100);
	archive_read_free(a);
}
END_TEST

/* Holes stay holes: the archive carries the data runs only, and reads back whole. */
START_TEST(sparse_data)
{
	struct archive *a;
	struct stat st;
	char buf[4 * FX_BS + 100];
	size_t i;

	write_tar();
	ck_assert_int_eq(stat(fx.out, &st), 0);
	ck_assert_int_lt(st.st_size, 10000 + 5 * FX_BS); /* etc/data, 2 data runs, headers */
	a = open_tar();
	find(a, "./var/sparse");
	ck_assert_int_eq(archive_read_data(a, buf, sizeof(buf)), (la_ssize_t)sizeof(buf));
	for (i = 0; i < sizeof(buf); i++)
		ck_assert_int_eq(buf[i], i < FX_BS ? 'a' : i < 4 * FX_BS ? 0 : 'b');
	archive_read_free(a);
}
END_TEST

/* Same tree, same bytes; a whole file is never padded past the end-of-archive blocks. */
START_TEST(deterministic)
{
	char *first;
	struct stat st;

	write_tar();
	first = xasprintf("%s/first", fx.top);
	ck_assert_int_eq(rename(fx.out, first), 0);
	ck_assert_int_eq(image_write(&fx.st, &fx.p), 0);
	ck_assert(fx_same(first, fx.out));
	ck_assert_int_eq(stat(fx.out, &st), 0);
	ck_assert_int_eq(st.st_size % 512, 0);
	ck_assert_int_ne(st.st_size % 10240, 0);
	free(first);
}
END_TEST

/*
 * Unpacked as a new directory: whole, or (a device node without root) not at all, nothing of
 * its temporary left; a directory that exists is never written into.
 */
START_TEST(extract)
{
	char *dir, *p, link[64];
	struct stat st;
	ssize_t n;

	write_tar();
	dir = xasprintf("%s/x", fx.top);
	if (geteuid()) {
		ck_assert_int_eq(tarout_extract(fx.out, dir), -MKI_E_IMAGE); /* var/null */
		ck_assert_int_ne(stat(dir, &st), 0);
	} else {
		ck_assert_int_eq(tarout_extract(fx.out, dir), 0);
		p = xasprintf("%s/etc/link", dir);
		n = readlink(p, link, sizeof(link) - 1);
		ck_assert_int_gt(n, 0);
		free(p);
		p = xasprintf("%s/etc/data", dir);
		ck_assert_int_eq(stat(p, &st), 0);
		ck_assert(S_ISREG(st.st_mode));
		ck_assert_int_eq(st.st_size, 10000);
		ck_assert_uint_eq(st.st_mode & 07777, 0640);
		ck_assert_uint_eq(st.st_nlink, 2); /* etc/data2 */
		free(p);
		ck_assert_int_eq(tarout_extract(fx.out, dir), -MKI_E_IMAGE); /* it exists now */
	}
	p = xasprintf("%s.tmp-%d", dir, (int)getpid());
	ck_assert_int_ne(stat(p, &st), 0);
	free(p);
	free(dir);
}
END_TEST

Suite *tarout_suite(void)
{
	Suite *s = suite_create("tarout");
	TCase *tc = tcase_create("tarout");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, entries_in_order);
	tcase_add_test(tc, metadata);
	tcase_add_test(tc, sparse_data);
	tcase_add_test(tc, deterministic);
	tcase_add_test(tc, extract);
	suite_add_tcase(s, tc);
	return s;
}
