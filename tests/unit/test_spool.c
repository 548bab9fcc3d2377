#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "tree/spool.h"

/* put DIR/NAME with `len` bytes of `data`; returns an fd open for reading on it */
static int put(const char *dir, const char *name, const char *data, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fsutil_write_all(fd, data, len), 0);
	return fd;
}

START_TEST(same_means_every_byte_and_the_length)
{
	char work[] = "/tmp/mki-spool-XXXXXX", spool[128];
	size_t big = (3u << 17) + 5; /* over two of the comparison's chunks */
	char *a = malloc(big), *b = malloc(big);
	int dirfd, fd;

	memset(a, 'x', big);
	memcpy(b, a, big);
	ck_assert_ptr_nonnull(mkdtemp(work));
	ck_assert_int_eq(spool_open(work, &dirfd), 0);
	snprintf(spool, sizeof(spool), "%s/%s", work, SPOOL_DIR);
	close(put(spool, "s", a, big));

	fd = put(work, "same", b, big);
	ck_assert_int_eq(spool_same(dirfd, "s", fd, big), 1);
	close(fd);
	b[big - 1] = 'y'; /* the last byte of the last chunk */
	fd = put(work, "last", b, big);
	ck_assert_int_eq(spool_same(dirfd, "s", fd, big), 0);
	close(fd);
	fd = put(work, "shorter", a, big - 1);
	ck_assert_int_eq(spool_same(dirfd, "s", fd, big), 0);
	close(fd);
	fd = put(work, "longer", a, big);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	ck_assert_int_eq(spool_same(dirfd, "s", fd, big), 0);
	close(fd);
	fd = put(work, "exact-chunk", a, 1u << 17); /* a file ending on a chunk boundary */
	close(put(spool, "c", a, 1u << 17));
	ck_assert_int_eq(spool_same(dirfd, "c", fd, 1u << 17), 1);
	ck_assert_int_eq(spool_same(dirfd, "s", fd, 1u << 17), 0); /* the spooled one is longer */
	close(fd);
	fd = put(work, "empty", "", 0);
	close(put(spool, "e", "", 0));
	ck_assert_int_eq(spool_same(dirfd, "e", fd, 0), 1);
	ck_assert_int_eq(spool_same(dirfd, "missing", fd, 0), 0);
	close(fd);

	spool_close(work, dirfd);
	ck_assert_int_ne(access(spool, F_OK), 0); /* removed, with what was left in it */
	ck_assert_int_eq(fsutil_remove_tree(work), 0);
	free(a);
	free(b);
}
END_TEST

START_TEST(open_refuses_an_existing_spool)
{
	char work[] = "/tmp/mki-spool-XXXXXX", spool[128];
	int dirfd = 0;

	ck_assert_ptr_nonnull(mkdtemp(work));
	snprintf(spool, sizeof(spool), "%s/%s", work, SPOOL_DIR);
	ck_assert_int_eq(mkdir(spool, 0700), 0);
	ck_assert_int_lt(spool_open(work, &dirfd), 0);
	ck_assert_int_eq(dirfd, -1);
	spool_close(work, dirfd); /* nothing to do */
	ck_assert_int_eq(access(spool, F_OK), 0);
	ck_assert_int_eq(fsutil_remove_tree(work), 0);
}
END_TEST

Suite *spool_suite(void)
{
	Suite *s = suite_create("spool");
	TCase *tc = tcase_create("spool");

	tcase_add_test(tc, same_means_every_byte_and_the_length);
	tcase_add_test(tc, open_refuses_an_existing_spool);
	suite_add_tcase(s, tc);
	return s;
}
