/* A layer's file written from a real tree and checked: size, trailer, format version, digest. */
#include <sys/socket.h>
#include <sys/un.h>

#include "layer_fixture.h"
#include "layer/layerfile_fmt.h"

static void quiet(void)
{
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	close(fd);
}

/* The trailer closes the file and accounts for every byte before it. */
START_TEST(written_and_checked)
{
	char dir[] = "/tmp/mki-layer-XXXXXX";
	char *file = make_layer(dir);
	struct layer_trailer tr;
	struct stat sb;
	uint64_t size;
	int fd = open(file, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(layerfile_check(fd, file), 0);
	ck_assert_int_eq(layerfile_read_trailer(fd, file, &tr, &size), 0);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	ck_assert_uint_eq(size, (uint64_t)sb.st_size);
	ck_assert_uint_eq(tr.version, LAYERFILE_VERSION);
	ck_assert_uint_eq(tr.data_len + tr.meta_len + sizeof(tr), size);
	ck_assert_uint_ge(tr.data_len, 10000 + 4 + 2); /* prog once (a hard link), sparse's data */
	close(fd);
	remove_dir(dir);
	free(file);
}
END_TEST

/* One flipped bit, or a file cut short anywhere: -EBADMSG; put back, it checks again. */
START_TEST(corrupt_and_truncated_are_refused)
{
	char dir[] = "/tmp/mki-layer-XXXXXX";
	char *file = make_layer(dir);
	struct stat sb;
	int fd;

	quiet();
	ck_assert_int_eq(stat(file, &sb), 0);
	flip(file, 100);
	ck_assert_int_eq(check_file(file), -EBADMSG);
	flip(file, 100);
	ck_assert_int_eq(check_file(file), 0);
	flip(file, sb.st_size - sizeof(struct layer_trailer) - 1); /* the last record byte */
	ck_assert_int_eq(check_file(file), -EBADMSG);
	flip(file, sb.st_size - sizeof(struct layer_trailer) - 1);
	fd = open(file, O_RDWR);
	ck_assert_int_eq(ftruncate(fd, sb.st_size - 1), 0);
	ck_assert_int_eq(check_file(file), -EBADMSG);
	ck_assert_int_eq(ftruncate(fd, sb.st_size / 2), 0);
	ck_assert_int_eq(check_file(file), -EBADMSG);
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	ck_assert_int_eq(check_file(file), -EBADMSG);
	close(fd);
	remove_dir(dir);
	free(file);
}
END_TEST

/* Another format version is -EPROTO (not corrupt: another mkimage wrote it); no magic, -EBADMSG. */
START_TEST(trailer_refused)
{
	char dir[] = "/tmp/mki-layer-XXXXXX";
	char *file = make_layer(dir);
	struct layer_trailer tr;
	struct stat sb;
	off_t at;
	int fd = open(file, O_RDWR);

	quiet();
	ck_assert_int_eq(fstat(fd, &sb), 0);
	at = sb.st_size - (off_t)sizeof(tr);
	ck_assert_int_eq(pread(fd, &tr, sizeof(tr), at), (ssize_t)sizeof(tr));
	tr.version++;
	ck_assert_int_eq(pwrite(fd, &tr, sizeof(tr), at), (ssize_t)sizeof(tr));
	ck_assert_int_eq(layerfile_check(fd, file), -EPROTO);
	tr.version--;
	tr.magic[0] ^= 1;
	ck_assert_int_eq(pwrite(fd, &tr, sizeof(tr), at), (ssize_t)sizeof(tr));
	ck_assert_int_eq(layerfile_check(fd, file), -EBADMSG);
	tr.magic[0] ^= 1;
	tr.data_len++;
	ck_assert_int_eq(pwrite(fd, &tr, sizeof(tr), at), (ssize_t)sizeof(tr));
	ck_assert_int_eq(layerfile_check(fd, file), -EBADMSG);
	close(fd);
	remove_dir(dir);
	free(file);
}
END_TEST

/* A tree holding a socket cannot be stored: -EOPNOTSUPP, said at info level. */
START_TEST(socket_not_stored)
{
	char dir[] = "/tmp/mki-layer-XXXXXX";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct staging s = { 0 };
	char *src, *file;
	int sock;

	quiet();
	ck_assert_ptr_nonnull(mkdtemp(dir));
	src = xasprintf("%s/src", dir);
	file = xasprintf("%s/layer", dir);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", src);
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	manifest_init(&s.manifest);
	ck_assert_int_eq(write_layer(src, file, &s), -EOPNOTSUPP);
	close(sock);
	manifest_release(&s.manifest);
	remove_dir(dir);
	free(src);
	free(file);
}
END_TEST

/* A tree past staging-entries is not stored (the build refuses it later): -EOPNOTSUPP. */
START_TEST(too_many_entries_not_stored)
{
	char dir[] = "/tmp/mki-layer-XXXXXX";
	struct staging s = { 0 };
	char *src, *file;
	int rootfd, fd;

	quiet();
	ck_assert_ptr_nonnull(mkdtemp(dir));
	src = xasprintf("%s/src", dir);
	file = xasprintf("%s/layer", dir);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	make_tree(src); /* 14 entries, the root included */
	manifest_init(&s.manifest);
	rootfd = open(src, O_PATH | O_DIRECTORY);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_eq(layerfile_write(fd, rootfd, &s, "", NULL, 13), -EOPNOTSUPP);
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	ck_assert_int_eq(layerfile_write(fd, rootfd, &s, "", NULL, 14), 0);
	close(fd);
	close(rootfd);
	manifest_release(&s.manifest);
	remove_dir(dir);
	free(src);
	free(file);
}
END_TEST

/* An empty tree is a layer too. */
START_TEST(empty_tree)
{
	char dir[] = "/tmp/mki-layer-XXXXXX";
	struct staging s = { 0 };
	char *src, *file;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	src = xasprintf("%s/src", dir);
	file = xasprintf("%s/layer", dir);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	manifest_init(&s.manifest);
	ck_assert_int_eq(write_layer(src, file, &s), 0);
	ck_assert_int_eq(check_file(file), 0);
	ck_assert_int_eq(restore_into(dir, file, "dst"), 0);
	manifest_release(&s.manifest);
	remove_dir(dir);
	free(src);
	free(file);
}
END_TEST

Suite *layerfile_suite(void)
{
	Suite *s = suite_create("layerfile");
	TCase *tc = tcase_create("layerfile");

	tcase_add_test(tc, written_and_checked);
	tcase_add_test(tc, corrupt_and_truncated_are_refused);
	tcase_add_test(tc, trailer_refused);
	tcase_add_test(tc, socket_not_stored);
	tcase_add_test(tc, empty_tree);
	tcase_add_test(tc, too_many_entries_not_stored);
	suite_add_tcase(s, tc);
	return s;
}
